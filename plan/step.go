package plan

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// RateStep is one rate the ramp offered and what came of it.
type RateStep struct {
	OfferedRPS    float64 `json:"offered_rps"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P99Ms         float64 `json:"p99_ms"` // worst p99 response time over the paced ops
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	Valid         bool    `json:"valid"`
	OK            bool    `json:"ok"`
	// Broke says why the step broke the SLO, the error budget or validity.
	Broke      string `json:"broke,omitempty"`
	Bottleneck string `json:"bottleneck"`

	// Run and Analysis are the step's run and its analysis.
	Run      *results.Run   `json:"-"`
	Analysis analyze.Result `json:"-"`
}

// Judge decides whether a step held: every SLO percentile of every paced op,
// errors within budget (a fraction of the requests), and the offered rate
// achieved (a valid run).
func Judge(run *results.Run, rep analyze.Result, slo []PercentileBound, budget float64) RateStep {
	p := run.Paced()
	s := RateStep{OfferedRPS: p.TargetRPS, ThroughputRPS: p.ThroughputRPS, P99Ms: p.P99Ms, Requests: p.Requests, Errors: p.Errors,
		Valid: run.Valid, Bottleneck: rep.Verdict.Bottleneck, Run: run, Analysis: rep}
	var broke []string
	for _, op := range run.Ops {
		if op.TargetRPS <= 0 {
			continue
		}
		for _, t := range slo {
			if v := Percentile(op.Latency, t.Name); v > t.MaxMs {
				broke = append(broke, fmt.Sprintf("%s %s %s > %s", op.Op, t.Name, units.Ms(v), units.Ms(t.MaxMs)))
			}
		}
	}
	if s.Requests > 0 && float64(s.Errors)/float64(s.Requests) > budget {
		broke = append(broke, fmt.Sprintf("errors %d of %d requests > %g%% budget", s.Errors, s.Requests, budget*100))
	}
	if !run.Valid {
		broke = append(broke, "invalid: "+run.InvalidReason)
	}
	s.OK = len(broke) == 0
	s.Broke = strings.Join(broke, "; ")
	return s
}

// RanOut names what ran out at a broken step: the first class the analyzer
// graded fail (health aside), else the analyzer's bottleneck.
func (s *RateStep) RanOut() string {
	for _, f := range s.Analysis.Findings {
		if f.Severity == finding.Fail && !f.Class.Context() {
			return string(f.Class)
		}
	}
	if b := s.Analysis.Verdict.Bottleneck; b != "" {
		return b
	}
	return finding.BottleneckNone
}

// StepRuns are copies of the steps' runs, in the order they ran, for the plan's
// run file (results.Run.Steps): each without steps of its own.
func StepRuns(steps []*RateStep) []*results.Run {
	out := make([]*results.Run, 0, len(steps))
	for _, s := range steps {
		if s.Run == nil {
			continue
		}
		c := *s.Run
		c.Steps = nil
		out = append(out, &c)
	}
	return out
}
