package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/plan"
	"github.com/etcdperf/etcdperf/internal/profiles"
)

// Plan is `plan`'s output: the result, the profile it ramped (its duration
// the step's), the run file and the report folder.
type Plan struct {
	plan.Result
	Profile profiles.Summary `json:"profile"`
	RunFile string           `json:"run_file"`
	Report  string           `json:"report,omitempty"`
}

// Simple writes the step table, the knee, the headroom, the verdict and what
// broke.
func (p Plan) Simple(w io.Writer) error {
	var slo []string
	for _, t := range p.SLO {
		slo = append(slo, t.Name+"="+Ms(t.MaxMs))
	}
	fmt.Fprintf(w, "plan %s v%d (%s), SLO %s, %gs per step\n", p.Profile.Name, p.Profile.Version, p.Profile.Description, strings.Join(slo, ","), p.Profile.DurationS)
	tw := NewTable(w)
	fmt.Fprintln(tw, "  STEP\tOFFERED\tTHROUGHPUT\tP99\tERRORS\tRESULT")
	for i, s := range p.Steps {
		fmt.Fprintf(tw, "  %d\t%.0f\t%.1f\t%s\t%d\t%s\n", i+1, s.OfferedRPS, s.ThroughputRPS, Ms(s.P99Ms), s.Errors, stepResult(s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if k := p.Knee; k != nil {
		bound := ""
		if k.ReachedMaxRate {
			bound = " (at least: --max-rate reached)"
		}
		fmt.Fprintf(w, "knee: %.0f req/s at p99 %s%s\n", k.ThroughputRPS, Ms(k.P99Ms), bound)
	} else {
		fmt.Fprintln(w, "knee: none (the first step already broke)")
	}
	if p.Headroom != nil {
		fmt.Fprintf(w, "headroom over %g req/s: %+.0f%%\n", p.ExpectedRPS, *p.Headroom*100)
	}
	writeVerdict(w, p.Verdict, p.Findings, true)
	fmt.Fprintf(w, "run file: %s\n", p.RunFile)
	if p.Report != "" {
		fmt.Fprintf(w, "report: %s\n", p.Report)
	}
	return nil
}

// Table writes the step table alone, one row per step in the order they ran,
// with every figure of the step.
func (p Plan) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "STEP\tOFFERED\tTHROUGHPUT\tP99\tREQUESTS\tERRORS\tVALID\tBOTTLENECK\tKNEE\tRESULT")
	for i, s := range p.Steps {
		fmt.Fprintf(tw, "%d\t%.0f\t%.1f\t%s\t%d\t%d\t%t\t%s\t%s\t%s\n", i+1, s.OfferedRPS, s.ThroughputRPS, Ms(s.P99Ms), s.Requests, s.Errors,
			s.Valid, s.Bottleneck, kneeMark(p.Knee != nil && s.OK && s.ThroughputRPS == p.Knee.ThroughputRPS && s.OfferedRPS == p.Knee.OfferedRPS), stepResult(s))
	}
	return tw.Flush()
}

func kneeMark(knee bool) string {
	if knee {
		return "*"
	}
	return ""
}

func stepResult(s *plan.RateStep) string {
	if s.OK {
		return "ok"
	}
	return "BROKE: " + s.Broke
}

// writeVerdict writes the verdict line, its summary and the findings that warn
// or fail (with their advice when advice is set).
func writeVerdict(w io.Writer, v finding.Verdict, fs []finding.Finding, advice bool) {
	fmt.Fprintf(w, "%s  bottleneck: %s\n%s\n", strings.ToUpper(v.Status), v.Bottleneck, v.Summary)
	writeFindings(w, fs, advice)
}

// writeFindings writes the findings that warn or fail, one line each (with
// their advice when advice is set).
func writeFindings(w io.Writer, fs []finding.Finding, advice bool) {
	for _, f := range fs {
		if f.Severity == finding.Fail || f.Severity == finding.Warn {
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
			if advice && f.Advice != "" {
				fmt.Fprintf(w, "         advice: %s\n", f.Advice)
			}
		}
	}
}
