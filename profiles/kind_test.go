package profiles

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestKinds: every kind's name is unique, its Fields are profile op fields, and
// its command's flags and mix flags register without a clash and have rules or
// none needed (flag rules are checked by cmd's TestFlagRules).
func TestKinds(t *testing.T) {
	seen := map[string]bool{}
	mixed := pflag.NewFlagSet("mixed", pflag.ContinueOnError)
	var opts Op
	for _, k := range Kinds() {
		if seen[k.Name] {
			t.Errorf("kind %s declared twice", k.Name)
		}
		seen[k.Name] = true
		for _, f := range k.Fields {
			if _, ok := opFields[f]; !ok || f == "op" || f == "ratio" {
				t.Errorf("kind %s: %q is no op field", k.Name, f)
			}
		}
		if k.Command != nil {
			if k.Short == "" {
				t.Errorf("kind %s: a command without a short help", k.Name)
			}
			if c := k.Command(pflag.NewFlagSet(k.Name, pflag.ContinueOnError)); c.New == nil {
				t.Errorf("kind %s: a command without New", k.Name)
			}
		}
		if k.MixFlags != nil {
			k.MixFlags(mixed, &opts) // panics on a flag two kinds register
		}
		if k.Paced && !k.InProfile {
			t.Errorf("kind %s: paced but in no profile", k.Name)
		}
	}
	_ = FlagRules() // panics on a flag two kinds claim
}

// TestWrap: the help text derived from the kinds is wrapped at spaces.
func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"a b c", 3, "a b\nc"},
		{"  one  two ", 20, "one two"},
		{"longword x", 4, "longword\nx"},
	} {
		if got := wrap(c.in, c.w); got != c.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}
