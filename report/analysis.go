package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
)

// Analysis is the output of analyze: the verdict, findings, budget and hardware
// grade of a run or of two /metrics dumps. bench, check and merge print it below
// their own figures.
type Analysis analyze.Result

// write renders the analysis as -w format asks: table, else simple.
func (r Analysis) write(w io.Writer, format string) error {
	if format == "table" {
		return r.Table(w)
	}
	return r.Simple(w)
}

// body renders the analysis below a command's first line that stated its
// verdict already: all but the verdict and its summary.
func (r Analysis) body(w io.Writer, format string) error {
	if format == "table" {
		return r.table(w, false)
	}
	return r.simple(w, false)
}

// Simple is the readable form: the verdict first, then each finding with its
// evidence and advice, then the budget, the hardware grade and notes.
func (r Analysis) Simple(w io.Writer) error { return r.simple(w, true) }

// simple writes the readable form; the verdict and its summary only with head.
func (r Analysis) simple(w io.Writer, head bool) error {
	p := &printer{w: w}
	if head {
		p.f("%s\n", verdictLine(r.Verdict))
	}
	// Below a verdict that named the bottleneck, a ranking of it alone adds nothing.
	ranked := len(r.Verdict.Ranked) > 1 || (head && len(r.Verdict.Ranked) > 0)
	if !head && (ranked || len(r.Verdict.Versions) > 0) {
		p.f("\n")
	}
	if ranked {
		p.f("ranked: %s\n", strings.Join(r.Verdict.Ranked, " > "))
	}
	writeVersions(p, r.Verdict.Versions)
	// At a glance: the classes that need attention in full, the rest in one line each.
	quiet := map[finding.Severity][]string{}
	for _, f := range r.Findings {
		if !r.Verbose && !f.Severity.Bad() {
			quiet[f.Severity] = append(quiet[f.Severity], string(f.Class))
		}
	}
	for _, sev := range []finding.Severity{finding.OK, finding.Unknown} {
		if len(quiet[sev]) > 0 {
			p.f("\n[%s] %s (-v shows every signal)", sev, strings.Join(quiet[sev], ", "))
		}
	}
	if len(quiet) > 0 {
		p.f("\n")
	}
	for _, f := range r.Findings {
		if !r.Verbose && !f.Severity.Bad() {
			continue
		}
		p.f("\n[%s] %s: %s\n", f.Severity, f.Class, f.Summary)
		hidden := 0
		for _, e := range f.Evidence {
			if !r.Verbose && !e.Severity.Bad() {
				hidden++
				continue
			}
			sig := e.Signal
			if e.Member != "" {
				sig += " @" + e.Where()
			}
			if e.Severity != finding.Warn && e.Severity != finding.Fail {
				p.f("  %-7s %s: %s\n", e.Severity, sig, e.Observed)
				continue
			}
			// Graded-bad evidence carries its threshold and source, so the reader
			// can judge the grade without the docs.
			p.f("  %-7s %s\n", e.Severity, sig)
			p.f("          observed:  %s\n", e.Observed)
			p.f("          threshold: %s\n", e.Threshold)
			p.f("          source:    %s\n", e.Source)
		}
		if hidden > 0 {
			p.f("  (%d more signal(s) within thresholds or not measured; -v shows them)\n", hidden)
		}
		if f.Risk != "" {
			p.f("  risk, not the bottleneck: %s\n", f.Risk)
		}
		if f.Advice != "" && (f.Severity == finding.Warn || f.Severity == finding.Fail) {
			p.f("  advice: %s\n", f.Advice)
		}
	}
	if r.Budget != nil {
		p.f("\nlatency budget%s (ms, p50 / p99)\n", budgetTitle(r.Budget))
		tw := NewTable(w)
		if r.Budget.ClientP50Ms != nil {
			fmt.Fprintf(tw, "  client observed\t%s / %s\n", budgetMs(r.Budget.ClientP50Ms), budgetMs(r.Budget.ClientP99Ms))
		}
		for _, part := range r.Budget.Parts {
			fmt.Fprintf(tw, "  %s\t%s / %s\t%s\n", part.Component, budgetMs(part.P50Ms), budgetMs(part.P99Ms), part.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		p.f("  (%s)\n", r.Budget.Note)
	}
	r.writeTail(p)
	return p.err
}

// writeVersions prints each member's release, and what is known about it.
func writeVersions(p *printer, vs []finding.MemberVersion) {
	for _, v := range vs {
		line := "etcd " + v.Version
		if v.ClusterVersion != "" {
			line += " (cluster " + v.ClusterVersion + ")"
		}
		p.f("version: %s on %s\n", line, v.Member)
		for _, n := range v.Notes {
			p.f("  ! %s\n", n)
		}
	}
}

// Table is the compact form: one row per evidence.
func (r Analysis) Table(w io.Writer) error { return r.table(w, true) }

// table writes the compact form; the verdict and its summary only with head.
func (r Analysis) table(w io.Writer, head bool) error {
	p := &printer{w: w}
	if head {
		p.f("%s\n", verdictLine(r.Verdict))
	} else {
		p.f("\n")
	}
	writeVersions(p, r.Verdict.Versions)
	if head || len(r.Verdict.Versions) > 0 {
		p.f("\n")
	}
	tw := NewTable(w)
	fmt.Fprintln(tw, "CLASS\tSEVERITY\tSIGNAL\tMEMBER\tOBSERVED\tTHRESHOLD")
	for _, f := range r.Findings {
		for _, e := range f.Evidence {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Class, e.Severity, e.Signal, dash(e.Where()), e.Observed, e.Threshold)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Budget != nil {
		p.f("\nBUDGET%s\n", budgetTitle(r.Budget))
		tw = NewTable(w)
		fmt.Fprintln(tw, "COMPONENT\tP50_MS\tP99_MS")
		if r.Budget.ClientP50Ms != nil {
			fmt.Fprintf(tw, "client observed\t%s\t%s\n", budgetMs(r.Budget.ClientP50Ms), budgetMs(r.Budget.ClientP99Ms))
		}
		for _, part := range r.Budget.Parts {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", part.Component, budgetMs(part.P50Ms), budgetMs(part.P99Ms))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	r.writeTail(p)
	return p.err
}

func (r Analysis) writeTail(p *printer) {
	if r.Hardware != nil {
		p.f("\nhardware: %s\n  (tiers: %s)\n", r.Hardware.Summary, r.Hardware.Source)
	}
	if len(r.Notes) > 0 {
		p.f("\nnotes\n")
		for _, n := range r.Notes {
			p.f("  - %s\n", n)
		}
	}
}

func budgetTitle(b *finding.Budget) string {
	if b.Op == "" {
		return ""
	}
	return " for " + b.Op
}

// budgetMs prints a budget value; "?" is unknown.
func budgetMs(v *float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", *v)
}

// printer keeps the first write error so rendering code stays linear.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

// Rules is the output of analyze --rules: every rule the analyzer grades with,
// its threshold and its source.
type Rules []analyze.Rule

// Simple writes the rule table as Markdown — class, signal, threshold, source —
// as docs/verdict.md holds it, so the documented thresholds come from the code.
func (r Rules) Simple(w io.Writer) error {
	p := &printer{w: w}
	p.f("| class | signal | threshold | source |\n|---|---|---|---|\n")
	esc := strings.NewReplacer("|", `\|`)
	for _, x := range r {
		p.f("| %s | %s | %s | %s |\n", x.Class, esc.Replace(x.Signal), esc.Replace(x.Threshold), esc.Replace(x.Source))
	}
	return p.err
}

// Table writes one aligned row per rule, for a terminal.
func (r Rules) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tSIGNAL\tTHRESHOLD\tSOURCE")
	for _, x := range r {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Class, x.Signal, x.Threshold, x.Source)
	}
	return tw.Flush()
}

// MarshalJSON is {"rules": [...]}, a row per rule.
func (r Rules) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"rules": analyze.RuleRows(r)})
}
