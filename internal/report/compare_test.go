package report

import (
	"bytes"
	"errors"
	"math"
	"slices"
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
			p, dir := mannWhitneyNormal(tc.a, tc.b)
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

// TestMannWhitneyExact: small samples get the exact permutation distribution of
// the rank sum (midranks for ties), checked against enumerating every split.
func TestMannWhitneyExact(t *testing.T) {
	// R: wilcox.test(1:5, 6:10)$p.value == 2/choose(10, 5).
	if p, dir := mannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); math.Abs(p-2.0/252) > 1e-12 || dir != 1 {
		t.Errorf("separated 5 vs 5: p %.6f dir %d, want exactly %.6f and +1", p, dir, 2.0/252)
	}
	for _, tc := range []struct{ a, b []float64 }{
		{[]float64{1, 1, 2, 2, 3}, []float64{2, 2, 3, 3, 3}},
		{[]float64{1, 3, 5, 7, 9, 11}, []float64{2, 4, 6}},
		{[]float64{4, 4, 4, 5}, []float64{4, 5, 5, 6, 7, 7}},
	} {
		p, _ := mannWhitney(tc.a, tc.b)
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
