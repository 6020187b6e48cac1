package report

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// The renderers share one model, built once from a Document: sections of
// text lines, tables and code, so text, Markdown and HTML cannot say different things.

type section struct {
	Title  string
	Blocks []block
}

// block is one paragraph, table or code line of a section. Grade, when set, is a
// severity or status (ok, warn, fail, ...) that HTML colours.
type block struct {
	Text  string
	Grade string
	Table *table
	Code  string
}

type table struct {
	Head []string
	Rows [][]string
}

func textBlock(format string, a ...any) block { return block{Text: fmt.Sprintf(format, a...)} }

// ms renders a latency in milliseconds with a precision that suits its size.
func ms(v float64) string {
	switch {
	case v >= results.HistMaxUs/1000:
		// The histograms' top: the request took that long or longer.
		return "≥60000"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// optMs renders a latency that may be unknown.
func optMs(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return ms(*v)
}

// rps renders a rate: whole requests when there are many, one decimal when few.
func rps(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// sections builds the document: headline facts, verdict, operations, latency,
// findings, budget, hardware, capacity curve, disk probe, client and host, plots.
func (r *Document) sections() []section {
	var out []section
	head := section{Title: "Run"}
	head.Blocks = append(head.Blocks,
		textBlock("Command: %s", r.Command),
		textBlock("Started: %s, measured %.1f s (warm-up %.1f s excluded)", r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"), r.DurationS, r.WarmupS),
		textBlock("Target: %s", r.targetLine()),
	)
	run := block{Text: "Run: valid", Grade: "pass"}
	if !r.Valid {
		run = block{Text: "Run: INVALID — " + r.InvalidReason, Grade: "invalid"}
	}
	head.Blocks = append(head.Blocks, run)
	if r.Interrupted {
		head.Blocks = append(head.Blocks, block{Text: "Interrupted: the figures cover only what ran before the stop.", Grade: "warn"})
	}
	if r.Error != "" {
		head.Blocks = append(head.Blocks, block{Text: "Error: " + r.Error, Grade: "fail"})
	}
	out = append(out, head)
	if r.drill != nil {
		var b strings.Builder
		if err := r.drill.Simple(&b); err == nil {
			out = append(out, section{Title: "Drill", Blocks: []block{{Code: strings.TrimRight(b.String(), "\n")}}})
		}
	}

	if r.Diagnosis != nil && r.Verdict != nil {
		v := r.Verdict
		s := section{Title: "Verdict", Blocks: []block{
			{Text: fmt.Sprintf("%s — bottleneck: %s", strings.ToUpper(string(v.Status)), v.Bottleneck), Grade: string(v.Status)},
			{Text: v.Summary},
		}}
		if len(v.Ranked) > 1 {
			s.Blocks = append(s.Blocks, textBlock("Ranked: %s", strings.Join(v.Ranked, ", ")))
		}
		if r.Regraded != "" {
			s.Blocks = append(s.Blocks, block{Text: "Note: " + r.Regraded, Grade: "warn"})
		}
		out = append(out, s)
	}
	if r.job != nil {
		var b strings.Builder
		if err := jobSteps(&b, r.job); err == nil && b.Len() > 0 {
			out = append(out, section{Title: jobStepsTitle(r.job), Blocks: []block{{Code: strings.TrimRight(b.String(), "\n")}}})
		}
	}
	if len(r.Ops) > 0 {
		out = append(out, r.opsSection())
	}
	if r.Diagnosis != nil {
		out = append(out, r.diagnosisSections()...)
	}
	if len(r.Disk) > 0 {
		out = append(out, r.diskSection())
	}
	out = append(out, r.contextSection())
	if len(r.Plots) > 0 {
		s := section{Title: "Plots"}
		for _, p := range r.Plots {
			s.Blocks = append(s.Blocks, block{Code: p})
		}
		out = append(out, s)
	}
	if r.bundle != nil {
		out = leadWithVerdict(out, *r.bundle)
	}
	return out
}

func (r *Document) opsSection() section {
	s := section{Title: "Operations"}
	ops := &table{Head: []string{"op", "requests", "errors", "throughput/s", "target/s", "late starts"}}
	lat := &table{Head: []string{"op", "time", "mean", "stddev", "p50", "p90", "p99", "p99.9", "max"}}
	for _, o := range r.Ops {
		target := "closed loop"
		if o.TargetRPS > 0 {
			target = rps(o.TargetRPS)
		}
		ops.Rows = append(ops.Rows, []string{o.Op, fmt.Sprint(o.Requests), fmt.Sprint(o.Errors), rps(o.ThroughputRPS), target, fmt.Sprint(o.LateStarts)})
		for _, x := range []struct {
			name string
			s    results.Summary
		}{{"response", o.Latency}, {"service", o.Service}} {
			lat.Rows = append(lat.Rows, []string{o.Op, x.name, ms(x.s.Mean), ms(x.s.Stddev), ms(x.s.P50), ms(x.s.P90), ms(x.s.P99), ms(x.s.P999), ms(x.s.Max)})
		}
	}
	s.Blocks = append(s.Blocks, block{Table: ops})
	for _, o := range r.Ops {
		if len(o.ErrorsByCode) > 0 {
			s.Blocks = append(s.Blocks, textBlock("%s errors by code: %s", o.Op, errorCodes(o.ErrorsByCode)))
		}
		if o.Watchers > 0 {
			s.Blocks = append(s.Blocks, textBlock("%s: %d events to %d watchers, %d missed", o.Op, o.Events, o.Watchers, o.MissedEvents))
		}
	}
	s.Blocks = append(s.Blocks,
		textBlock("Latency in milliseconds. Response time counts from the intended start (open loop) or the send (closed loop); service time from the actual send."),
		block{Table: lat})
	return s
}

func evidenceTable(ev []finding.Evidence) *table {
	t := &table{Head: []string{"signal", "member", "observed", "threshold", "source"}}
	for _, e := range ev {
		t.Rows = append(t.Rows, []string{e.Signal, e.Member, e.Observed, e.Threshold, e.Source})
	}
	return t
}

func (r *Document) diagnosisSections() []section {
	var out []section
	if len(r.Findings) > 0 {
		s := section{Title: "Findings"}
		for _, f := range r.Findings {
			s.Blocks = append(s.Blocks, block{Text: fmt.Sprintf("%s %s: %s", strings.ToUpper(string(f.Severity)), f.Class, f.Summary), Grade: string(f.Severity)})
			if len(f.Evidence) > 0 {
				s.Blocks = append(s.Blocks, block{Table: evidenceTable(f.Evidence)})
			}
			if f.Risk != "" {
				s.Blocks = append(s.Blocks, textBlock("Risk, not the bottleneck: %s", f.Risk))
			}
			if f.Advice != "" {
				s.Blocks = append(s.Blocks, textBlock("Advice: %s", f.Advice))
			}
		}
		out = append(out, s)
	}
	if b := r.Budget; b != nil {
		t := &table{Head: []string{"component", "p50 ms", "p99 ms", "source"}}
		t.Rows = append(t.Rows, []string{"client-observed", optMs(b.ClientP50Ms), optMs(b.ClientP99Ms), "etcdperf (service time)"})
		for _, p := range b.Parts {
			t.Rows = append(t.Rows, []string{p.Component, optMs(p.P50Ms), optMs(p.P99Ms), p.Source})
		}
		s := section{Title: "Latency budget"}
		if b.Op != "" {
			s.Blocks = append(s.Blocks, textBlock("Where the time of a %s went:", b.Op))
		}
		s.Blocks = append(s.Blocks, block{Table: t})
		if b.Note != "" {
			s.Blocks = append(s.Blocks, textBlock("Note: %s", b.Note))
		}
		out = append(out, s)
	}
	if h := r.Hardware; h != nil {
		s := section{Title: "Hardware", Blocks: []block{
			textBlock("Host meets tier %s; the workload needs tier %s.", h.HostTier, h.WorkloadTier),
			{Text: h.Summary},
		}}
		for _, sf := range h.Shortfalls {
			s.Blocks = append(s.Blocks, block{Text: "Short: " + sf, Grade: string(h.Severity())})
		}
		if h.Source != "" {
			s.Blocks = append(s.Blocks, textBlock("Source: %s", h.Source))
		}
		out = append(out, s)
	}
	if c := r.Curve; c != nil && len(c.Points) > 0 {
		t := &table{Head: []string{"step", "throughput/s", "p99 ms", "note"}}
		for i, p := range c.Points {
			mark := ""
			if i == c.Knee {
				mark = "knee"
			}
			t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), rps(p.ThroughputRPS), ms(p.P99Ms), mark})
		}
		s := section{Title: "Latency versus throughput (" + c.Op + ")"}
		if c.Knee >= 0 && c.Knee < len(c.Points) {
			k := c.Points[c.Knee]
			s.Blocks = append(s.Blocks, textBlock("Knee at %s req/s (p99 %s ms): beyond it latency grows faster than throughput.", rps(k.ThroughputRPS), ms(k.P99Ms)))
		}
		s.Blocks = append(s.Blocks, block{Table: t})
		out = append(out, s)
	}
	if len(r.Notes) > 0 {
		s := section{Title: "Analysis notes"}
		for _, n := range r.Notes {
			s.Blocks = append(s.Blocks, block{Text: n})
		}
		out = append(out, s)
	}
	return out
}

func (r *Document) diskSection() section {
	s := section{Title: "Disk probe"}
	t := &table{Head: []string{"pattern", "block", "IOPS", "MB/s", "fdatasync p50", "p99", "max", "commit p99", "grade"}}
	for _, d := range r.Disk {
		commit := "-"
		if d.Commit != nil {
			commit = ms(d.Commit.P99)
		}
		t.Rows = append(t.Rows, []string{d.Pattern, fmt.Sprint(d.BlockSize), fmt.Sprintf("%.0f", d.IOPS), fmt.Sprintf("%.2f", d.MBPerS),
			ms(d.Fdatasync.P50), ms(d.Fdatasync.P99), ms(d.Fdatasync.Max), commit, string(d.Grade)})
	}
	s.Blocks = append(s.Blocks, textBlock("Latency in milliseconds; etcd wants fdatasync p99 under 10 ms (etcd FAQ)."), block{Table: t})
	for _, d := range r.Disk {
		if d.GradeReason != "" {
			s.Blocks = append(s.Blocks, block{Text: d.Pattern + ": " + d.GradeReason, Grade: string(d.Grade)})
		}
		if d.FioCommand != "" {
			s.Blocks = append(s.Blocks, block{Code: d.FioCommand})
		}
	}
	return s
}

func (r *Document) contextSection() section {
	s := section{Title: "Context"}
	c := r.Client
	line := fmt.Sprintf("Load generator: %.1f CPU-seconds, max RSS %s", c.CPUSeconds, units.Bytes(c.MaxRSSBytes))
	if c.Cores > 0 {
		line += fmt.Sprintf(", %d cores", c.Cores)
	}
	if c.PacingLagP99Ms > 0 {
		line += ", pacing lag p99 " + ms(c.PacingLagP99Ms) + " ms"
	}
	if c.Transport != "" {
		line += ", transport " + c.Transport
	}
	s.Blocks = append(s.Blocks, block{Text: line})
	if h := r.Host; h != nil {
		line := fmt.Sprintf("Host: %s, %d CPUs", h.Hostname, h.CPUs)
		if h.CPUModel != "" {
			line += " (" + h.CPUModel + ")"
		}
		line += fmt.Sprintf(", %s memory available", units.Bytes(h.MemoryBytes))
		if h.DataDir != "" {
			line += fmt.Sprintf(", data dir %s on %s", h.DataDir, h.DataDirFS)
		}
		s.Blocks = append(s.Blocks, block{Text: line})
	}
	scr := "Server metrics: no /metrics scrapes in the run file, so no server-side signals."
	if r.Scrapes > 0 {
		scr = fmt.Sprintf("Server metrics: %d scrapes of %d member(s).", r.Scrapes, r.Members)
	}
	s.Blocks = append(s.Blocks, block{Text: scr})
	return s
}
