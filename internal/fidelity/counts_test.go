package fidelity

import (
	"fmt"
	"strings"
	"testing"
)

func TestJudgeCounts(t *testing.T) {
	// counts is n pairs of one figure: grpc's count 1000+10i, lean's that plus shift.
	counts := func(n int, shift float64) string {
		var b strings.Builder
		for i := range n {
			g := 1000 + 10*float64(i)
			fmt.Fprintf(&b, "after-restarted grpc %d %.0f\nafter-restarted lean %d %.0f\n", i+1, g, i+1, g+shift)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, in, verdict string
	}{
		{"lean's restarted member gets no load", counts(4, -1000), "DIFFERS"},
		{"the same counts", counts(4, 0), "no difference found"},
		{"no errors in either", "errors grpc 1 0\nerrors lean 1 0\nerrors grpc 2 0\nerrors lean 2 0\nerrors grpc 3 0\nerrors lean 3 0\nerrors grpc 4 0\nerrors lean 4 0\n", "no difference found"},
		{"three pairs", counts(3, -1000), "too few pairs to tell"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ParseCounts(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			rows := JudgeCounts(cs)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			if r := rows[0]; r.Lo > r.Gap || r.Gap > r.Hi {
				t.Errorf("gap %.0f outside [%.0f, %.0f]", r.Gap, r.Lo, r.Hi)
			}
			var out strings.Builder
			WriteCounts(&out, rows)
			if !strings.Contains(out.String(), tc.verdict+"\n") {
				t.Errorf("want %q:\n%s", tc.verdict, out.String())
			}
		})
	}
	for _, in := range []string{"errors lean 1", "errors lean x 1", "errors lean 1 a"} {
		if _, err := ParseCounts(strings.NewReader(in)); err == nil {
			t.Errorf("ParseCounts(%q): no error", in)
		}
	}
}
