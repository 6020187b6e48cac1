package k8s

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Worker is what a worker pod runs in place of a shell script (the image has no
// shell): etcdperf with the worker's args as a child, whose outcome it turns into
// what the Job needs. A worker that wrote its run file succeeded, whatever its own
// verdict: merge judges the whole load, and a failed pod would make the Job stop
// the others. With stdout results the pod's log must hold the run file alone
// (kubectl logs mixes both streams), so the child's output is shown only when it
// wrote no run file.
type Worker struct {
	Exe     string   // the etcdperf binary (default: this process's)
	Args    []string // the worker's args, --run-file among them
	Results string   // ResultsStdout or ResultsPVC
}

// RunFile is the --run-file the args give.
func (w Worker) RunFile() (string, error) {
	for i, a := range w.Args {
		if v, ok := strings.CutPrefix(a, "--run-file="); ok {
			return v, nil
		}
		if a == "--run-file" && i+1 < len(w.Args) {
			return w.Args[i+1], nil
		}
	}
	return "", errors.New("k8s worker: no --run-file among the args")
}

// Run runs the child and returns the pod's exit code.
func (w Worker) Run(ctx context.Context, stdout, stderr io.Writer) (int, error) {
	runFile, err := w.RunFile()
	if err != nil {
		return 2, err
	}
	if w.Results != ResultsStdout && w.Results != ResultsPVC {
		return 2, fmt.Errorf("k8s worker: --results %q: want %s or %s", w.Results, ResultsStdout, ResultsPVC)
	}
	if w.Exe == "" {
		if w.Exe, err = os.Executable(); err != nil {
			return 2, err
		}
	}
	cmd := exec.CommandContext(ctx, w.Exe, w.Args...)
	var out bytes.Buffer
	if w.Results == ResultsStdout {
		cmd.Stdout, cmd.Stderr = &out, &out
	} else {
		cmd.Stdout, cmd.Stderr = stdout, stderr
	}
	runErr := cmd.Run()
	code := 0
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return 2, fmt.Errorf("k8s worker: %w", runErr)
		}
		code = ee.ExitCode()
	}
	if fi, err := os.Stat(runFile); err == nil && fi.Size() > 0 {
		if w.Results == ResultsStdout {
			f, err := os.Open(runFile)
			if err != nil {
				return 2, fmt.Errorf("k8s worker: %w", err)
			}
			defer f.Close()
			if _, err := io.Copy(stdout, f); err != nil {
				return 2, fmt.Errorf("k8s worker: print %s: %w", runFile, err)
			}
		}
		return 0, nil
	}
	if w.Results == ResultsStdout {
		_, _ = out.WriteTo(stderr)
	}
	if code == 0 {
		// Ran, yet wrote no run file: not a worker the merge can use.
		code = 2
	}
	return code, nil
}
