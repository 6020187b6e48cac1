package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/cli"
)

// TestWorkerFlags: the flags reach bench.Share (whose rules bench tests), and
// start says when the load starts and refuses a bad share with exit 2.
func TestWorkerFlags(t *testing.T) {
	soon := time.Now().Add(time.Minute).Truncate(time.Second)
	var w workerFlags
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	w.register(fs)
	if err := fs.Parse([]string{"--workers=4", "--worker-index=2", "--start-at=" + soon.Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	if want := (bench.Share{StartAt: soon.UTC(), Index: 2, Workers: 4}); w.Share != want {
		t.Fatalf("share %+v, want %+v", w.Share, want)
	}
	prefix := "/etcdperf/"
	if err := w.apply(&prefix); err != nil || prefix != "/etcdperf/w2/" {
		t.Errorf("apply: %v, prefix %q", err, prefix)
	}
	if err := fs.Set("start-at", "tomorrow"); err == nil {
		t.Error("--start-at tomorrow accepted")
	}
	rate := 1000.0
	var log strings.Builder
	if err := w.start(&log, &rate, nil, nil); err != nil || rate != 250 {
		t.Fatalf("start: %v, rate %g", err, rate)
	}
	if !strings.Contains(log.String(), "worker 2 of 4: starting at") {
		t.Errorf("no wait message on stderr: %q", log.String())
	}
	total := uint64(3)
	if err := w.start(io.Discard, nil, &total, nil); cli.Code(err) != ExitError {
		t.Errorf("--total 3 over 4 workers: %v", err)
	}
}
