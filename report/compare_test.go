package report

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/results"
)

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

// TestCompareTransports: runs through different transports are compared, with
// a note that the clients differ; runs through one transport get no such note.
func TestCompareTransports(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		note bool
	}{{"lean", "grpc", true}, {"lean", "lean", false}, {"", "grpc", false}} {
		a, b := compareRun(t, 700, 2_400, 1000), compareRun(t, 700, 2_400, 1000)
		a.Client.Transport, b.Client.Transport = tc.a, tc.b
		c, err := Compare(a, b, CompareOptions{ThresholdPct: 10})
		if err != nil {
			t.Fatal(err)
		}
		noted := slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "--transport "+tc.a+", run B through "+tc.b) })
		if noted != tc.note {
			t.Errorf("%q vs %q: notes %q; want a transport note %v", tc.a, tc.b, c.Notes, tc.note)
		}
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
	if err := c.Simple(&buf); err != nil {
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

// TestCompareShortRuns: 3 seconds against 3 cannot reach p < 0.01 whatever the
// change (the exact test's smallest p is 2/C(6,3) = 0.1), so a change within the
// threshold is not "small" (no change) but underpowered, with a note saying how
// many seconds would do; longer runs state the smallest change they can detect.
func TestCompareShortRuns(t *testing.T) {
	short := func() *results.Run {
		r := compareRun(t, 700, 2_400, 1000)
		for i := range r.Ops {
			r.Ops[i].Intervals = r.Ops[i].Intervals[2:5]
		}
		return r
	}
	c, err := Compare(short(), short(), CompareOptions{ThresholdPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if r.Verdict == CompareSmall || r.DetectablePct != nil {
			t.Errorf("%s %s: verdict %s, detectable %v with %d/%d seconds: the test had no power", r.Op, r.Metric, r.Verdict, r.DetectablePct, r.SecondsA, r.SecondsB)
		}
	}
	var buf bytes.Buffer
	if err := c.Simple(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "underpowered") || !strings.Contains(buf.String(), "at least 5 seconds") {
		t.Errorf("text does not say the test had no power:\n%s", buf.String())
	}

	long, err := Compare(compareRun(t, 700, 2_400, 1000), compareRun(t, 700, 2_400, 1000), CompareOptions{ThresholdPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range long.Rows {
		if r.Metric == "p50" && (r.DetectablePct == nil || *r.DetectablePct < 0 || *r.DetectablePct > 10 || r.Verdict != CompareSmall) {
			t.Errorf("%s p50 over %d/%d seconds: detectable %v, verdict %s; want a smallest detectable change within the 10%% threshold, small",
				r.Op, r.SecondsA, r.SecondsB, r.DetectablePct, r.Verdict)
		}
	}
}
