package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/stats"
	"github.com/etcdperf/etcdperf/results"
)

// ErrNotComparable says two runs measured different things (command or ops).
var ErrNotComparable = errors.New("runs are not comparable")

// minCovered is the least part of a second an interval covers for compare to
// use its throughput.
const minCovered = 0.5

// CompareNoiseMethod explains, for help texts and reports, how compare decides
// that a change is more than noise.
const CompareNoiseMethod = `A change is judged against the run-to-run noise seen inside the two runs: each
second of a run gives one value of every metric (that second's p50, p90, p99,
p99.9 of response time, and its successful requests). A two-sided Mann-Whitney U
test asks whether B's per-second values tend to lie above (or below) A's. It uses
ranks only, so a stalled second weighs no more than any other slow second, and it
assumes no distribution shape. A change is a regression when it is worse than
the threshold AND the test finds the shift at the significance level, in the same
direction. For up to 50 seconds in all the test is exact (the permutation
distribution of the rank sum, ties included), so short runs get true p-values.
Every row states the smallest change the test can detect (80% power at the
level) for its number of seconds and the per-second spread; a change within the
threshold is called small only when a change of the threshold was detectable,
else underpowered: the runs were too short to tell. With fewer seconds than the
exact test needs to reach the level at all (5 and 5 at p < 0.01), nothing is
detectable and no change is ever called a regression. Per-second values are not
independent (a slow disk stays slow), so treat p-values near the level with care
and prefer runs of 30 s or more.`

// CompareOptions set what counts as a regression.
type CompareOptions struct {
	// ThresholdPct is the smallest change, in percent of A, that can be a regression.
	ThresholdPct float64
	// Alpha is the significance level of the noise test (0.01 when zero).
	Alpha float64
}

// Comparison is the result of comparing run B against baseline run A.
type Comparison struct {
	Command      string       `json:"command"`
	ThresholdPct float64      `json:"threshold_pct"`
	Alpha        float64      `json:"alpha"`
	Rows         []CompareRow `json:"rows"`
	Regressions  int          `json:"regressions"`
	Improvements int          `json:"improvements"`
	Notes        []string     `json:"notes,omitempty"`
}

// Compare verdicts of one row.
const (
	CompareRegression   = "regression"   // worse beyond the threshold and beyond the noise
	CompareImprovement  = "improvement"  // better beyond the threshold and beyond the noise
	CompareNoise        = "noise"        // beyond the threshold, but the per-second values do not support it
	CompareSmall        = "small"        // within the threshold, and a change of the threshold was detectable
	CompareUnderpowered = "underpowered" // within the threshold, but the test could not have detected a change of the threshold
	CompareUnknown      = "unknown"      // beyond the threshold, but too few intervals to judge the noise
)

// CompareRow is one op and metric: the whole-window values of A and B, the
// change, and the noise test on the per-second values.
type CompareRow struct {
	Op        string  `json:"op"`
	Metric    string  `json:"metric"` // p50 | p90 | p99 | p99.9 | throughput
	Unit      string  `json:"unit"`   // ms | req/s
	A         float64 `json:"a"`
	B         float64 `json:"b"`
	ChangePct float64 `json:"change_pct"`
	// PValue is the noise test's p-value; nil when a run has too few intervals.
	PValue   *float64 `json:"p_value"`
	SecondsA int      `json:"seconds_a"`
	SecondsB int      `json:"seconds_b"`
	// DetectablePct is the smallest change (in percent of A) the test detects at
	// the level with 80% power, for these seconds and per-second spread; nil when
	// the runs are too short for the test to detect any change.
	DetectablePct *float64 `json:"detectable_pct"`
	Verdict       string   `json:"verdict"`
}

// compareMetrics are the rows of each op, in order; higherIsWorse tells latency
// from throughput.
var compareMetrics = []struct {
	name          string
	pct           float64 // percentile of response time; 0 for throughput
	higherIsWorse bool
}{
	{"p50", 50, true}, {"p90", 90, true}, {"p99", 99, true}, {"p99.9", 99.9, true}, {"throughput", 0, false},
}

// Compare compares run b against the baseline a, op by op. The runs must come
// from the same command with the same ops; otherwise the error wraps ErrNotComparable.
func Compare(a, b *results.Run, opts CompareOptions) (*Comparison, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.01
	}
	opsA, opsB := a.OpNames(), b.OpNames()
	if a.Command != b.Command || !slices.Equal(opsA, opsB) {
		return nil, fmt.Errorf("%w: A is %q with ops [%s], B is %q with ops [%s]; compare runs of the same command and ops",
			ErrNotComparable, a.Command, strings.Join(opsA, ","), b.Command, strings.Join(opsB, ","))
	}
	c := &Comparison{Command: a.Command, ThresholdPct: opts.ThresholdPct, Alpha: opts.Alpha, Rows: []CompareRow{}}
	for i := range a.Ops {
		oa, ob := &a.Ops[i], b.FindOp(a.Ops[i].Op)
		sa, err := perSecond(a, oa)
		if err != nil {
			return nil, fmt.Errorf("run A: %w", err)
		}
		sb, err := perSecond(b, ob)
		if err != nil {
			return nil, fmt.Errorf("run B: %w", err)
		}
		for k, m := range compareMetrics {
			row := CompareRow{Op: oa.Op, Metric: m.name, Unit: "ms", A: wholeWindow(oa, k), B: wholeWindow(ob, k),
				SecondsA: len(sa[k]), SecondsB: len(sb[k])}
			if !m.higherIsWorse {
				row.Unit = "req/s"
			}
			row.ChangePct = changePct(row.A, row.B)
			dirWorse := 1
			if !m.higherIsWorse {
				dirWorse = -1
			}
			var shift int
			powered := false
			if len(sa[k]) >= 2 && len(sb[k]) >= 2 {
				p, dir := stats.MannWhitney(sa[k], sb[k])
				if d, ok := stats.Detectable(sa[k], sb[k], opts.Alpha); ok {
					powered = true
					row.PValue, shift = &p, dir
					pct := 100 * d / math.Max(math.Abs(row.A), 1e-12)
					if row.A == 0 {
						pct = math.MaxFloat32
					}
					row.DetectablePct = &pct
				}
			}
			worse := (row.B-row.A)*float64(dirWorse) > 0
			switch {
			case math.Abs(row.ChangePct) <= opts.ThresholdPct && powered && *row.DetectablePct <= math.Max(opts.ThresholdPct, math.Abs(row.ChangePct)):
				row.Verdict = CompareSmall
			case math.Abs(row.ChangePct) <= opts.ThresholdPct:
				row.Verdict = CompareUnderpowered
			case row.PValue == nil:
				row.Verdict = CompareUnknown
			case *row.PValue < opts.Alpha && worse && shift == dirWorse:
				row.Verdict = CompareRegression
				c.Regressions++
			case *row.PValue < opts.Alpha && !worse && shift == -dirWorse:
				row.Verdict = CompareImprovement
				c.Improvements++
			default:
				row.Verdict = CompareNoise
			}
			c.Rows = append(c.Rows, row)
		}
	}
	for _, r := range []struct {
		name string
		run  *results.Run
	}{{"A", a}, {"B", b}} {
		if !r.run.Valid {
			c.Notes = append(c.Notes, fmt.Sprintf("run %s is invalid (%s): its numbers do not describe the cluster at the intended load", r.name, r.run.InvalidReason))
		}
	}
	if ta, tb := a.Client.Transport, b.Client.Transport; ta != tb && ta != "" && tb != "" {
		c.Notes = append(c.Notes, fmt.Sprintf("run A went through --transport %s, run B through %s: the difference is the clients' as much as the cluster's", ta, tb))
	}
	if slices.ContainsFunc(c.Rows, func(r CompareRow) bool { return r.PValue == nil }) {
		c.Notes = append(c.Notes, fmt.Sprintf("with so few seconds the test cannot reach p < %g whatever the change: nothing was detectable, no change is called a regression or small; run at least %d seconds each",
			opts.Alpha, stats.SecondsNeeded(opts.Alpha)))
	}
	if slices.ContainsFunc(c.Rows, func(r CompareRow) bool { return r.Verdict == CompareUnderpowered }) {
		c.Notes = append(c.Notes, fmt.Sprintf("underpowered: the change is within %g%%, but the smallest change the test could detect with these seconds is larger (DETECTABLE): this is not evidence of no change; run longer", opts.ThresholdPct))
	}
	return c, nil
}

// wholeWindow is metric k of the op over its whole measured window.
func wholeWindow(op *results.Op, k int) float64 {
	switch compareMetrics[k].name {
	case "p50":
		return op.Latency.P50
	case "p90":
		return op.Latency.P90
	case "p99":
		return op.Latency.P99
	case "p99.9":
		return op.Latency.P999
	}
	return op.ThroughputRPS
}

// changePct is B's change from A in percent of A; 0 when both are 0, and
// infinite growth is capped so JSON can carry it.
func changePct(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case a == 0:
		return math.Copysign(math.MaxFloat32, b)
	}
	return 100 * (b - a) / math.Abs(a)
}

// perSecond returns, for each of compareMetrics, the op's per-second values.
// Latency percentiles skip seconds without replies. Throughput is each
// interval's successes per second of the time it covers (the first and last
// seconds are partial), over the intervals that cover at least half a second:
// a count over a sliver of a second is mostly noise.
func perSecond(run *results.Run, op *results.Op) ([][]float64, error) {
	out := make([][]float64, len(compareMetrics))
	var pcts []float64
	for _, m := range compareMetrics {
		if m.pct > 0 {
			pcts = append(pcts, m.pct)
		}
	}
	for i, iv := range op.Intervals {
		h, err := iv.Response.Decode()
		if err != nil {
			return nil, fmt.Errorf("op %s interval at %s: %w", op.Op, iv.Start.Format(time.RFC3339), err)
		}
		if h.TotalCount() > 0 {
			vals := h.ValueAtPercentilesSlice(pcts)
			for k, v := range vals {
				out[k] = append(out[k], float64(v)/1000)
			}
		}
		// Run files from before coverage was kept: their first and last seconds are
		// partial by an unknown amount.
		old := iv.Seconds == 0 && (i == 0 || i == len(op.Intervals)-1)
		if iv.Covered() >= minCovered && !old {
			t := len(compareMetrics) - 1
			out[t] = append(out[t], iv.Rate())
		}
	}
	return out, nil
}

// Simple renders the comparison as an aligned table under its title, then the
// counts and the notes.
func (c *Comparison) Simple(w io.Writer) error {
	fmt.Fprintf(w, "compare %s: threshold %g%%, noise test Mann-Whitney U on per-second values at p < %g\n\n", c.Command, c.ThresholdPct, c.Alpha)
	tw := NewTable(w)
	fmt.Fprintln(tw, "OP\tMETRIC\tA\tB\tCHANGE\tP-VALUE\tDETECTABLE\tSECONDS A/B\tVERDICT")
	for _, r := range c.Rows {
		p, det := "-", "none"
		if r.PValue != nil {
			p = fmt.Sprintf("%.3g", *r.PValue)
		}
		if r.DetectablePct != nil {
			det = fmt.Sprintf("±%.1f%%", *r.DetectablePct)
		}
		val := ms
		if r.Unit == "req/s" {
			val = rps
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s %s\t%+.1f%%\t%s\t%s\t%d/%d\t%s\n",
			r.Op, r.Metric, val(r.A), r.Unit, val(r.B), r.Unit, r.ChangePct, p, det, r.SecondsA, r.SecondsB, r.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d regression(s), %d improvement(s)\n", c.Regressions, c.Improvements)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// Table writes the ratio table alone: one row per op and metric, with B/A, the
// bare numbers in the unit of the row and no title or notes, for scripts.
func (c *Comparison) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "OP\tMETRIC\tUNIT\tA\tB\tB/A\tCHANGE\tP-VALUE\tVERDICT")
	for _, r := range c.Rows {
		ratio, p := "-", "-"
		if r.A != 0 {
			ratio = fmt.Sprintf("%.3f", r.B/r.A)
		}
		if r.PValue != nil {
			p = fmt.Sprintf("%.3g", *r.PValue)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%.4g\t%s\t%+.1f%%\t%s\t%s\n", r.Op, r.Metric, r.Unit, r.A, r.B, ratio, r.ChangePct, p, r.Verdict)
	}
	return tw.Flush()
}
