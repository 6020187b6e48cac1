package analyze

import (
	"math"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

// TestGradeHistSmallSample: under minSamples one or two slow events are a hiccup
// and grade nothing, while several that certainly exceed the fail threshold (and
// more than 1% of them) fail, however few the samples.
func TestGradeHistSmallSample(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, math.Inf(1)}
	hist := func(fast, slow float64) Hist {
		cum := make([]float64, len(bounds))
		for i := range cum {
			cum[i] = fast
			if bounds[i] >= 2.048 {
				cum[i] = fast + slow // slow ones in (1.024 s, 2.048 s]
			}
		}
		return Hist{Bounds: bounds, Cumulative: cum, Count: fast + slow}
	}
	for _, tc := range []struct {
		name       string
		fast, slow float64
		want       finding.Severity
	}{
		{"one hiccup in 73", 72, 1, finding.OK},
		{"two in 73", 71, 2, finding.OK},
		{"five in 73", 68, 5, finding.Fail},
		{"all fast", 73, 0, finding.OK},
		{"enough samples", 980, 20, finding.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := gradeHist(hist(tc.fast, tc.slow), 0.99, Limits{Warn: 0.025, Fail: 0.050, Unit: UnitSeconds}); c.Severity != tc.want {
				t.Errorf("severity %s, want %s (%s)", c.Severity, tc.want, c.Observed)
			}
		})
	}
}
