package flagcheck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestCheck(t *testing.T) {
	rules := map[string]Constraint{
		"clients": {Kind: Positive}, "rate": {Kind: NonNegative, Why: "0 is closed loop"},
		"ratio": {Kind: Fraction}, "members": {Kind: Between, Min: 1, Max: 7}, "user": {Kind: NonEmpty},
		"timeout": {Kind: Positive}, "limit": {Kind: Any}, "mode": {Kind: OneOf, Values: []string{"l", "s"}},
		"name": {Kind: Valid, Valid: func(s string) error {
			if s != "known" {
				return errors.New("no such name")
			}
			return nil
		}},
	}
	for _, c := range []struct {
		args []string
		want string // "" passes
	}{
		{nil, ""},
		{[]string{"--clients", "4", "--rate", "0", "--ratio", "1", "--members", "7", "--user", "u", "--timeout", "1s", "--limit", "-3"}, ""},
		{[]string{"--clients", "0"}, `--clients must be positive, got "0"`},
		{[]string{"--clients", "-2"}, "--clients must be positive"},
		{[]string{"--rate", "-1"}, `--rate must not be negative, got "-1": 0 is closed loop`},
		{[]string{"--rate", "NaN"}, "--rate must be a finite number"},
		{[]string{"--rate", "+Inf"}, "--rate must be a finite number"},
		{[]string{"--ratio", "1.5"}, "--ratio must be between 0 and 1"},
		{[]string{"--members", "9"}, "--members must be between 1 and 7"},
		{[]string{"--user", ""}, "--user must not be empty"},
		{[]string{"--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--timeout", "-1m"}, "--timeout must be positive"},
		{[]string{"--mode", "s"}, ""},
		{[]string{"--name", "known"}, ""},
		{[]string{"--name", "other"}, `--name "other": no such name`},
		{[]string{"--mode", "x"}, `--mode must be one of l, s, got "x"`},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.Int("clients", 10, "")
		fs.Float64("rate", 0, "")
		fs.Float64("ratio", 0.5, "")
		fs.Int("members", 1, "")
		fs.String("user", "", "")
		fs.Duration("timeout", time.Second, "")
		fs.Int("limit", 0, "")
		fs.String("mode", "l", "")
		fs.String("name", "", "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := Check(fs, rules)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestRules(t *testing.T) {
	got := Rules(Same(Constraint{Kind: Positive}, "a", "b"), map[string]Constraint{"c": {Kind: Fraction}})
	if len(got) != 3 || got["a"].Kind != Positive || got["b"].Kind != Positive || got["c"].Kind != Fraction {
		t.Errorf("Rules = %+v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a flag in two tables did not panic")
		}
	}()
	Rules(Same(Constraint{Kind: Positive}, "a"), Same(Constraint{Kind: Fraction}, "a"))
}
