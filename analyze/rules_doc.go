package analyze

import (
	"math"

	"github.com/etcdperf/etcdperf/finding"
)

// Diagnosis is the report as the run file stores it and the renderers show it.
func (r Result) Diagnosis() *finding.Diagnosis {
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
