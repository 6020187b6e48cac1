package report

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/results"
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
			p, dir := mannWhitney(tc.a, tc.b)
			if math.Abs(p-tc.p) > 5e-4 || dir != tc.wantDir {
				t.Errorf("p %.5f dir %d, want %.5f %d", p, dir, tc.p, tc.wantDir)
			}
		})
	}
}

// compareRun is a run of put and range whose put latencies are spread over
// [lo, hi] µs per second and whose put rate is perSec.
func compareRun(t *testing.T, lo, hi int64, perSec int) *results.Run {
	flat := func(int) float64 { return 1 }
	return &results.Run{Version: results.Version, Command: "bench mixed", Valid: true, DurationS: fixtureSeconds, Ops: []results.Op{
		fixtureOp(t, "put", perSec, lo, hi, 1000, flat),
		fixtureOp(t, "range", 500, 250, 900, 0, flat),
	}}
}

func verdicts(c *Comparison, op string) string {
	var out []string
	for _, r := range c.Rows {
		if r.Op == op {
			out = append(out, r.Metric+"="+r.Verdict)
		}
	}
	return strings.Join(out, " ")
}

func TestCompare(t *testing.T) {
	base := compareRun(t, 700, 2_400, 1000)
	opts := CompareOptions{ThresholdPct: 10}
	for _, tc := range []struct {
		name        string
		b           *results.Run
		regressions int
		put, rng    string
	}{
		{"same run", compareRun(t, 700, 2_400, 1000), 0,
			"p50=small p90=small p99=small p99.9=small throughput=small",
			"p50=small p90=small p99=small p99.9=small throughput=small"},
		{"slower puts", compareRun(t, 1_000, 3_600, 1000), 3,
			// p99.9 is set by the stall, the same in both runs.
			"p50=regression p90=regression p99=regression p99.9=small throughput=small",
			"p50=small p90=small p99=small p99.9=small throughput=small"},
		{"faster puts", compareRun(t, 400, 1_600, 1000), 0,
			"p50=improvement p90=improvement p99=improvement p99.9=small throughput=small",
			"p50=small p90=small p99=small p99.9=small throughput=small"},
		{"lower throughput", compareRun(t, 700, 2_400, 800), 1,
			"p50=small p90=small p99=small p99.9=small throughput=regression",
			"p50=small p90=small p99=small p99.9=small throughput=small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(base, tc.b, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Regressions != tc.regressions {
				t.Errorf("%d regressions, want %d", c.Regressions, tc.regressions)
			}
			if got := verdicts(c, "put"); got != tc.put {
				t.Errorf("put: %s\nwant %s", got, tc.put)
			}
			if got := verdicts(c, "range"); got != tc.rng {
				t.Errorf("range: %s\nwant %s", got, tc.rng)
			}
		})
	}
}

func TestCompareNoise(t *testing.T) {
	// The whole-window p99.9 differs by far more than the threshold, but it is set by
	// two seconds out of twenty: the per-second values do not support a regression.
	a := compareRun(t, 700, 2_400, 1000)
	b := compareRun(t, 700, 2_400, 1000)
	b.Ops[0].Latency.P999 *= 2
	c, err := Compare(a, b, CompareOptions{ThresholdPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(c, "put"); !strings.Contains(got, "p99.9=noise") || c.Regressions != 0 {
		t.Errorf("put: %s, %d regressions", got, c.Regressions)
	}
}

func TestCompareWithoutIntervals(t *testing.T) {
	a, b := compareRun(t, 700, 2_400, 1000), compareRun(t, 1_400, 4_800, 1000)
	for _, r := range []*results.Run{a, b} {
		for i := range r.Ops {
			r.Ops[i].Intervals = nil
		}
	}
	c, err := Compare(a, b, CompareOptions{ThresholdPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c.Regressions != 0 || !strings.Contains(verdicts(c, "put"), "p50=unknown") {
		t.Errorf("without intervals: %d regressions, %s", c.Regressions, verdicts(c, "put"))
	}
	if len(c.Notes) == 0 {
		t.Error("no note about the missing noise estimate")
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "unknown") || !strings.Contains(buf.String(), "note: ") {
		t.Errorf("text:\n%s", buf.String())
	}
}

func TestCompareNotComparable(t *testing.T) {
	a := compareRun(t, 700, 2_400, 1000)
	b := compareRun(t, 700, 2_400, 1000)
	b.Ops = b.Ops[:1]
	if _, err := Compare(a, b, CompareOptions{}); !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), "[put,range]") {
		t.Errorf("different ops: %v", err)
	}
	b = compareRun(t, 700, 2_400, 1000)
	b.Command = "bench put"
	if _, err := Compare(a, b, CompareOptions{}); !errors.Is(err, ErrNotComparable) {
		t.Errorf("different commands: %v", err)
	}
}
