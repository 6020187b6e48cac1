package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
)

// Plan is `plan`'s output: the result, the profile it ramped (its duration
// the step's), the run file and the report folder.
type Plan struct {
	plan.Result
	Profile profiles.Summary `json:"profile"`
	RunFile string           `json:"run_file"`
	Report  string           `json:"report,omitempty"`
}

// Simple writes the verdict (the knee, the headroom, what broke), then the
// step table and the findings of the step that broke.
func (p Plan) Simple(w io.Writer) error {
	fmt.Fprintln(w, verdictLine(p.Verdict))
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
	writeFindings(w, p.Findings, true)
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
