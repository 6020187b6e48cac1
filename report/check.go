package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Check is check's output: the contract's verdict and findings, the ops as bench
// reports them, and etcdctl's verdict under "compat". The simple and table forms
// are one text (the answer first); only the diagnosis below it differs.
type Check struct {
	Verdict       finding.Verdict     `json:"verdict"`
	Findings      []finding.Finding   `json:"findings"`
	Ops           []BenchOp           `json:"ops"`
	Compat        check.CompatVerdict `json:"compat"`
	Criteria      []finding.Criterion `json:"criteria"`
	ExitFollows   string              `json:"exit_follows"` // default | compat
	Profile       profiles.Summary    `json:"profile"`
	Valid         bool                `json:"valid"`
	InvalidReason string              `json:"invalid_reason"`
	DurationS     float64             `json:"duration_s"`
	Client        BenchClient         `json:"client"`
	Budget        *finding.Budget     `json:"budget,omitempty"`
	Notes         []string            `json:"notes,omitempty"`
	RunFile       string              `json:"run_file"`

	rep analyze.Result
}

// NewCheck is the output of check's result res on run, written to runFile,
// with rep's findings, budget and notes (its Verbose applies to the text).
func NewCheck(run *results.Run, runFile string, rep analyze.Result, res check.Result) Check {
	c := Check{
		Verdict: res.Verdict, Compat: res.Compat, Criteria: res.Criteria, ExitFollows: res.ExitFollows, Profile: res.Profile,
		Findings: rep.Findings, Ops: BenchOps(run),
		Valid: run.Valid, InvalidReason: run.InvalidReason, DurationS: run.DurationS,
		Client: benchClient(run),
		Budget: rep.Budget, Notes: rep.Notes, RunFile: runFile, rep: rep,
	}
	if c.ExitFollows == "" {
		c.ExitFollows = "default"
	}
	if c.Findings == nil {
		c.Findings = []finding.Finding{}
	}
	return c
}

// Simple writes the text with the diagnosis in its simple form.
func (c Check) Simple(w io.Writer) error { return c.write(w, "simple") }

// Table writes the text with the diagnosis as tables.
func (c Check) Table(w io.Writer) error { return c.write(w, "table") }

func (c Check) write(w io.Writer, format string) error {
	p := c.Profile
	// The answer first: the verdict, etcdctl's rule beside it, the bottleneck.
	fmt.Fprintf(w, "%s  %s: %s (etcdctl's rule: %s)\n", strings.ToUpper(string(c.Verdict.Status)), p.Name, c.Verdict.Summary, strings.ToUpper(string(c.Compat.Status)))
	fmt.Fprintf(w, "check %s v%d: %s\n", p.Name, p.Version, p.Description)
	fmt.Fprintf(w, "offered %g req/s from %d clients over %d connection(s)", p.Rate, p.Clients, p.Connections)
	if c.Client.Transport != "" {
		fmt.Fprintf(w, " (transport %s)", c.Client.Transport)
	}
	fmt.Fprintf(w, "; measured %.2fs\n", c.DurationS)
	for _, op := range c.Ops {
		fmt.Fprintf(w, "  %-16s %d requests, %d errors, %.1f req/s", op.Op, op.Requests, op.Errors, op.ThroughputRPS)
		if op.TargetRPS > 0 {
			fmt.Fprintf(w, " of %g target", op.TargetRPS)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %-16s response p50 %s  p99 %s  max %s;  service p99 %s  max %s  stddev %s\n", "",
			Ms(op.Latency.P50), Ms(op.Latency.P99), Ms(op.Latency.Max), Ms(op.Service.P99), Ms(op.Service.Max), Ms(op.Service.Stddev))
	}
	// Both verdicts are on the first line; below them, only what they rest on.
	cv := c.Compat
	fmt.Fprintf(w, "\ncompat (etcdctl check perf rule): throughput %.0f writes/s of %g, slowest %s, stddev %s, %d errors\n", cv.ThroughputRPS, cv.TargetRPS, Ms(cv.SlowestMs), Ms(cv.StddevMs), cv.Errors)
	for _, f := range cv.Failures {
		fmt.Fprintf(w, "  FAIL: %s\n", f)
	}
	fmt.Fprintln(w, "\ndefault (etcdperf's rule):")
	tw := NewTable(w)
	passed := 0
	for _, cr := range c.Criteria {
		mark := "ok"
		switch {
		case cr.Status == finding.StatusInvalid:
			mark = "not measured"
		case !cr.Passed():
			mark = "FAIL"
		case !c.rep.Verbose:
			passed++
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, cr.Name, cr.Observed, cr.Threshold)
	}
	if passed > 0 {
		fmt.Fprintf(tw, "  ok\t%d criteria met (-v lists them)\n", passed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rep := c.rep
	rep.Verdict = c.Verdict // check's own, which the analyzer's feeds
	if err := Analysis(rep).body(w, format); err != nil {
		return err
	}
	if n := invalidNote(c.Valid, c.InvalidReason, c.Verdict); n != "" {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	fmt.Fprintf(w, "\nexit code follows the %s verdict", c.ExitFollows)
	if c.ExitFollows == "default" {
		fmt.Fprint(w, " (--compat: etcdctl's)")
	}
	fmt.Fprintf(w, "\nrun file: %s\n", c.RunFile)
	return nil
}
