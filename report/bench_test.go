package report

import (
	"bytes"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// edgeRun is a run with every special line of bench's output: an invalid,
// interrupted run with unsent requests, requests over the histograms' range,
// error codes, and the watch, txn and list ops' own figures.
func edgeRun(t testing.TB) *results.Run {
	run := sampleRun(t)
	put := run.Ops[0]
	put.TargetRPS, put.LateStarts, put.Unsent, put.OverMaxLatency = 200, 3, 7, 2
	put.Errors, put.ErrorsByCode = 5, map[string]int64{"Unavailable": 3, "DeadlineExceeded": 2}
	watch := results.Op{Op: "watch", Requests: 3000, ThroughputRPS: 300, Events: 3000, Watchers: 3, MissedEvents: 1, OutOfOrder: 0,
		Latency: put.Latency, CreateMs: &results.Summary{P99: 1.5}}
	txn := results.Op{Op: "txn-create", Requests: 100, Conflicts: 4, Latency: put.Latency}
	list := results.Op{Op: "list", Requests: 10, KeysReceived: 5000, BytesReceived: 3 << 20, Latency: put.Latency}
	run.Ops = []results.Op{put, watch, txn, list}
	run.Valid, run.InvalidReason, run.Interrupted, run.WarmupS = false, "sent 150 req/s of 200 target (75%)", true, 1
	run.Client = results.Client{CPUSeconds: 1.5, MaxRSSBytes: 40 << 20, Cores: 2, PacingLagP99Ms: 0.3}
	return run
}

func TestBenchOutput(t *testing.T) {
	fixture := fixtureRun(t)
	// A diagnosis of its own, not the analyzer's: the rule table's text is analyze's to test.
	rep := analyze.Result{Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: "none", Summary: "pass: every signal within its threshold"}}
	for _, c := range []struct {
		name string
		out  Bench
	}{
		{"bench-diagnosed", NewBench(fixture, "results/bench-mixed.json", &rep)},
		{"bench-edge", NewBench(edgeRun(t), "", nil)},
	} {
		for _, format := range []string{"simple", "table", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Print(&buf, format, c.out); err != nil {
					t.Fatal(err)
				}
				golden(t, c.name+"."+format+".golden", buf.Bytes())
			})
		}
	}
}

// TestBenchOps checks the op-specific keys: only a watch op has event counts,
// only a list op keys read, only txn ops conflicts; no ops is an empty list.
func TestBenchOps(t *testing.T) {
	ops := BenchOps(edgeRun(t))
	for _, op := range ops {
		if got, want := op.MissedEvents != nil, op.Op == "watch"; got != want {
			t.Errorf("%s: missed_events set %v, want %v", op.Op, got, want)
		}
		if got, want := op.KeysRead != nil, op.Op == "list"; got != want {
			t.Errorf("%s: keys_read set %v, want %v", op.Op, got, want)
		}
		if got, want := op.Conflicts != nil, op.Op == "txn-create"; got != want {
			t.Errorf("%s: conflicts set %v, want %v", op.Op, got, want)
		}
	}
	if ops := BenchOps(&results.Run{}); ops == nil || len(ops) != 0 {
		t.Errorf("no ops: got %#v, want an empty list", ops)
	}
}
