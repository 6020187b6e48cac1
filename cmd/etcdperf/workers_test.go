package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/cli"
)

func TestParseStartAt(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "2027-01-15T08:00:00Z", want: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)},
		{in: "2027-01-15T09:00:00.25+01:00", want: time.Date(2027, 1, 15, 8, 0, 0, 250e6, time.UTC)},
		{in: "1800000000", want: time.Unix(1800000000, 0).UTC()},
		{in: "1800000000.5", want: time.Unix(1800000000, 5e8).UTC()},
		{in: "tomorrow", bad: true},
		{in: "-5", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		got, err := parseStartAt(c.in)
		if c.bad != (err != nil) || !got.Equal(c.want) {
			t.Errorf("parseStartAt(%q) = %s, %v", c.in, got, err)
		}
	}
}

func TestWorkerFlagsApply(t *testing.T) {
	soon := time.Now().Add(time.Minute).Format(time.RFC3339)
	cases := []struct {
		args       []string
		prefix     string
		wantPrefix string
		err        string
	}{
		{args: nil, prefix: "/etcdperf/", wantPrefix: "/etcdperf/"},
		{args: []string{"--workers=4", "--worker-index=2", "--start-at=" + soon}, prefix: "/etcdperf/", wantPrefix: "/etcdperf/w2/"},
		{args: []string{"--workers=2", "--worker-index=1", "--start-at=" + soon}, prefix: "/bench", wantPrefix: "/bench/w1/"},
		{args: []string{"--start-at=" + soon}, prefix: "/p/", wantPrefix: "/p/"},
		{args: []string{"--workers=0"}, err: "--workers must be at least 1"},
		{args: []string{"--workers=4", "--worker-index=4", "--start-at=" + soon}, err: "between 0 and --workers-1 (3)"},
		{args: []string{"--worker-index=-1"}, err: "between 0"},
		{args: []string{"--workers=4", "--worker-index=1"}, err: "needs --start-at"},
		{args: []string{"--start-at=1000000000"}, err: "passed"},
		{args: []string{"--start-at=1800000000000"}, err: "not milliseconds"},
	}
	for _, c := range cases {
		var w workerFlags
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		w.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		prefix := c.prefix
		err := w.apply(&prefix)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want %q", c.args, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.err == "" && prefix != c.wantPrefix:
			t.Errorf("%v: prefix %q, want %q", c.args, prefix, c.wantPrefix)
		}
	}
}

// TestWorkerSplit: the shares add up to the whole, whatever the remainder.
func TestWorkerSplit(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		total   uint64
		workers int
	}{{1000, 10000, 4}, {150, 7, 4}, {8000, 1001, 3}, {0, 0, 5}, {1, 1, 1}} {
		var rate float64
		var total uint64
		for i := range c.workers {
			w := workerFlags{index: i, workers: c.workers}
			r, n := w.split(c.rate, c.total)
			rate += r
			total += n
			if lo := c.total / uint64(c.workers); n != lo && n != lo+1 {
				t.Errorf("%+v worker %d: %d requests, want %d or %d", c, i, n, lo, lo+1)
			}
		}
		if total != c.total || rate < c.rate*(1-1e-12) || rate > c.rate*(1+1e-12) {
			t.Errorf("%+v: shares sum to rate %g, total %d", c, rate, total)
		}
	}
}

func TestWorkerStart(t *testing.T) {
	at := time.Now().Add(300 * time.Millisecond)
	w := workerFlags{startAt: at, index: 1, workers: 4}
	rate, total := 1000.0, uint64(10)
	flags := map[string]string{"rate": "1000", "val-size": "256"}
	var log strings.Builder
	if err := w.start(&log, &rate, &total, flags); err != nil {
		t.Fatal(err)
	}
	// It does not wait: bench waits for --start-at after its fill (TestStartAtAfterSetup).
	if time.Now().After(at) {
		t.Errorf("start waited for --start-at; the wait is bench's, after the setup")
	}
	if rate != 250 || total != 3 {
		t.Errorf("share: rate %g total %d, want 250 and 3", rate, total)
	}
	want := map[string]string{"rate": "250", "total": "3", "workers": "4", "worker-index": "1", "start-at": fmtStart(at), "val-size": "256"}
	for k, v := range want {
		if flags[k] != v {
			t.Errorf("run flag %s = %q, want %q (flags %v)", k, flags[k], v, flags)
		}
	}
	if !strings.Contains(log.String(), "worker 1 of 4: starting at") {
		t.Errorf("no wait message on stderr: %q", log.String())
	}

	// Too few requests to share.
	w.startAt = time.Time{}
	total = 3
	if err := w.start(io.Discard, nil, &total, nil); cli.Code(err) != ExitError {
		t.Errorf("--total 3 over 4 workers: %v", err)
	}
}
