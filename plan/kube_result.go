package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// ListP99Bound bounds the p99 of a whole LIST: SIG Scalability's API call latency
// SLO for cluster-scoped LISTs is 30 s at the 99th percentile; the SLO of --slo
// applies to its pages' single requests.
const ListP99Bound = 30 * time.Second

// KubeResult is what plan --kubernetes found: plan's fields with steps in
// nodes, and the answer in the user's units.
type KubeResult struct {
	Verdict    finding.Verdict   `json:"verdict"`
	Findings   []finding.Finding `json:"findings"`
	Knee       *Knee             `json:"knee"`
	SLO        []PercentileBound `json:"slo"`
	Steps      []*KubeSize       `json:"steps"`
	Kubernetes KubeAnswer        `json:"kubernetes"`
	// Stopped says why the search ended before it finished (see Result.Stopped).
	Stopped string `json:"stopped,omitempty"`
}

// KubeKnee is the largest size of steps that held (good, 0 when none did) and
// the smallest above it that broke (bad, 0 when none did): the knee so far of a
// search that stopped early.
func KubeKnee(steps []*KubeSize) (good, bad int) {
	for _, s := range steps {
		if s.OK && s.Nodes > good {
			good = s.Nodes
		}
	}
	for _, s := range steps {
		if !s.OK && s.Nodes > good && (bad == 0 || s.Nodes < bad) {
			bad = s.Nodes
		}
	}
	return good, bad
}

// Stop records that the search ended early with err (see Result.Stop).
func (r *KubeResult) Stop(err error) { stop(&r.Verdict, &r.Stopped, len(r.Steps), err) }

// KubeSize is one cluster size the search tried.
type KubeSize struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	RateStep
	// Lists is the whole LISTs the step ran, ListP99Ms their p99 response time.
	Lists     int64   `json:"lists"`
	ListP99Ms float64 `json:"list_p99_ms"`
}

// KubeAnswer is the answer: the largest cluster that held, what runs out first,
// and the model with every number it used.
type KubeAnswer struct {
	NodesAtKnee int     `json:"nodes_at_knee"`
	PodsAtKnee  int     `json:"pods_at_knee"`
	ChurnAtKnee float64 `json:"churn_at_knee"`
	// LatencyKneeNodes is the largest size whose step held the SLO; NodesAtQuota
	// where the model's db size reaches the quota. NodesAtKnee is the smaller.
	LatencyKneeNodes int         `json:"latency_knee_nodes"`
	NodesAtQuota     int         `json:"nodes_at_quota"`
	ReachedMaxNodes  bool        `json:"reached_max_nodes"`
	RunsOutFirst     string      `json:"runs_out_first"`
	Requested        KubeCluster `json:"requested"`
	Model            KubeModel   `json:"model"`
}

// KubeModel is the model's table and its traffic.
type KubeModel struct {
	Assumptions Assumptions `json:"assumptions"`
	// Requested and AtKnee are the model's traffic at the requested size and at the knee.
	Requested KubeTraffic  `json:"requested"`
	AtKnee    *KubeTraffic `json:"at_knee"`
	// ListP99Ms is the bound of a whole LIST (SIG Scalability, cluster-scoped LIST).
	ListP99Ms float64 `json:"list_p99_ms"`
}

// JudgeKube is Judge with the LIST judged against its own bound (ListP99Bound):
// a whole LIST of thousands of objects is many requests, and the SLO applies to
// single-object calls (and to every page). The step is at nodes and pods.
func JudgeKube(nodes, pods int, run *results.Run, rep analyze.Result, slo []PercentileBound, budget float64) *KubeSize {
	r := *run
	r.Ops = append([]results.Op(nil), run.Ops...)
	var offered, listMs float64
	var lists int64
	for i := range r.Ops {
		offered += r.Ops[i].TargetRPS
		if r.Ops[i].Op == "list" {
			lists, listMs = r.Ops[i].Requests, r.Ops[i].Latency.P99
			r.Ops[i].TargetRPS = 0
		}
	}
	s := Judge(&r, rep, slo, budget)
	s.OfferedRPS = offered
	if bound := float64(ListP99Bound.Milliseconds()); listMs > bound {
		s.OK = false
		msg := fmt.Sprintf("list p99 %s > %s", units.Ms(listMs), units.Ms(bound))
		s.Broke = strings.TrimPrefix(s.Broke+"; "+msg, "; ")
	}
	s.Run = run
	return &KubeSize{Nodes: nodes, Pods: pods, RateStep: s, Lists: lists, ListP99Ms: listMs}
}

// NewKubeResult is the answer in nodes: the smaller of the latency knee and the
// model's quota limit, what runs out first, and the verdict on the requested
// size c. steps are in the order they ran; good and bad are the last size that
// held and the first that broke (nil when none), as Search found them.
func NewKubeResult(c KubeCluster, as Assumptions, slo []PercentileBound, steps []*KubeSize, good, bad *KubeSize, maxNodes int) KubeResult {
	requested := Kube(c, as)
	out := KubeResult{SLO: slo, Steps: steps, Findings: []finding.Finding{}}
	k := KubeAnswer{Requested: c, NodesAtQuota: requested.NodesAtQuota, ReachedMaxNodes: good != nil && bad == nil,
		Model: KubeModel{Assumptions: as, Requested: requested, ListP99Ms: float64(ListP99Bound.Milliseconds())}}
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	diag := bad
	if diag == nil {
		diag = good
	}
	if diag != nil && diag.Analysis.Findings != nil {
		out.Findings = diag.Analysis.Findings
	}
	var latency string
	if bad != nil {
		k.RunsOutFirst = bad.RanOut()
		v.Ranked = bad.Analysis.Verdict.Ranked
		latency = fmt.Sprintf("at %d nodes it broke: %s; bottleneck %s — %s", bad.Nodes, bad.Broke, k.RunsOutFirst, bad.Analysis.Verdict.Summary)
	}
	if good != nil {
		k.LatencyKneeNodes = good.Nodes
		out.Knee = &Knee{ThroughputRPS: good.ThroughputRPS, OfferedRPS: good.OfferedRPS, P99Ms: good.P99Ms, ReachedMaxRate: bad == nil}
	}
	k.NodesAtKnee = k.LatencyKneeNodes
	quotaFirst := good != nil && k.NodesAtQuota < k.NodesAtKnee
	if quotaFirst {
		k.NodesAtKnee, k.RunsOutFirst = k.NodesAtQuota, "quota"
	}
	if k.NodesAtKnee > 0 {
		at := Kube(c.Scaled(k.NodesAtKnee), as)
		k.PodsAtKnee, k.ChurnAtKnee, k.Model.AtKnee = at.Pods, at.Churn, &at
	}
	if k.RunsOutFirst == "" {
		k.RunsOutFirst = finding.BottleneckNone
	}
	v.Bottleneck = k.RunsOutFirst
	sloText := SLOText(slo)
	var parts []string
	switch {
	case good == nil:
		v.Status = finding.StatusFail
		last := steps[len(steps)-1]
		parts = append(parts, fmt.Sprintf("fail: even %d nodes broke the SLO (%s): %s", last.Nodes, sloText, last.Broke))
	default:
		at := "about"
		if k.ReachedMaxNodes && !quotaFirst {
			at = "at least"
		}
		if k.NodesAtKnee < c.Nodes {
			v.Status = finding.StatusFail
		}
		parts = append(parts, fmt.Sprintf("%s: this etcd serves a cluster of %s %d nodes / %d pods at churn %.3g pods/s within %s (%d apiservers)",
			v.Status, at, k.NodesAtKnee, k.PodsAtKnee, k.ChurnAtKnee, sloText, requested.APIServers))
	}
	switch {
	case quotaFirst:
		parts = append(parts, fmt.Sprintf("what runs out first is the quota: the model's db (live objects and events plus two compaction intervals of history, %s at %d nodes) reaches %s at %d nodes, before the latency knee (%s)",
			units.Bytes(requested.DBBytes), c.Nodes, units.Bytes(as.Get(QuotaBytes)), k.NodesAtQuota, kneeText(k, bad)))
	case bad != nil:
		parts = append(parts, "what runs out first: "+latency)
	case good != nil:
		parts = append(parts, fmt.Sprintf("nothing ran out up to --max-nodes %d (Kubernetes' supported maximum is 5,000); the model's db reaches the quota at %d nodes", maxNodes, k.NodesAtQuota))
	}
	v.Summary = strings.Join(parts, "; ")
	out.Verdict, out.Kubernetes = v, k
	return out
}

func kneeText(k KubeAnswer, bad *KubeSize) string {
	if bad == nil {
		return fmt.Sprintf("≥ %d nodes", k.LatencyKneeNodes)
	}
	return fmt.Sprintf("%d nodes; at %d: %s", k.LatencyKneeNodes, bad.Nodes, bad.Broke)
}

// SLOText renders an SLO for people: "p50 ≤ 5.000ms, p99 ≤ 25.0ms".
func SLOText(slo []PercentileBound) string {
	var s []string
	for _, t := range slo {
		s = append(s, t.Name+" ≤ "+units.Ms(t.MaxMs))
	}
	return strings.Join(s, ", ")
}

// RateSteps are the steps' rate steps, in order, for StepRuns.
func (r KubeResult) RateSteps() []*RateStep {
	rs := make([]*RateStep, len(r.Steps))
	for i, s := range r.Steps {
		rs[i] = &s.RateStep
	}
	return rs
}

// Diagnosis is what the plan's run file stores: the verdict and its findings.
func (r KubeResult) Diagnosis() *finding.Diagnosis {
	v := r.Verdict
	return &finding.Diagnosis{Verdict: &v, Findings: r.Findings}
}

// SectionName is the result's key in the run file's sections: a plan
// --kubernetes's run file keeps its whole result.
func (KubeResult) SectionName() string { return "plan_kubernetes" }

var _ = results.RegisterSection(KubeResult{})
