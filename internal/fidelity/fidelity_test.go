package fidelity

import (
	"fmt"
	"strings"
	"testing"
)

// runs is the input of n pairs of op put: grpc's p50 at 1.0 + i/100 ms, lean's
// that times factor plus wiggle·(−1)^i.
func runs(n int, factor, wiggle float64) string {
	var b strings.Builder
	for i := range n {
		g := 1 + float64(i)/100
		w := wiggle
		if i%2 == 1 {
			w = -w
		}
		fmt.Fprintf(&b, "put grpc %d %.4f %.4f\nput lean %d %.4f %.4f\n", i+1, g, 10*g, i+1, g*factor+w, 10*(g*factor+w))
	}
	return b.String()
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		verdict string
		lower   int
	}{
		{"lean 20% lower in every pair", runs(5, 0.8, 0), "DIFFERS", 5},
		{"lean within the spread", runs(5, 1, 0.03), "no difference found", 2},
		{"two pairs", runs(2, 0.5, 0), "too few pairs to tell", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			rows := Judge(rs)
			if len(rows) != 2 {
				t.Fatalf("%d rows, want p50 and p99 of put", len(rows))
			}
			var out strings.Builder
			Write(&out, rows)
			for _, r := range rows {
				if r.Lower != tc.lower || r.Lo > r.Gap || r.Gap > r.Hi {
					t.Errorf("%s: lower %d (want %d), gap %.3f in [%.3f, %.3f]", r.Quantile, r.Lower, tc.lower, r.Gap, r.Lo, r.Hi)
				}
			}
			if strings.Count(out.String(), tc.verdict+"\n") != 2 {
				t.Errorf("want %q for p50 and p99:\n%s", tc.verdict, out.String())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"put lean 1 0.5", "put lean x 0.5 1", "put lean 1 a 1"} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(runs(2, 1, 0))
	f.Add("put lean 1 0.5 nan\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		var out strings.Builder
		Write(&out, Judge(rs))
	})
}
