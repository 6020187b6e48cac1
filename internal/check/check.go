// Package check holds check's two verdicts on a load run: etcdctl check perf's
// own pass rule (Compat, for --compat) and etcdperf's default verdict (Default),
// which grades percentiles, errors and the achieved rate and fails when the
// analyzer graded any signal fail.
package check

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// etcdctl check perf's pass rule, from etcd 3.6.16 etcdctl/ctlv3/command/check.go:
// it fails on any error, on s.RPS/limit <= 0.9, on s.Slowest > 0.5 s and on
// s.Stddev > 0.1 s, where (pkg/report) the latencies are those of the successful
// requests, timed from the worker's send (time.Now() before c.Do), i.e. service
// time, and the stddev is the population stddev over all of them.
const (
	compatMinRateFraction = 0.9
	compatMaxSlowestMs    = 500
	compatMaxStddevMs     = 100
	compatSource          = "etcd 3.6.16 etcdctl/ctlv3/command/check.go (check perf pass rule)"
)

// CompatVerdict is etcdctl check perf's verdict on a run.
type CompatVerdict struct {
	Status        finding.Status `json:"status"` // pass | fail
	Errors        int64          `json:"errors"`
	ThroughputRPS float64        `json:"throughput_rps"`
	TargetRPS     float64        `json:"target_rps"`
	SlowestMs     float64        `json:"slowest_ms"`
	StddevMs      float64        `json:"stddev_ms"`
	Failures      []string       `json:"failures,omitempty"`
	Rule          string         `json:"rule"`
}

// Compat applies etcdctl's rule to the paced ops of run (watch events are
// not requests), using service time as etcdctl times requests. Slowest and
// stddev are etcdctl's exact figures over the successful requests (the run's
// ServiceOK moments, merged exactly over ops); a run file from before they were
// kept falls back to the service histogram, errors included, whose max is its
// bucket's top.
func Compat(run *results.Run) (CompatVerdict, error) {
	v := CompatVerdict{Status: finding.StatusPass,
		Rule: "no errors, throughput > 90% of target, slowest ≤ 500 ms, stddev ≤ 100 ms (service time of the successful requests; " + compatSource + ")"}
	svc := results.NewHist()
	var exact results.Moments
	haveExact := true
	paced := run.Paced()
	v.Errors, v.ThroughputRPS, v.TargetRPS = paced.Errors, paced.ThroughputRPS, paced.TargetRPS
	for _, op := range run.Ops {
		if op.TargetRPS <= 0 {
			continue
		}
		switch {
		case op.ServiceOK != nil:
			exact.Merge(*op.ServiceOK)
		case op.Requests > op.Errors:
			haveExact = false
		}
		h, err := op.ServiceHist.Decode()
		if err != nil {
			return v, fmt.Errorf("op %s: %w", op.Op, err)
		}
		svc.Merge(h)
	}
	if haveExact {
		v.SlowestMs, v.StddevMs = exact.MaxMs(), exact.StddevMs()
	} else {
		s := results.Summarize(svc)
		v.SlowestMs, v.StddevMs = s.Max, s.Stddev
	}
	if v.Errors > 0 {
		v.Failures = append(v.Failures, fmt.Sprintf("%d errors", v.Errors))
	}
	if v.TargetRPS <= 0 || v.ThroughputRPS/v.TargetRPS <= compatMinRateFraction {
		v.Failures = append(v.Failures, fmt.Sprintf("throughput too low: %.0f writes/s of %.0f (need more than 90%%)", v.ThroughputRPS, v.TargetRPS))
	}
	if v.SlowestMs > compatMaxSlowestMs {
		v.Failures = append(v.Failures, fmt.Sprintf("slowest request took too long: %.3fms > 500ms", v.SlowestMs))
	}
	if v.StddevMs > compatMaxStddevMs {
		v.Failures = append(v.Failures, fmt.Sprintf("stddev too high: %.3fms > 100ms", v.StddevMs))
	}
	if len(v.Failures) > 0 {
		v.Status = finding.StatusFail
	}
	return v, nil
}

// Default is etcdperf's verdict: every paced op's p99 response time
// within p99, no errors, the target rate achieved (bench's 95% validity rule),
// and no signal the analyzer graded fail. A generator saturated on its own (the
// analyzer's client class) makes the run invalid; otherwise a failure names the
// bottleneck the analyzer found.
func Default(run *results.Run, rep analyze.Result, p99 time.Duration, p99Source string) (finding.Verdict, []finding.Criterion) {
	limit := float64(p99) / float64(time.Millisecond)
	var crit []finding.Criterion
	paced := run.Paced()
	errs, got, want := paced.Errors, paced.ThroughputRPS, paced.TargetRPS
	for _, op := range run.Ops {
		if op.TargetRPS <= 0 {
			continue
		}
		crit = append(crit, finding.Lower(op.Op+" p99 response time", units.Ms(op.Latency.P99), op.Latency.P99, "≤ "+units.Ms(limit), limit,
			p99Source+"; response time counts from the intended start (open loop)", true, false))
	}
	crit = append(crit,
		finding.Criterion{Name: "errors", Observed: strconv.FormatInt(errs, 10), Threshold: "0", Source: "etcdctl check perf (any error fails)", Status: finding.PassIf(errs == 0)},
		finding.Higher("achieved rate", fmt.Sprintf("%.1f req/s of %g (%.0f%%)", got, want, 100*safeDiv(got, want)), got,
			fmt.Sprintf("≥ %.0f%% of target", 100*results.ValidRateFraction), results.ValidRateFraction*want,
			"etcdperf measurement rules (docs/measurement.md: under 95% of the target rate a run is invalid)", want > 0),
	)
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	var failed []string
	for _, c := range crit {
		if !c.Passed() {
			failed = append(failed, fmt.Sprintf("%s %s (want %s)", c.Name, c.Observed, c.Threshold))
		}
	}
	// The bottleneck and the ranking are analyze.Rank's, as bench's and plan's:
	// the failing signals in that order, then the cluster-health context, which
	// names no bottleneck.
	var fails []finding.Finding
	for _, f := range analyze.Rank(rep.Findings) {
		if v.Bottleneck == finding.BottleneckNone {
			v.Bottleneck = string(f.Class)
		}
		v.Ranked = append(v.Ranked, string(f.Class))
		if f.Severity == finding.Fail {
			fails = append(fails, f)
		}
	}
	for _, f := range rep.Findings {
		if f.Class.Context() && f.Severity == finding.Fail {
			fails = append(fails, f)
		}
	}
	clientOnly := len(fails) > 0 && fails[0].Class == finding.ClassClient
	v.Versions = rep.Verdict.Versions
	var parts []string
	switch {
	case clientOnly:
		v.Status = finding.StatusInvalid
		parts = append(parts, "invalid: the load generator was saturated, so the run measured it rather than the server")
	case len(failed) > 0 || len(fails) > 0:
		v.Status = finding.StatusFail
		if len(failed) > 0 {
			parts = append(parts, "fail: "+strings.Join(failed, "; "))
		} else {
			parts = append(parts, "fail: the load was served within its objectives, but a signal was graded fail")
		}
	default:
		parts = append(parts, fmt.Sprintf("pass: p99 within %s, no errors, target rate achieved, no signal over its fail threshold", units.Ms(limit)))
	}
	for i, f := range fails {
		lead := "also failing"
		if i == 0 {
			lead = "bottleneck"
		}
		parts = append(parts, fmt.Sprintf("%s %s — %s", lead, f.Class, f.Summary))
	}
	if v.Status == finding.StatusFail && len(fails) == 0 {
		parts = append(parts, "no server signal was graded fail: see the findings' warnings and the latency budget")
	}
	v.Summary = strings.Join(parts, "; ")
	return v, crit
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
