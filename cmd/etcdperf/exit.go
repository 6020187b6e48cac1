package main

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, documented in README.md; CI jobs gate on them.
const (
	ExitOK          = 0   // ran and passed
	ExitFail        = 1   // ran and the verdict is fail
	ExitError       = 2   // could not run: bad input, unreachable cluster, I/O error
	ExitInvalid     = 3   // the run is invalid: target rate not reached, generator saturated
	ExitInterrupted = 130 // interrupted: partial results written, keys cleaned up
)

// exitError carries an exit code up to run. A nil err means the message was
// already shown (a verdict printed on stdout), only the code matters.
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

// withCode marks err with an exit code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
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
