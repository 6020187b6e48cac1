package check

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// putOp is a hand-made put op: n successful requests whose service times are
// lats (ms, repeated to n), at throughput of target req/s.
func putOp(t *testing.T, target, throughput float64, errors int64, latsMs ...float64) results.Op {
	t.Helper()
	h := results.NewHist()
	for i := 0; i < 1000; i++ {
		_ = h.RecordValue(int64(latsMs[i%len(latsMs)] * 1000))
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	s := results.Summarize(h)
	var m results.Moments
	for i := 0; i < 1000; i++ {
		m.Add(time.Duration(latsMs[i%len(latsMs)] * float64(time.Millisecond)))
	}
	return results.Op{Op: "put", Requests: 1000 + errors, Errors: errors, TargetRPS: target, ThroughputRPS: throughput,
		Latency: s, Service: s, ResponseHist: enc, ServiceHist: enc, ServiceOK: &m}
}

// TestCompatExactFigures: etcdctl's slowest and stddev come from the exact
// durations of the successful requests. A true 499.98 ms reads 500.22 ms from the
// histogram (its bucket's top) and failed where etcdctl passes; a slow error is
// not in etcdctl's figures at all.
func TestCompatExactFigures(t *testing.T) {
	lats := make([]float64, 1000)
	for i := range lats {
		lats[i] = 2
	}
	lats[999] = 499.98
	op := putOp(t, 150, 150, 0, lats...)
	if op.Service.Max <= 500 {
		t.Fatalf("test premise: the histogram reads %g ms", op.Service.Max)
	}
	v, err := Compat(&results.Run{Ops: []results.Op{op}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != "pass" || v.SlowestMs != 499.98 {
		t.Errorf("status %s, slowest %g ms (%v), want pass at exactly 499.98", v.Status, v.SlowestMs, v.Failures)
	}
	// Population stddev of 999 × 2 ms and one 499.98 ms.
	mean := (999*2 + 499.98) / 1000.0
	want := math.Sqrt((999*(2-mean)*(2-mean) + (499.98-mean)*(499.98-mean)) / 1000)
	if math.Abs(v.StddevMs-want) > 1e-9 {
		t.Errorf("stddev %.9f ms, want %.9f", v.StddevMs, want)
	}
	// Two workers' ops merge exactly: the same figures from two halves.
	v2, _ := Compat(&results.Run{Ops: []results.Op{op, op}})
	if v2.SlowestMs != v.SlowestMs || math.Abs(v2.StddevMs-v.StddevMs) > 1e-12 {
		t.Errorf("the op twice: slowest %g stddev %g, once: %g %g", v2.SlowestMs, v2.StddevMs, v.SlowestMs, v.StddevMs)
	}
}

// TestCompatRule applies etcdctl check perf's rule to hand-made results.
func TestCompatRule(t *testing.T) {
	watch := results.Op{Op: "watch", Requests: 10, Errors: 3} // events: not requests, never judged
	for _, tc := range []struct {
		name string
		ops  []results.Op
		want finding.Status
		says string
	}{
		{"all good", []results.Op{putOp(t, 150, 150, 0, 2, 3, 5)}, "pass", ""},
		{"one error", []results.Op{putOp(t, 150, 150, 1, 2)}, "fail", "1 errors"},
		{"exactly 90% fails (etcdctl: RPS/limit <= 0.9)", []results.Op{putOp(t, 1000, 900, 0, 2)}, "fail", "throughput too low"},
		{"91% passes", []results.Op{putOp(t, 1000, 910, 0, 2)}, "pass", ""},
		{"slowest over 500 ms", []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 520)}, "fail", "slowest request took too long"},
		{"slowest at 495 ms passes", []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 495)}, "pass", ""},
		{"stddev over 100 ms", []results.Op{putOp(t, 150, 150, 0, 1, 300)}, "fail", "stddev too high"},
		{"watch events are not judged", []results.Op{putOp(t, 150, 150, 0, 2), watch}, "pass", ""},
		{"mixed ops add up", []results.Op{putOp(t, 100, 95, 0, 2), putOp(t, 50, 48, 0, 2)}, "pass", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Compat(&results.Run{Ops: tc.ops})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tc.want {
				t.Errorf("status %s, want %s: %+v", v.Status, tc.want, v)
			}
			if tc.says != "" && !strings.Contains(strings.Join(v.Failures, "; "), tc.says) {
				t.Errorf("failures %q do not say %q", v.Failures, tc.says)
			}
		})
	}
}

// TestDefaultVerdict grades hand-made results and analyzer findings.
func TestDefaultVerdict(t *testing.T) {
	good := func() *results.Run { return &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 0, 2, 5)}} }
	fail := func(c finding.Class) finding.Finding {
		return finding.Finding{Class: c, Severity: finding.Fail, Summary: string(c) + " is bad"}
	}
	share := func(f finding.Finding, s float64) finding.Finding { f.Share = &s; return f }
	for _, tc := range []struct {
		name       string
		run        *results.Run
		findings   []finding.Finding
		status     finding.Status
		bottleneck string
		says       string
	}{
		{"pass", good(), []finding.Finding{{Class: finding.ClassDisk, Severity: finding.OK}}, "pass", "none", "pass"},
		{"p99 over the threshold", &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 300)}}, nil, "fail", "none", "put p99 response time"},
		{"errors", &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 2, 2)}}, nil, "fail", "none", "errors 2"},
		{"rate short", &results.Run{Ops: []results.Op{putOp(t, 8000, 5900, 0, 2)}}, []finding.Finding{fail(finding.ClassCPU)}, "fail", "cpu", "achieved rate"},
		// --load s passes etcdctl's rule on a 100 ms fdatasync disk; etcdperf must fail it.
		{"light load on a slow disk", good(), []finding.Finding{fail(finding.ClassDisk)}, "fail", "disk", "bottleneck disk"},
		{"saturated generator", good(), []finding.Finding{fail(finding.ClassClient)}, "invalid", "client", "invalid"},
		{"health only", good(), []finding.Finding{fail(finding.ClassHealth)}, "fail", "none", "health"},
		// One ranking with bench's (analyze.Rank): the larger share of the client
		// latency leads, whatever the classes' order.
		{"ranked by share", good(), []finding.Finding{share(fail(finding.ClassDisk), 0.1), share(fail(finding.ClassNetwork), 0.8)}, "fail", "network", "bottleneck network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, crit := Default(tc.run, analyze.Result{Findings: tc.findings}, 100*time.Millisecond, "test")
			if v.Status != tc.status || v.Bottleneck != tc.bottleneck {
				t.Errorf("verdict %s/%s, want %s/%s: %s", v.Status, v.Bottleneck, tc.status, tc.bottleneck, v.Summary)
			}
			if !strings.Contains(v.Summary, tc.says) {
				t.Errorf("summary %q does not say %q", v.Summary, tc.says)
			}
			if len(crit) != 3 {
				t.Errorf("%d criteria, want p99, errors and rate", len(crit))
			}
		})
	}
}
