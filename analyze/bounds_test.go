package analyze

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// TestProbeGradedByBounds: a probe p99 within its own sampling noise of the
// 10 ms threshold reads warn, whichever side its point estimate fell on; one
// clearly on a side keeps the grade of that side.
func TestProbeGradedByBounds(t *testing.T) {
	// probe is 20,000 fdatasyncs: 98% at 2 ms, the slowest 2% spread evenly
	// from lo to hi µs, so the p99 is their middle.
	probe := func(lo, hi int64) results.DiskResult {
		h := results.NewHist()
		for range 19_600 {
			_ = h.RecordValue(2000)
		}
		for i := range int64(400) {
			_ = h.RecordValue(lo + (hi-lo)*i/399)
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return results.DiskResult{Fdatasyncs: h.TotalCount(), SyncHist: enc, Fdatasync: results.Summarize(h)}
	}
	for _, c := range []struct {
		name     string
		d        results.DiskResult
		want     finding.Severity
		straddle bool
	}{
		{"near 10 ms", probe(8000, 12000), finding.Warn, true},
		{"clearly fast", probe(2500, 3500), finding.OK, false},
		{"clearly slow", probe(40_000, 50_000), finding.Fail, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs := ""
			got := gradeProbe(c.d, limWAL, &obs)
			if got != c.want || strings.Contains(obs, "straddles") != c.straddle {
				t.Errorf("p99 %.1f ms graded %s (%q), want %s, straddle %v", c.d.SyncP99(), got, obs, c.want, c.straddle)
			}
		})
	}
}

func TestBoundedGrade(t *testing.T) {
	for _, c := range []struct {
		lo, hi   float64
		want     finding.Severity
		straddle bool
	}{
		{0.001, 0.002, finding.OK, false},
		{0.009, 0.011, finding.Warn, true},
		{0.011, 0.012, finding.Warn, false},
		{0.019, 0.021, finding.Warn, true},
		{0.021, 0.030, finding.Fail, false},
		{0.005, 0.030, finding.Warn, true},
	} {
		got, s := boundedGrade(limWAL, c.lo, c.hi)
		if got != c.want || s != c.straddle {
			t.Errorf("[%v, %v]: %s straddle %v, want %s %v", c.lo, c.hi, got, s, c.want, c.straddle)
		}
	}
}
