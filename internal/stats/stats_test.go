package stats

import (
	"math"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		// p as R's wilcox.test(a, b, exact = FALSE, correct = TRUE) computes it:
		// normal approximation, tie and continuity corrections.
		p       float64
		wantDir int
	}{
		{"b all larger", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.01219, 1},
		{"b all smaller", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 0.01219, -1},
		{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 0.6761, 1},
		{"ties", []float64{1, 1, 2, 2, 3}, []float64{2, 2, 3, 3, 3}, 0.1461, 1},
		{"all equal", []float64{4, 4, 4}, []float64{4, 4, 4}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dir := mannWhitneyNormal(tc.a, tc.b)
			if math.Abs(p-tc.p) > 5e-4 || dir != tc.wantDir {
				t.Errorf("p %.5f dir %d, want %.5f %d", p, dir, tc.p, tc.wantDir)
			}
		})
	}
}

// TestMannWhitneyExact: small samples get the exact permutation distribution of
// the rank sum (midranks for ties), checked against enumerating every split.
func TestMannWhitneyExact(t *testing.T) {
	// R: wilcox.test(1:5, 6:10)$p.value == 2/choose(10, 5).
	if p, dir := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); math.Abs(p-2.0/252) > 1e-12 || dir != 1 {
		t.Errorf("separated 5 vs 5: p %.6f dir %d, want exactly %.6f and +1", p, dir, 2.0/252)
	}
	for _, tc := range []struct{ a, b []float64 }{
		{[]float64{1, 1, 2, 2, 3}, []float64{2, 2, 3, 3, 3}},
		{[]float64{1, 3, 5, 7, 9, 11}, []float64{2, 4, 6}},
		{[]float64{4, 4, 4, 5}, []float64{4, 5, 5, 6, 7, 7}},
	} {
		p, _ := MannWhitney(tc.a, tc.b)
		if want := bruteForceP(tc.a, tc.b); math.Abs(p-want) > 1e-12 {
			t.Errorf("%v vs %v: p %.6f, enumeration gives %.6f", tc.a, tc.b, p, want)
		}
	}
}

// bruteForceP is the two-sided exact p-value of the rank sum by enumerating
// every way to pick len(a) of the pooled values' midranks.
func bruteForceP(a, b []float64) float64 {
	all := append(append([]float64{}, a...), b...)
	rank := func(v float64) float64 {
		lt, eq := 0, 0
		for _, w := range all {
			if w < v {
				lt++
			} else if w == v {
				eq++
			}
		}
		return float64(lt) + float64(eq+1)/2
	}
	var obs float64
	for _, v := range a {
		obs += rank(v)
	}
	n, k := len(all), len(a)
	var le, ge, total float64
	for mask := 0; mask < 1<<n; mask++ {
		if bits := popcount(mask); bits != k {
			continue
		}
		var s float64
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank(all[i])
			}
		}
		total++
		if s <= obs+1e-9 {
			le++
		}
		if s >= obs-1e-9 {
			ge++
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestShift(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{11, 12, 13}, 10},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, 0},
		{[]float64{10, 10, 10, 10}, []float64{8, 8, 8, 1000}, -2}, // one outlier moves it little
		{nil, []float64{1}, 0},
	} {
		if got := Shift(tc.a, tc.b); got != tc.want {
			t.Errorf("Shift(%v, %v) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
}
