package stats

import (
	"math"
	"testing"
)

// TestShiftCI: the Moses interval against tables and enumeration: for 5 vs 5
// at α = 0.05 the exact U distribution gives k = 3 (P(U ≤ 2) = 4/252 ≤ 0.025 <
// P(U ≤ 3) = 7/252; Hollander & Wolfe's table, critical U = 2), so the
// interval is the 3rd smallest to the 3rd largest of the 25 differences, of
// level 1 − 8/252.
func TestShiftCI(t *testing.T) {
	for _, tc := range []struct {
		name        string
		a, b        []float64
		alpha       float64
		lo, hi, lvl float64
		ok          bool
	}{
		// Differences b−a: 1..9 with multiplicities 1,2,3,4,5,4,3,2,1 (+5 shift).
		{"5 vs 5 shifted by 5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.05, 2, 8, 1 - 8.0/252, true},
		{"5 vs 5, none", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 0.05, -5, 7, 1 - 8.0/252, true},
		// 2 vs 2: P(U = 0) = 1/6 > 0.025, no interval at 95%.
		{"2 vs 2", []float64{1, 2}, []float64{3, 4}, 0.05, 1, 3, 1 - 2.0/6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, lvl, ok := ShiftCI(tc.a, tc.b, tc.alpha)
			if lo != tc.lo || hi != tc.hi || math.Abs(lvl-tc.lvl) > 1e-12 || ok != tc.ok {
				t.Errorf("[%g, %g] level %.4f ok %v, want [%g, %g] %.4f %v", lo, hi, lvl, ok, tc.lo, tc.hi, tc.lvl, tc.ok)
			}
		})
	}
	// The U distribution against enumeration of every split of 4 vs 3.
	cdf := uCDF(4, 3)
	if got, want := cdf(0), 1.0/35; math.Abs(got-want) > 1e-12 {
		t.Errorf("P(U ≤ 0) for 4 vs 3: %g, want %g", got, want)
	}
	if got := cdf(12); math.Abs(got-1) > 1e-12 {
		t.Errorf("P(U ≤ 12) for 4 vs 3: %g, want 1", got)
	}
	if got, want := cdf(1), 2.0/35; math.Abs(got-want) > 1e-12 {
		t.Errorf("P(U ≤ 1) for 4 vs 3: %g, want %g", got, want)
	}
}
