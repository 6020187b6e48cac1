package plan

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// fakeKube is a cluster that holds up to capacity nodes: above it the txn p99 is
// 80 ms and the analyzer blames the disk. Its whole LISTs take listMs.
type fakeKube struct {
	capacity int
	listMs   float64
}

func (f fakeKube) step(c KubeCluster, as Assumptions, slo []PercentileBound, nodes int) *KubeSize {
	tr := Kube(c.Scaled(nodes), as)
	p99 := 2.0
	rep := analyze.Result{Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}}
	if nodes > f.capacity {
		p99 = 80
		rep.Verdict = finding.Verdict{Status: finding.StatusFail, Bottleneck: "disk", Summary: "fail: bottleneck disk", Ranked: []string{"disk"}}
		rep.Findings = []finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail, Summary: "wal fsync p99 80 ms"}}
	}
	run := &results.Run{Valid: true, Ops: []results.Op{
		{Op: "txn", TargetRPS: tr.UpdatesPerS, ThroughputRPS: tr.UpdatesPerS, Requests: 100, Latency: results.Summary{P50: 1, P99: p99}},
		{Op: "list", TargetRPS: 1, ThroughputRPS: 1, Requests: 4, Latency: results.Summary{P50: f.listMs / 2, P99: f.listMs}},
	}}
	return JudgeKube(tr.Nodes, tr.Pods, run, rep, slo, 0.001)
}

// search runs Search over the fake and builds the result, as plan --kubernetes does.
func (f fakeKube) search(t *testing.T, c KubeCluster, as Assumptions, maxNodes int) KubeResult {
	t.Helper()
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	sizes := map[int]*KubeSize{}
	var order []*KubeSize
	good, bad, err := Search(c.Nodes, maxNodes, 0, BisectResolution, func(nodes int) (bool, error) {
		s := f.step(c, as, slo, nodes)
		sizes[nodes] = s
		order = append(order, s)
		return s.OK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return NewKubeResult(c, as, slo, order, sizes[good], sizes[bad], maxNodes)
}

func TestKubeResult(t *testing.T) {
	c := KubeCluster{Nodes: 100, Pods: 3000, APIServers: 3}
	small := DefaultAssumptions()
	if err := small.Set(QuotaBytes, 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		kube     fakeKube
		as       Assumptions
		maxNodes int
		// want: status, runs out first, nodes at the knee, and words of the summary.
		status finding.Status
		ranOut string
		nodes  int
		words  []string
	}{
		{"latency knee past the request", fakeKube{capacity: 200, listMs: 100}, DefaultAssumptions(), 5000,
			finding.StatusPass, "disk", 200, []string{"pass: this etcd serves a cluster of about 200 nodes", "at 400 nodes it broke: txn p99 80.0ms > 25.0ms", "bottleneck disk"}},
		{"knee under the request", fakeKube{capacity: 50, listMs: 100}, DefaultAssumptions(), 5000,
			finding.StatusFail, "disk", 50, []string{"fail: this etcd serves a cluster of about 50 nodes / 1500 pods", "at 100 nodes it broke"}},
		{"no size held", fakeKube{capacity: 0, listMs: 100}, DefaultAssumptions(), 5000,
			finding.StatusFail, "disk", 0, []string{"fail: even 1 nodes broke the SLO (p99 ≤ 25.0ms)"}},
		{"never broke", fakeKube{capacity: 1 << 20, listMs: 100}, DefaultAssumptions(), 400,
			finding.StatusPass, finding.BottleneckNone, 400, []string{"at least 400 nodes", "nothing ran out up to --max-nodes 400"}},
		{"quota first", fakeKube{capacity: 1 << 20, listMs: 100}, small, 400,
			finding.StatusFail, "quota", 2, []string{"what runs out first is the quota", "reaches 1 MiB at 2 nodes", "before the latency knee (≥ 400 nodes)"}},
		{"a whole LIST over its bound", fakeKube{capacity: 1 << 20, listMs: 31000}, DefaultAssumptions(), 400,
			finding.StatusFail, finding.BottleneckNone, 0, []string{"list p99 31000ms > 30000ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.kube.search(t, c, tc.as, tc.maxNodes)
			k := r.Kubernetes
			if r.Verdict.Status != tc.status || k.RunsOutFirst != tc.ranOut || k.NodesAtKnee != tc.nodes {
				t.Errorf("status %s, runs out first %s, %d nodes; want %s, %s, %d\n%s", r.Verdict.Status, k.RunsOutFirst, k.NodesAtKnee, tc.status, tc.ranOut, tc.nodes, r.Verdict.Summary)
			}
			for _, w := range tc.words {
				if !strings.Contains(r.Verdict.Summary, w) {
					t.Errorf("summary lacks %q:\n%s", w, r.Verdict.Summary)
				}
			}
			if k.NodesAtKnee > 0 && (k.PodsAtKnee != 30*k.NodesAtKnee || k.Model.AtKnee == nil) {
				t.Errorf("%d pods at %d nodes, model at knee %v", k.PodsAtKnee, k.NodesAtKnee, k.Model.AtKnee)
			}
			if len(r.RateSteps()) != len(r.Steps) || r.Diagnosis().Verdict.Status != r.Verdict.Status {
				t.Error("RateSteps or Diagnosis disagree with the result")
			}
		})
	}
}

// TestJudgeKube: the LIST is judged against its own bound, not the SLO, and
// its rate still counts as offered.
func TestJudgeKube(t *testing.T) {
	slo := []PercentileBound{{Name: "p99", MaxMs: 25}}
	run := &results.Run{Valid: true, Ops: []results.Op{
		{Op: "txn", TargetRPS: 10, ThroughputRPS: 10, Requests: 100, Latency: results.Summary{P99: 3}},
		{Op: "list", TargetRPS: 0.5, ThroughputRPS: 0.5, Requests: 5, Latency: results.Summary{P99: 900}},
	}}
	s := JudgeKube(10, 300, run, analyze.Result{}, slo, 0.001)
	if !s.OK || s.OfferedRPS != 10.5 || s.Lists != 5 || s.ListP99Ms != 900 || s.P99Ms != 3 || s.Run != run {
		t.Errorf("step %+v: want ok, 10.5 offered, 5 lists at 900 ms, the txn's p99", s)
	}
	if run.Ops[1].TargetRPS != 0.5 {
		t.Error("JudgeKube changed the run's ops")
	}
	if got := SLOText([]PercentileBound{{Name: "p50", MaxMs: 5}, {Name: "p99", MaxMs: 25}}); got != "p50 ≤ 5.000ms, p99 ≤ 25.0ms" {
		t.Errorf("SLOText = %q", got)
	}
}
