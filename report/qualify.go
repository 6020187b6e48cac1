package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/qualify"
	"github.com/etcdperf/etcdperf/results"
)

// Qualify is `qualify`'s output: the qualification, the disk probe (without its
// histograms), the host facts, the last load run's ops and the run file.
type Qualify struct {
	qualify.Result
	Disk    results.DiskResult `json:"disk"`
	Host    *results.Host      `json:"host"`
	Ops     []BenchOp          `json:"ops"`
	RunFile string             `json:"run_file"`
}

// NewQualify is the output of res on host with the probe disk; run is the
// last load run (one of no ops when none ran).
func NewQualify(res qualify.Result, host *results.Host, disk results.DiskResult, run *results.Run, runFile string) Qualify {
	return Qualify{Result: res, Host: host, Disk: withoutHists(disk), Ops: BenchOps(run), RunFile: runFile}
}

// Simple writes the verdict (the tier this host qualifies for, what it lacks
// for the next), then the host, the probe, one criteria table per tier tried
// and the findings of the load run.
func (q Qualify) Simple(w io.Writer) error {
	fmt.Fprintln(w, verdictLine(q.Verdict))
	h := q.Host
	fmt.Fprintf(w, "host %s: %g CPUs, %.1f GB memory; data dir %s (%s", h.Hostname, h.EffectiveCPUs(), float64(h.MemoryBytes)/1e9, h.DataDir, h.DataDirFS)
	if h.Disk != nil {
		fmt.Fprintf(w, " on %s", h.Disk.Device)
	}
	fmt.Fprintf(w, ")\ndisk probe: %s\n", q.Disk.GradeReason)
	for _, tr := range q.Tiers {
		fmt.Fprintf(w, "\ntier %s: %s\n", tr.Tier, statusText(tr.Status))
		tw := NewTable(w)
		fmt.Fprintln(tw, "  CRITERION\tOBSERVED\tREQUIRED\tMARGIN\tRESULT\tSOURCE")
		for _, c := range tr.Criteria {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Observed, c.Threshold, marginText(c), statusText(c.Status), c.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if !tr.LoadRun {
			fmt.Fprintln(w, "  (load not run: the host falls short of the tier already)")
		}
	}
	if len(q.Findings) > 0 {
		fmt.Fprintln(w)
	}
	writeFindings(w, q.Findings, false)
	fmt.Fprintf(w, "run file: %s\n", q.RunFile)
	return nil
}

// Table writes the criteria of every tier tried as one table, a row per tier
// and criterion, highest tier first.
func (q Qualify) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "TIER\tCRITERION\tOBSERVED\tREQUIRED\tMARGIN\tRESULT\tSOURCE")
	for _, tr := range q.Tiers {
		for _, c := range tr.Criteria {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tr.Tier, c.Name, c.Observed, c.Threshold, marginText(c), statusText(c.Status), c.Source)
		}
	}
	return tw.Flush()
}

// marginText is a criterion's Margin as its JSON has it: how far past its
// threshold it is (+50%, fails) or short of it (-50%, passes).
func marginText(c finding.Criterion) string {
	if c.Margin == nil {
		return "?"
	}
	return fmt.Sprintf("%+.0f%%", math.Round(*c.Margin*100)+0) // -0 + 0 is +0: no "-0%"
}

// statusText is a status as the tables print it: PASS, FAIL, and NOT MEASURED
// for a criterion whose value is unknown.
func statusText(s finding.Status) string {
	if s == finding.StatusInvalid {
		return "NOT MEASURED"
	}
	return strings.ToUpper(string(s))
}
