package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Result is what a plan found: plan's -w json object but for the profile and
// the files, which the command adds.
type Result struct {
	Verdict  finding.Verdict   `json:"verdict"`
	Findings []finding.Finding `json:"findings"`
	Knee     *Knee             `json:"knee"`
	// Headroom is knee / expected - 1; null without an expected rate or a knee.
	Headroom    *float64          `json:"headroom"`
	ExpectedRPS float64           `json:"expected_rps,omitempty"`
	SLO         []PercentileBound `json:"slo"`
	Steps       []*RateStep       `json:"steps"`
	Curve       *finding.Curve    `json:"curve"`
	// Stopped says why the search ended before it finished (a member lost, the
	// cluster unreachable): the knee is then the best of the steps that did.
	Stopped string `json:"stopped,omitempty"`
}

// Stop records that the search ended early with err after the steps in r: the
// verdict fails and says so, and the knee stands as the best so far.
func (r *Result) Stop(err error) { stop(&r.Verdict, &r.Stopped, len(r.Steps), err) }

// stop fails v with the reason the search stopped after n steps.
func stop(v *finding.Verdict, stopped *string, n int, err error) {
	*stopped = err.Error()
	v.Status = finding.StatusFail
	v.Summary = fmt.Sprintf("fail: the search stopped after %d step(s): %s; what follows is the knee so far — %s", n, err, v.Summary)
}

// Knee is the highest step that held the SLO.
type Knee struct {
	ThroughputRPS float64 `json:"throughput_rps"`
	OfferedRPS    float64 `json:"offered_rps"`
	P99Ms         float64 `json:"p99_ms"`
	// ReachedMaxRate is true when the ramp never broke: the knee is at least this.
	ReachedMaxRate bool `json:"reached_max_rate"`
}

// NewResult builds the verdict from a ramp's steps (see Ramp.Run): pass when a
// knee was found and covers expected (0: any knee passes); the findings and the
// bottleneck are those of the step that broke (what ran out just past the knee),
// else of the knee. maxRate is named when the SLO held all the way.
func NewResult(slo []PercentileBound, expected, maxRate float64, steps []*RateStep, good, bad *RateStep) Result {
	out := Result{SLO: slo, Steps: steps, ExpectedRPS: expected}
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	diag := bad
	if diag == nil {
		diag = good
	}
	if diag != nil {
		out.Findings = diag.Analysis.Findings
	}
	if out.Findings == nil {
		out.Findings = []finding.Finding{}
	}
	out.Curve = curve(slo, steps, good)
	var parts []string
	if good == nil {
		v.Status = finding.StatusFail
		parts = append(parts, fmt.Sprintf("fail: even the first step (%.0f req/s) broke: %s", steps[0].OfferedRPS, steps[0].Broke))
	} else {
		out.Knee = &Knee{ThroughputRPS: good.ThroughputRPS, OfferedRPS: good.OfferedRPS, P99Ms: good.P99Ms, ReachedMaxRate: bad == nil}
		if bad == nil {
			parts = append(parts, fmt.Sprintf("knee ≥ %.0f req/s: the SLO held up to --max-rate %g (raise it to find the limit)", good.ThroughputRPS, maxRate))
		} else {
			parts = append(parts, fmt.Sprintf("knee %.0f req/s (p99 %s); at %.0f req/s it broke: %s", good.ThroughputRPS, units.Ms(good.P99Ms), bad.OfferedRPS, bad.Broke))
		}
		if expected > 0 {
			h := good.ThroughputRPS/expected - 1
			out.Headroom = &h
			parts = append(parts, fmt.Sprintf("headroom %+.0f%% over the expected %g req/s", h*100, expected))
			if h < 0 {
				v.Status = finding.StatusFail
			}
		}
		parts[0] = string(v.Status) + ": " + parts[0]
	}
	if bad != nil {
		v.Bottleneck = bad.RanOut()
		v.Ranked = bad.Analysis.Verdict.Ranked
		parts = append(parts, "bottleneck at the knee: "+v.Bottleneck+" — "+bad.Analysis.Verdict.Summary)
	}
	v.Summary = strings.Join(parts, "; ")
	out.Verdict = v
	return out
}

// curve is the (throughput, p99) points by offered rate, the knee marked.
func curve(slo []PercentileBound, steps []*RateStep, good *RateStep) *finding.Curve {
	sorted := append([]*RateStep(nil), steps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].OfferedRPS < sorted[j].OfferedRPS })
	c := &finding.Curve{Op: "all paced ops", Knee: -1}
	for _, t := range slo {
		if t.Name == "p99" {
			c.SLOMs = t.MaxMs
		}
	}
	for i, s := range sorted {
		c.Points = append(c.Points, finding.CurvePoint{ThroughputRPS: s.ThroughputRPS, P99Ms: s.P99Ms})
		if s == good {
			c.Knee = i
		}
	}
	return c
}

// Diagnosis is what the plan's run file stores: the plan's verdict, the findings
// behind it and the curve.
func (r Result) Diagnosis() *finding.Diagnosis {
	v := r.Verdict
	return &finding.Diagnosis{Verdict: &v, Findings: r.Findings, Curve: r.Curve}
}

// Record is what a plan's run file keeps of it (section "plan"): the result and
// the profile it ramped, its duration the step's.
type Record struct {
	Result
	Profile profiles.Summary `json:"profile"`
}

// SectionName is the record's key in the run file's sections.
func (Record) SectionName() string { return "plan" }

var _ = results.RegisterSection(Record{})
