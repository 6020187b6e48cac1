package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/finding"
)

// Output formats, as every command's -w flag names them.
const (
	FormatSimple = "simple"
	FormatTable  = "table"
	FormatJSON   = "json"
)

// Write renders the report in format (simple, table or json).
func (r Report) Write(w io.Writer, format string) error {
	switch format {
	case FormatSimple, "":
		return r.writeSimple(w)
	case FormatTable:
		return r.writeTable(w)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return fmt.Errorf("unknown output format %q (want simple, table or json)", format)
}

// writeSimple is the readable form: the verdict first, then each finding with its
// evidence and advice, then the budget, the hardware grade and notes.
func (r Report) writeSimple(w io.Writer) error {
	p := &printer{w: w}
	p.f("%s  bottleneck: %s\n", strings.ToUpper(r.Verdict.Status), r.Verdict.Bottleneck)
	p.f("%s\n", r.Verdict.Summary)
	if len(r.Verdict.Ranked) > 0 {
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
		if f.Advice != "" && (f.Severity == finding.Warn || f.Severity == finding.Fail) {
			p.f("  advice: %s\n", f.Advice)
		}
	}
	if r.Budget != nil {
		p.f("\nlatency budget%s (ms, p50 / p99)\n", budgetTitle(r.Budget))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if r.Budget.ClientP50Ms != nil {
			fmt.Fprintf(tw, "  client observed\t%s / %s\n", ms(r.Budget.ClientP50Ms), ms(r.Budget.ClientP99Ms))
		}
		for _, part := range r.Budget.Parts {
			fmt.Fprintf(tw, "  %s\t%s / %s\t%s\n", part.Component, ms(part.P50Ms), ms(part.P99Ms), part.Source)
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

// writeTable is the compact form: one row per evidence.
func (r Report) writeTable(w io.Writer) error {
	p := &printer{w: w}
	p.f("VERDICT %s  BOTTLENECK %s\n%s\n", strings.ToUpper(r.Verdict.Status), r.Verdict.Bottleneck, r.Verdict.Summary)
	writeVersions(p, r.Verdict.Versions)
	p.f("\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "COMPONENT\tP50_MS\tP99_MS")
		if r.Budget.ClientP50Ms != nil {
			fmt.Fprintf(tw, "client observed\t%s\t%s\n", ms(r.Budget.ClientP50Ms), ms(r.Budget.ClientP99Ms))
		}
		for _, part := range r.Budget.Parts {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", part.Component, ms(part.P50Ms), ms(part.P99Ms))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	r.writeTail(p)
	return p.err
}

func (r Report) writeTail(p *printer) {
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

// ms prints a budget value; "?" is unknown.
func ms(v *float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", *v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

// WriteRuleTable prints the rule table as Markdown — class, signal, threshold,
// source — so the documented thresholds come from the code and cannot drift.
func WriteRuleTable(w io.Writer, rules []Rule) error {
	p := &printer{w: w}
	p.f("| class | signal | threshold | source |\n|---|---|---|---|\n")
	esc := strings.NewReplacer("|", `\|`)
	for _, r := range rules {
		p.f("| %s | %s | %s | %s |\n", r.Class, esc.Replace(r.Signal), esc.Replace(r.Threshold), esc.Replace(r.Source))
	}
	return p.err
}

// Diagnosis is the report as the run file stores it and the renderers show it.
func (r Report) Diagnosis() *finding.Diagnosis {
	v := r.Verdict
	return &finding.Diagnosis{Verdict: &v, Findings: r.Findings, Budget: r.Budget, Hardware: r.Hardware, Notes: r.Notes}
}

// RuleRow is one rule of the table analyze --rules prints, as data.
type RuleRow struct {
	Class     finding.Class `json:"class"`
	Signal    string        `json:"signal"`
	Threshold string        `json:"threshold"`
	Source    string        `json:"source"`
	Advice    string        `json:"advice,omitempty"`
	PerMember bool          `json:"per_member"`
	// Limits are the rule's numbers; absent for a rule whose grade is not one
	// value against two numbers.
	Limits *LimitsRow `json:"limits,omitempty"`
}

// LimitsRow is a rule's Limits as JSON: a level the value alone never reaches
// is absent (JSON has no infinity).
type LimitsRow struct {
	Warn   *float64 `json:"warn,omitempty"`
	Fail   *float64 `json:"fail,omitempty"`
	Unit   string   `json:"unit"`
	Strict bool     `json:"strict,omitempty"`
	Below  bool     `json:"below,omitempty"`
}

func limitsRow(l *Limits) *LimitsRow {
	if l == nil {
		return nil
	}
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	r := &LimitsRow{Fail: finite(l.Fail), Unit: l.Unit.String(), Strict: l.Strict, Below: l.Below}
	if l.hasWarn() {
		r.Warn = finite(l.Warn)
	}
	return r
}

// RuleRows are the rules as rows, in table order.
func RuleRows(rules []Rule) []RuleRow {
	out := make([]RuleRow, len(rules))
	for i, r := range rules {
		out[i] = RuleRow{Class: r.Class, Signal: r.Signal, Threshold: r.Threshold, Source: r.Source, Advice: r.Advice, PerMember: r.PerMember, Limits: limitsRow(r.Limits)}
	}
	return out
}

// WriteRuleText writes the rules for a terminal: one aligned row per rule.
func WriteRuleText(w io.Writer, rules []Rule) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tSIGNAL\tTHRESHOLD\tSOURCE")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Class, r.Signal, r.Threshold, r.Source)
	}
	return tw.Flush()
}
