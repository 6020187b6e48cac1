package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

// started is a running etcdperf binary.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	exited         chan struct{}
	code           int
}

// startBin starts the binary with args in dir and returns at once.
func startBin(t *testing.T, dir string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(binPath, args...), exited: make(chan struct{})}
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.exited)
		if err := s.cmd.Wait(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				s.code = ee.ExitCode()
			} else {
				s.code = -1
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// wait waits at most d for the process to exit and says whether it did.
func (s *started) wait(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// waitFor polls cond every 20 ms for up to 30 s; the process must not exit meanwhile.
func (s *started) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		select {
		case <-s.exited:
			t.Fatalf("exited (%d) before %s: %s", s.code, what, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s: %s", what, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkRunDir checks the results dir of an interrupted run: one run file that
// parses and says it was interrupted, and no temp file beside it.
func checkRunDir(t *testing.T, dir string) *results.Run {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || strings.HasPrefix(entries[0].Name(), ".") {
		t.Fatalf("results dir holds %v; want one run file", entries)
	}
	run, err := results.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if !run.Interrupted {
		t.Error("the run file does not say it was interrupted")
	}
	return run
}

// TestSignalsDuringLoad interrupts every load command mid-run with SIGINT or
// SIGTERM: partial results are written, the keys deleted, and the exit code is 130.
func TestSignalsDuringLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs")
	}
	ep, cli := benchEtcd(t)
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		prefix string
		args   []string
	}{
		{"bench put SIGINT", syscall.SIGINT, "/etcdperf/", []string{"bench", "put", "--rate", "200", "--key-space-size", "100"}},
		{"bench put SIGTERM closed loop", syscall.SIGTERM, "/etcdperf/", []string{"bench", "put", "--key-space-size", "100", "--clients", "4"}},
		{"bench range SIGTERM", syscall.SIGTERM, "/etcdperf/", []string{"bench", "range", "--keys", "500", "--range-width", "10", "--rate", "200"}},
		{"bench watch SIGINT", syscall.SIGINT, "/etcdperf/", []string{"bench", "watch", "--watchers", "20", "--streams", "2", "--watched-keys", "4", "--rate", "100"}},
		{"bench mixed SIGINT", syscall.SIGINT, "/etcdperf/", []string{"bench", "mixed", "--key-space-size", "200", "--watchers", "4", "--rate", "200"}},
		{"check SIGINT", syscall.SIGINT, "/etcdperf/check/", []string{"check", "--load", "s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := t.TempDir()
			s := startBin(t, t.TempDir(), append(tc.args, "--endpoints", ep, "--duration", "1m", "--results-dir", runs)...)
			s.waitFor(t, "keys under "+tc.prefix, func() bool { return prefixKeys(t, cli, tc.prefix) > 0 })
			time.Sleep(500 * time.Millisecond) // into the measured window
			if err := s.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if !s.wait(20 * time.Second) {
				t.Fatalf("still running 20 s after %v", tc.sig)
			}
			if s.code != ExitInterrupted {
				t.Fatalf("exit %d, want %d: %s", s.code, ExitInterrupted, s.stderr.String())
			}
			if lines := strings.Split(strings.TrimSpace(s.stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "interrupted") {
				t.Errorf("stderr %q: want one line saying it was interrupted", s.stderr.String())
			}
			run := checkRunDir(t, runs)
			var reqs int64
			for _, op := range run.Ops {
				reqs += op.Requests
			}
			if reqs == 0 {
				t.Errorf("no partial results in the run file: %+v", run.Ops)
			}
			if n := prefixKeys(t, cli, "/etcdperf/"); n != 0 {
				t.Errorf("%d keys left under /etcdperf/", n)
			}
			checkUntouched(t, cli)
		})
	}
}

// TestSignalsInspectAndDisk interrupts the commands that do not load the cluster.
func TestSignalsInspectAndDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs")
	}
	t.Run("inspect", func(t *testing.T) {
		ep, cli := benchEtcd(t)
		for i := range 50 {
			if _, err := cli.Put(context.Background(), "/data/"+string(rune('a'+i%26))+time.Now().String(), "v"); err != nil {
				t.Fatal(err)
			}
		}
		// One key a second: the scan takes about a minute.
		s := startBin(t, t.TempDir(), "inspect", "--endpoints", ep, "--max-rps", "1", "--page-size", "1")
		time.Sleep(1500 * time.Millisecond)
		start := time.Now()
		if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if !s.wait(10 * time.Second) {
			t.Fatal("still running 10 s after SIGINT")
		}
		t.Logf("exited %v after SIGINT: %s", time.Since(start), s.stderr.String())
		if s.code != ExitInterrupted {
			t.Errorf("exit %d, want %d: %s", s.code, ExitInterrupted, s.stderr.String())
		}
		if lines := strings.Split(strings.TrimSpace(s.stderr.String()), "\n"); len(lines) != 1 {
			t.Errorf("stderr %q: want one line", s.stderr.String())
		}
		checkUntouched(t, cli)
	})
	t.Run("disk SIGTERM", func(t *testing.T) {
		dir, runs := t.TempDir(), t.TempDir()
		s := startBin(t, dir, "disk", "--dir", dir, "--size", "1g", "--pattern", "etcd", "--allow-tmpfs", "--results-dir", runs)
		s.waitFor(t, "probe folder", func() bool { e, _ := os.ReadDir(dir); return len(e) > 0 })
		time.Sleep(300 * time.Millisecond)
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if !s.wait(10 * time.Second) {
			t.Fatal("still running 10 s after SIGTERM")
		}
		if s.code != ExitInterrupted {
			t.Errorf("exit %d, want %d: %s", s.code, ExitInterrupted, s.stderr.String())
		}
		if e, _ := os.ReadDir(dir); len(e) != 0 {
			t.Errorf("the probe left %v", e)
		}
		if run := checkRunDir(t, runs); len(run.Disk) != 1 {
			t.Errorf("run file holds %d disk results", len(run.Disk))
		}
	})
}

// TestSecondSignalAborts stalls the server so the first Ctrl-C's clean-up hangs;
// the second must end etcdperf at once with exit 130.
func TestSecondSignalAborts(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	c := clustertest.Start(t, cluster.Config{Processes: true, TickMs: 10, ElectionMs: 100})
	m := c.Members()[0]
	cli := clustertest.Client(t, c)
	runs := t.TempDir()
	s := startBin(t, t.TempDir(), "bench", "put", "--endpoints", c.Endpoints()[0], "--rate", "100", "--duration", "1m", "--results-dir", runs)
	s.waitFor(t, "keys under /etcdperf/", func() bool { return prefixKeys(t, cli, "/etcdperf/") > 0 })
	if err := m.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Signal(syscall.SIGCONT) })
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if s.wait(time.Second) {
		t.Fatalf("exited (%d) at once against a stalled server: the first signal must try to clean up: %s", s.code, s.stderr.String())
	}
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !s.wait(2 * time.Second) {
		t.Fatal("still running 2 s after the second SIGINT")
	}
	t.Logf("exited %v after the second signal: %s", time.Since(start), s.stderr.String())
	if s.code != ExitInterrupted {
		t.Errorf("exit %d, want %d", s.code, ExitInterrupted)
	}
	if !strings.Contains(s.stderr.String(), "aborted") {
		t.Errorf("stderr %q does not say it aborted", s.stderr.String())
	}
	// An abort leaves no temp file where the run file would go.
	if e, _ := os.ReadDir(runs); len(e) != 0 {
		t.Errorf("results dir holds %v after an abort", e)
	}
}
