package report

import (
	"encoding/json"
	"io"

	"github.com/etcdperf/etcdperf/analyze"
)

// Analysis is the output of analyze: the verdict, findings, budget and hardware
// grade of a run or of two /metrics dumps, as analyze renders them.
type Analysis analyze.Report

// Simple writes the verdict first, then the findings at warn or above in full
// (every signal with Verbose), the budget and the grade.
func (a Analysis) Simple(w io.Writer) error { return analyze.Report(a).Write(w, analyze.FormatSimple) }

// Table writes the findings as one row per signal.
func (a Analysis) Table(w io.Writer) error { return analyze.Report(a).Write(w, analyze.FormatTable) }

// Rules is the output of analyze --rules: every rule the analyzer grades with,
// its threshold and its source.
type Rules []analyze.Rule

// Simple writes the rule table as Markdown (as README.md holds it).
func (r Rules) Simple(w io.Writer) error { return analyze.WriteRuleTable(w, r) }

// Table writes one aligned row per rule, for a terminal.
func (r Rules) Table(w io.Writer) error { return analyze.WriteRuleText(w, r) }

// MarshalJSON is {"rules": [...]}, a row per rule.
func (r Rules) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"rules": analyze.RuleRows(r)})
}
