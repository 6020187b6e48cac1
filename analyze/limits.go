package analyze

import (
	"math"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
)

// Unit says in what a rule's value is measured and how its thresholds read.
type Unit int

// Units of Limits.
const (
	// UnitSeconds values are seconds, read as a duration ("10 ms").
	UnitSeconds Unit = iota + 1
	// UnitMs values are milliseconds.
	UnitMs
	// UnitRatio values are shares, read in percent ("80%").
	UnitRatio
	// UnitFraction values are shares, read as a decimal ("0.5").
	UnitFraction
	// UnitBytes values are bytes, read with a binary unit ("64 KiB").
	UnitBytes
	// UnitCount values are counts ("1,000").
	UnitCount
)

// String names the unit as the rule table's JSON does.
func (u Unit) String() string {
	switch u {
	case UnitSeconds:
		return "seconds"
	case UnitMs:
		return "ms"
	case UnitRatio:
		return "ratio"
	case UnitFraction:
		return "fraction"
	case UnitBytes:
		return "bytes"
	case UnitCount:
		return "count"
	}
	return ""
}

// Limits are a rule's numeric thresholds: the rule grades with them, and its
// threshold text, shown beside every evidence and in docs/verdict.md's rule table,
// is written from them, so a number changes in one place.
type Limits struct {
	// Warn and Fail are where the grade turns. An infinite value is a level the
	// value alone never reaches; Warn == Fail means no warn level.
	Warn, Fail float64
	Unit       Unit
	// Strict: a value at a threshold is still ok; only one beyond it is bad
	// (a count "> 0", a size "> 8 GiB").
	Strict bool
	// Below: a value is bad when under the thresholds, not over them; a value
	// at a threshold is ok.
	Below bool
	// Note ends the text with what the numbers alone do not say.
	Note string
}

// Grade maps a value to a severity; NaN is unknown.
func (l Limits) Grade(v float64) finding.Severity {
	switch {
	case math.IsNaN(v):
		return finding.Unknown
	case l.beyond(v, l.Fail):
		return finding.Fail
	case l.hasWarn() && l.beyond(v, l.Warn):
		return finding.Warn
	}
	return finding.OK
}

// beyond reports whether v is bad against threshold t.
func (l Limits) beyond(v, t float64) bool {
	switch {
	case math.IsInf(t, 0):
		return false
	case l.Below:
		return v < t
	case l.Strict:
		return v > t
	}
	return v >= t
}

func (l Limits) hasWarn() bool { return !math.IsInf(l.Warn, 0) && l.Warn != l.Fail }

// Text is the threshold as people read it: "ok < 10 ms; warn ≥ 10 ms; fail ≥ 20 ms".
func (l Limits) Text() string {
	okOp, badOp := "<", "≥"
	switch {
	case l.Below:
		okOp, badOp = "≥", "<"
	case l.Strict:
		okOp, badOp = "≤", ">"
	}
	first := l.Warn
	if !l.hasWarn() {
		first = l.Fail
	}
	ok := "ok " + okOp + " " + l.format(first)
	if l.Unit == UnitCount && l.Strict && !l.Below && first == 0 {
		ok = "ok 0"
	}
	parts := []string{ok}
	if l.hasWarn() {
		parts = append(parts, "warn "+badOp+" "+l.format(l.Warn))
	}
	if !math.IsInf(l.Fail, 0) {
		parts = append(parts, "fail "+badOp+" "+l.format(l.Fail))
	}
	s := strings.Join(parts, "; ")
	if l.Note != "" {
		s += " " + l.Note
	}
	return s
}

// format renders a threshold in the limits' unit.
func (l Limits) format(v float64) string {
	switch l.Unit {
	case UnitSeconds:
		return units.Duration(v)
	case UnitMs:
		return units.Duration(v / 1000)
	case UnitRatio:
		return pct(v)
	case UnitBytes:
		return units.Bytes(v)
	case UnitCount:
		return fmtCount(v)
	}
	return units.Trim(v)
}

// fmtCount renders a whole count with thousands separators: 10,000.
func fmtCount(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
