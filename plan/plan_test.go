package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// fakeCluster serves up to capacity req/s at 2 ms p99; above it the p99 is 80 ms
// and it achieves only capacity (an invalid step past 95%).
type fakeCluster struct {
	capacity float64
	offered  []float64
}

func (c *fakeCluster) step(slo []PercentileBound) RateFunc {
	return func(rate float64) (*RateStep, error) {
		c.offered = append(c.offered, rate)
		got, p99 := rate, 2.0
		if rate > c.capacity {
			got, p99 = c.capacity, 80
		}
		run := &results.Run{Valid: got >= 0.95*rate, Ops: []results.Op{{Op: "put", TargetRPS: rate, ThroughputRPS: got, Requests: int64(got * 10), Latency: results.Summary{P50: 1, P99: p99}}}}
		if !run.Valid {
			run.InvalidReason = "achieved under 95% of the target rate"
		}
		rep := analyze.Result{Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}}
		if rate > c.capacity {
			rep.Verdict = finding.Verdict{Status: finding.StatusFail, Bottleneck: "disk", Summary: "fail: bottleneck disk", Ranked: []string{"disk"}}
			rep.Findings = []finding.Finding{{Class: finding.ClassHealth, Severity: finding.Fail}, {Class: finding.ClassDisk, Severity: finding.Fail, Summary: "wal fsync p99 80 ms"}}
		}
		s := Judge(run, rep, slo, 0.001)
		return &s, nil
	}
}

func TestRampFindsKnee(t *testing.T) {
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	c := &fakeCluster{capacity: 700}
	steps, good, bad, err := Ramp{StartRate: 100, MaxRate: 5000, Bisections: DefaultBisections}.Run(c.step(slo))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{100, 200, 400, 800, 600, 700, 750}
	if len(c.offered) != len(want) || len(steps) != len(want) {
		t.Fatalf("offered %v, want %v", c.offered, want)
	}
	for i := range want {
		if c.offered[i] != want[i] {
			t.Fatalf("offered %v, want %v", c.offered, want)
		}
	}
	if good.OfferedRPS != 700 || bad.OfferedRPS != 750 {
		t.Fatalf("good %v bad %v, want 700 and 750", good.OfferedRPS, bad.OfferedRPS)
	}
	r := NewResult(slo, 1000, 5000, steps, good, bad)
	if r.Verdict.Status != finding.StatusFail || r.Headroom == nil || *r.Headroom > -0.29 || *r.Headroom < -0.31 {
		t.Errorf("verdict %+v headroom %v: want fail at -30%% of 1000 req/s", r.Verdict, r.Headroom)
	}
	if r.Verdict.Bottleneck != "disk" || !strings.Contains(r.Verdict.Summary, "knee 700 req/s") || !strings.Contains(r.Verdict.Summary, "at 750 req/s it broke: put p99 80.0ms > 25.0ms") {
		t.Errorf("verdict %+v", r.Verdict)
	}
	if r.Knee == nil || r.Knee.ThroughputRPS != 700 || r.Knee.ReachedMaxRate {
		t.Errorf("knee %+v", r.Knee)
	}
	if c := r.Curve; c.SLOMs != 25 || len(c.Points) != 7 || c.Points[c.Knee].ThroughputRPS != 700 || c.Points[0].ThroughputRPS != 100 {
		t.Errorf("curve %+v", c)
	}
	if d := r.Diagnosis(); d.Verdict.Status != r.Verdict.Status || len(d.Findings) != 2 || d.Curve != r.Curve {
		t.Errorf("diagnosis %+v", d)
	}
}

func TestRampHoldsToMaxRate(t *testing.T) {
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	c := &fakeCluster{capacity: 1e9}
	steps, good, bad, err := Ramp{StartRate: 300, MaxRate: 1000, Bisections: 3}.Run(c.step(slo))
	if err != nil || bad != nil || good.OfferedRPS != 1000 || len(steps) != 3 {
		t.Fatalf("steps %d good %+v bad %+v err %v: want 300, 600, 1000", len(steps), good, bad, err)
	}
	r := NewResult(slo, 0, 1000, steps, good, bad)
	if r.Verdict.Status != finding.StatusPass || !r.Knee.ReachedMaxRate || r.Headroom != nil || !strings.Contains(r.Verdict.Summary, "held up to --max-rate 1000") {
		t.Errorf("result %+v", r.Verdict)
	}
}

func TestRampFirstStepBreaks(t *testing.T) {
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	c := &fakeCluster{capacity: 10}
	steps, good, bad, err := Ramp{StartRate: 100, MaxRate: 1000, Bisections: 3}.Run(c.step(slo))
	if err != nil || good != nil || bad == nil || len(steps) != 1 {
		t.Fatalf("steps %d good %v bad %v err %v", len(steps), good, bad, err)
	}
	r := NewResult(slo, 0, 1000, steps, good, bad)
	if r.Verdict.Status != finding.StatusFail || r.Knee != nil || r.Curve.Knee != -1 || !strings.Contains(r.Verdict.Summary, "even the first step") {
		t.Errorf("result %+v", r)
	}
}

func TestRampStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	_, _, _, err := Ramp{StartRate: 1, MaxRate: 100}.Run(func(rate float64) (*RateStep, error) {
		n++
		if n == 2 {
			return nil, boom
		}
		return &RateStep{OfferedRPS: rate, OK: true}, nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Errorf("err %v after %d steps", err, n)
	}
}

func TestJudge(t *testing.T) {
	slo := []PercentileBound{{Name: "p50", MaxMs: 5}, {Name: "p99", MaxMs: 25}}
	ok := results.Op{Op: "put", TargetRPS: 100, ThroughputRPS: 100, Requests: 1000, Latency: results.Summary{P50: 1, P99: 20}}
	for _, tc := range []struct {
		name  string
		run   results.Run
		ok    bool
		broke string
	}{
		{"holds", results.Run{Valid: true, Ops: []results.Op{ok}}, true, ""},
		{"p50 over", results.Run{Valid: true, Ops: []results.Op{{Op: "put", TargetRPS: 100, Requests: 10, Latency: results.Summary{P50: 6, P99: 20}}}}, false, "put p50 6.000ms > 5.000ms"},
		{"errors over budget", results.Run{Valid: true, Ops: []results.Op{{Op: "put", TargetRPS: 100, Requests: 1000, Errors: 2}}}, false, "errors 2 of 1000 requests > 0.1% budget"},
		{"invalid", results.Run{Valid: false, InvalidReason: "late", Ops: []results.Op{ok}}, false, "invalid: late"},
		{"unpaced ops are not judged", results.Run{Valid: true, Ops: []results.Op{ok, {Op: "watch", Latency: results.Summary{P99: 900}}}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Judge(&tc.run, analyze.Result{}, slo, 0.001)
			if s.OK != tc.ok || s.Broke != tc.broke {
				t.Errorf("ok %v broke %q, want %v %q", s.OK, s.Broke, tc.ok, tc.broke)
			}
		})
	}
}

func TestParseSLO(t *testing.T) {
	got, err := ParseSLO("p50=5ms, p99=25ms,p99.9=1s")
	if err != nil || len(got) != 3 || got[0] != (PercentileBound{"p50", 5}) || got[2] != (PercentileBound{"p999", 1000}) {
		t.Errorf("ParseSLO = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "p99", "p98=1ms", "p99=fast", "p99=-1ms", "p99=0s"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) accepted", bad)
		}
	}
}

func TestPercentile(t *testing.T) {
	s := results.Summary{P50: 1, P90: 2, P99: 3, P999: 4}
	for name, want := range map[string]float64{"p50": 1, "p90": 2, "p99": 3, "p999": 4} {
		if got := Percentile(s, name); got != want {
			t.Errorf("Percentile(%s) = %v", name, got)
		}
	}
}

// TestRampKeepsAStepThatMeasuredBeforeItFailed: a step that returns its result
// with its error (it measured, then lost a member) is the last step kept; the
// result from the steps so far says the search stopped, fails, and keeps the
// knee so far.
func TestRampKeepsAStepThatMeasuredBeforeItFailed(t *testing.T) {
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	c := &fakeCluster{capacity: 1e9}
	lost := errors.New(`step at 400 req/s: lost the cluster; clean up prefix "/etcdperf/plan/": context deadline exceeded`)
	steps, good, bad, err := Ramp{StartRate: 100, MaxRate: 5000, Bisections: 3}.Run(func(rate float64) (*RateStep, error) {
		s, _ := c.step(slo)(rate)
		if rate == 400 {
			s.OK, s.Broke = false, "errors 30 of 4000 requests > 0.1% budget"
			return s, lost
		}
		return s, nil
	})
	if !errors.Is(err, lost) || len(steps) != 3 || good == nil || good.OfferedRPS != 200 || bad == nil || bad.OfferedRPS != 400 {
		t.Fatalf("steps %d, good %+v, bad %+v, err %v: want 100, 200 held and 400 kept as broken", len(steps), good, bad, err)
	}
	r := NewResult(slo, 0, 5000, steps, good, bad)
	r.Stop(err)
	if r.Verdict.Status != finding.StatusFail || r.Stopped != lost.Error() || r.Knee == nil || r.Knee.OfferedRPS != 200 ||
		!strings.Contains(r.Verdict.Summary, "the search stopped after 3 step(s): "+lost.Error()+"; what follows is the knee so far — pass: knee 200 req/s") {
		t.Errorf("stopped result: %+v, knee %+v, stopped %q", r.Verdict, r.Knee, r.Stopped)
	}
}

func TestKubeKnee(t *testing.T) {
	step := func(nodes int, ok bool) *KubeSize { return &KubeSize{Nodes: nodes, RateStep: RateStep{OK: ok}} }
	for _, tc := range []struct {
		steps     []*KubeSize
		good, bad int
	}{
		{[]*KubeSize{step(100, true), step(200, true), step(400, false)}, 200, 400},
		{[]*KubeSize{step(100, true), step(200, true)}, 200, 0},
		{[]*KubeSize{step(100, false), step(50, false)}, 0, 50},
		{[]*KubeSize{step(100, true), step(400, false), step(200, false)}, 100, 200},
	} {
		if g, b := KubeKnee(tc.steps); g != tc.good || b != tc.bad {
			t.Errorf("KubeKnee = %d, %d; want %d, %d", g, b, tc.good, tc.bad)
		}
	}
}
