package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
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

// TestGradeHistStraddle: a p99 whose bucket holds the threshold (8–16 ms against
// etcd's 10 ms) is reported with the bucket's bounds and warns, however the
// interpolation inside the bucket reads; below or above that bucket it is proven.
func TestGradeHistStraddle(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, math.Inf(1)}
	// fast in (0, 1 ms], n8 in (4, 8 ms], n16 in (8, 16 ms].
	hist := func(fast, n8, n16 float64) Hist {
		return Hist{Bounds: bounds, Count: fast + n8 + n16,
			Cumulative: []float64{fast, fast, fast, fast + n8, fast + n8 + n16, fast + n8 + n16, fast + n8 + n16}}
	}
	lim := Limits{Warn: 0.010, Fail: 0.020, Unit: UnitSeconds}
	for _, tc := range []struct {
		name         string
		h            Hist
		want         finding.Severity
		observedPart string
	}{
		{"p99 at the low end of 8-16 ms", hist(980, 0, 20), finding.Warn, "p99 between 8 ms and 16 ms; ok needs < 10 ms"},
		{"p99 in 4-8 ms: proven under 10 ms", hist(980, 20, 0), finding.OK, "(4 ms, 8 ms]"},
		{"too few samples to grade the bucket", hist(60, 0, 2), finding.OK, "fewer than 100 samples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gradeHist(tc.h, 0.99, lim)
			if c.Severity != tc.want || !strings.Contains(c.Observed, tc.observedPart) {
				t.Errorf("got %s %q, want %s containing %q", c.Severity, c.Observed, tc.want, tc.observedPart)
			}
		})
	}
}

// TestGradeProbeSmallSample: a light probe over a short run has few fdatasyncs;
// its p99 is then its slowest one or two, and fails only when several exceed.
func TestGradeProbeSmallSample(t *testing.T) {
	probe := func(fast, slow int) results.DiskResult {
		h := results.NewHist()
		for range fast {
			_ = h.RecordValue(300) // µs
		}
		for range slow {
			_ = h.RecordValue(40_000)
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return results.DiskResult{Fdatasyncs: int64(fast + slow), SyncHist: enc, Fdatasync: results.Summarize(h), IntervalMs: 100}
	}
	for _, tc := range []struct {
		name       string
		fast, slow int
		want       finding.Severity
	}{
		{"one hiccup in 21", 20, 1, finding.OK},
		{"four slow in 21", 17, 4, finding.Fail},
		{"enough samples", 980, 20, finding.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := ""
			if got := gradeProbe(probe(tc.fast, tc.slow), limWAL, &obs); got != tc.want {
				t.Errorf("%s (%s), want %s", got, obs, tc.want)
			}
		})
	}
}
