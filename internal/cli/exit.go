// Package cli is the command line's plumbing that is not about any one command:
// the exit codes and the one exit point's error line, the -w values a command
// honours, the guard of the commands that only group others, the flags a run
// file records, and the developers' CPU profile. cmd/etcdperf wires it.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes, documented in docs/exit-codes.md; CI jobs gate on them.
const (
	ExitOK          = 0   // ran and passed
	ExitFail        = 1   // ran and the verdict is fail
	ExitError       = 2   // could not run: bad input, unreachable cluster, I/O error
	ExitInvalid     = 3   // the run is invalid: target rate not reached, generator saturated
	ExitInterrupted = 130 // interrupted: partial results written, keys cleaned up
)

// exitError carries an exit code up to the exit point. A nil err means the
// message was already shown (a verdict printed on stdout), only the code matters.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// WithCode marks err with an exit code; a nil err exits with code silently.
func WithCode(code int, err error) error { return &exitError{code: code, err: err} }

// Code maps an error to the documented exit codes: its mark, 130 for a
// cancellation, else 2.
func Code(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitError
	}
}

// PrintError writes err as the one line "etcdperf: ..." on w, unless it was
// already shown (WithCode(code, nil)); with debug, the chain of wrapped errors
// follows, innermost last, with their types.
func PrintError(w io.Writer, err error, debug bool) {
	var ee *exitError
	if err == nil || (errors.As(err, &ee) && ee.err == nil) {
		return
	}
	msg := OneLine(err)
	if Code(err) == ExitInterrupted && msg == context.Canceled.Error() {
		msg = "interrupted"
	}
	fmt.Fprintf(w, "etcdperf: %s\n", msg)
	if debug {
		for e := err; e != nil; e = errors.Unwrap(e) {
			fmt.Fprintf(w, "  %T: %v\n", e, e)
		}
	}
}

// OneLine keeps the promise of one line on stderr, whatever a library put in its error.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// SignalContext is a context that the first SIGINT or SIGTERM cancels (stop
// measuring, write partial results, clean up keys); a second one means the user
// wants out now: "etcdperf: aborted" on stderr and exit 130 at once. stop
// releases the signals.
func SignalContext(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel()
		if _, ok := <-sigs; ok {
			fmt.Fprintln(stderr, "etcdperf: aborted")
			os.Exit(ExitInterrupted)
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }
}
