package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
)

// binPath is the etcdperf binary built once for the end-to-end tests of this package.
var binPath string

// TestMain builds the real binary, so e2e tests exercise exactly what users run,
// and lets this test binary act as an etcd member when re-executed by cluster.Start.
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	dir, err := os.MkdirTemp("", "etcdperf-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binPath = filepath.Join(dir, "etcdperf")
	out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build etcdperf: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the built binary with args in a temp working dir (so run files land there)
// and env added to the environment.
func runBin(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runBinStdin(t, nil, env, args...)
}

// runBinIn runs the built binary in dir, with nothing on stdin.
func runBinIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

// runBinStdin is runBin with stdin as the binary's standard input.
func runBinStdin(t *testing.T, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = stdin
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

// assertCleanError checks the contract for bad input: exit 2, one line on stderr, no stack trace.
func assertCleanError(t *testing.T, r result) {
	t.Helper()
	if r.code != ExitError {
		t.Errorf("exit code %d, want %d; stderr: %s", r.code, ExitError, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "etcdperf: ") {
		t.Errorf("stderr must be one line starting with 'etcdperf: ', got %q", r.stderr)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Errorf("stack trace on stderr: %s", r.stderr)
	}
}
