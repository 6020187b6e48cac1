// Package flagcheck refuses flag values that make no sense before a command
// runs: a count of zero clients, a negative size, a ratio above one, an empty
// user. Each rule is data (a Constraint per flag name), so a table covers every flag
// of every command and a test can tell when a new numeric flag has none.
package flagcheck

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Kind is what a flag's value must be.
type Kind int

// Kinds of rules.
const (
	// Any value the flag's parser takes is meaningful (0 means "none" or "off").
	Any Kind = iota
	// Positive: > 0.
	Positive
	// NonNegative: >= 0 (0 has a documented meaning).
	NonNegative
	// Fraction: between 0 and 1, both included.
	Fraction
	// Between: Min <= v <= Max.
	Between
	// NonEmpty: a string flag that, when given, must not be empty.
	NonEmpty
	// OneOf: a string flag whose value must be one of Values.
	OneOf
	// Valid: a flag whose value Valid accepts (a name looked up in a table).
	Valid
)

// Constraint is what one flag's values must be; Why, when set, is appended to the refusal.
type Constraint struct {
	Kind     Kind
	Min, Max float64
	Values   []string
	Valid    func(string) error
	Why      string
}

// numericTypes are the pflag value types Check reads as numbers (durations in
// seconds; "bytes" is a byte count written with units, printed as an integer).
var numericTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "duration": true, "bytes": true,
}

// Numeric reports whether f holds a number Check can grade.
func Numeric(f *pflag.Flag) bool { return numericTypes[f.Value.Type()] }

// Check grades every flag of fs the user set (command line or environment) that
// has a rule, and returns the first violation as one line naming the flag.
func Check(fs *pflag.FlagSet, rules map[string]Constraint) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		r, ok := rules[f.Name]
		if err != nil || !ok || !f.Changed {
			return
		}
		err = r.check(f)
	})
	return err
}

func (r Constraint) check(f *pflag.Flag) error {
	if r.Kind == Any {
		return nil
	}
	switch r.Kind {
	case NonEmpty:
		if f.Value.String() == "" {
			return r.refuse(f, "must not be empty")
		}
		return nil
	case OneOf:
		if !slices.Contains(r.Values, f.Value.String()) {
			return r.refuse(f, "must be one of "+strings.Join(r.Values, ", "))
		}
		return nil
	case Valid:
		if err := r.Valid(f.Value.String()); err != nil {
			return fmt.Errorf("--%s %q: %w", f.Name, f.Value.String(), err)
		}
		return nil
	}
	if !Numeric(f) {
		return nil
	}
	v, err := number(f)
	if err != nil {
		return fmt.Errorf("--%s %q: %w", f.Name, f.Value.String(), err)
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return r.refuse(f, "must be a finite number")
	case r.Kind == Positive && v <= 0:
		return r.refuse(f, "must be positive")
	case r.Kind == NonNegative && v < 0:
		return r.refuse(f, "must not be negative")
	case r.Kind == Fraction && (v < 0 || v > 1):
		return r.refuse(f, "must be between 0 and 1")
	case r.Kind == Between && (v < r.Min || v > r.Max):
		return r.refuse(f, fmt.Sprintf("must be between %g and %g", r.Min, r.Max))
	}
	return nil
}

func (r Constraint) refuse(f *pflag.Flag, what string) error {
	msg := fmt.Sprintf("--%s %s, got %q", f.Name, what, f.Value.String())
	if r.Why != "" {
		msg += ": " + r.Why
	}
	return fmt.Errorf("%s", msg)
}

// number reads a numeric flag's value; a duration in seconds.
func number(f *pflag.Flag) (float64, error) {
	s := f.Value.String()
	if f.Value.Type() == "duration" {
		d, err := time.ParseDuration(s)
		return d.Seconds(), err
	}
	return strconv.ParseFloat(s, 64)
}

// Same gives each of names the rule r: the flags that share one rule are listed
// together.
func Same(r Constraint, names ...string) map[string]Constraint {
	m := make(map[string]Constraint, len(names))
	for _, n := range names {
		m[n] = r
	}
	return m
}

// Rules joins rule tables into one. A flag named in two tables is a bug in the
// tables (which rule holds?), so Rules panics on it: at start-up, caught by any test.
func Rules(tables ...map[string]Constraint) map[string]Constraint {
	out := map[string]Constraint{}
	for _, t := range tables {
		for n, r := range t {
			if _, dup := out[n]; dup {
				panic("flagcheck: two rules for --" + n)
			}
			out[n] = r
		}
	}
	return out
}
