package analyze

import (
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/units"
)

// Hist is a cumulative Prometheus histogram: Cumulative[i] observations were ≤ Bounds[i].
// The +Inf bucket, when present, is the last bound.
type Hist struct {
	Bounds     []float64
	Cumulative []float64
	Count      float64
	Sum        float64
}

// countAbove is the number of observations certainly above v: those in buckets
// whose lower bound is at least v.
func (h Hist) countAbove(v float64) float64 {
	lo, below := 0.0, 0.0 // the bucket's lower bound; observations in earlier buckets
	for i, hi := range h.Bounds {
		if lo >= v {
			break
		}
		lo, below = hi, h.Cumulative[i]
	}
	if lo < v {
		return 0
	}
	return h.Count - below
}

// countAtMost is the number of observations certainly at or below v: those in
// buckets whose upper bound is at most v.
func (h Hist) countAtMost(v float64) float64 {
	n := 0.0
	for i, hi := range h.Bounds {
		if hi > v {
			break
		}
		n = h.Cumulative[i]
	}
	return n
}

// add merges two histograms; buckets of o that h lacks are ignored (etcd's series of
// one family share one layout, so this only matters for malformed input).
func (h Hist) add(o Hist) Hist {
	out := Hist{Bounds: h.Bounds, Cumulative: make([]float64, len(h.Cumulative)), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	copy(out.Cumulative, h.Cumulative)
	for i, b := range h.Bounds {
		for j, ob := range o.Bounds {
			if ob == b {
				out.Cumulative[i] += o.Cumulative[j]
				break
			}
		}
	}
	return out
}

// sub returns h − o bucket by bucket: the observations made between two scrapes.
// When h has fewer observations than o, or a smaller sum (observations are
// durations and sizes, never negative, so the sum only grows), the process
// restarted in between (a counter reset), and everything h holds happened after
// the restart, so h is returned. The sum catches a restarted member that
// already counted more than before in every bucket.
func (h Hist) sub(o Hist) Hist {
	if h.Count < o.Count || h.Sum < o.Sum || len(h.Bounds) != len(o.Bounds) {
		return h
	}
	out := Hist{Bounds: h.Bounds, Cumulative: make([]float64, len(h.Cumulative)), Count: h.Count - o.Count, Sum: h.Sum - o.Sum}
	for i := range h.Cumulative {
		if h.Cumulative[i] < o.Cumulative[i] {
			return h
		}
		out.Cumulative[i] = h.Cumulative[i] - o.Cumulative[i]
	}
	return out
}

// Quantile is an estimated quantile and the bucket it lies in.
type Quantile struct {
	Q     float64 // e.g. 0.99
	Value float64 // linear interpolation inside the bucket, as histogram_quantile does
	Lo    float64 // lower bucket bound (exclusive)
	Hi    float64 // upper bucket bound (inclusive); +Inf when the rank is past the last finite bound
	Count float64 // observations the estimate is based on
}

// Quantile estimates the q-quantile (0 < q < 1) like Prometheus' histogram_quantile:
// find the bucket holding rank q·count and interpolate linearly inside it; the first
// bucket starts at 0; a rank in the +Inf bucket returns the last finite bound.
// ok is false when the histogram is empty.
func (h Hist) Quantile(q float64) (Quantile, bool) {
	if h.Count <= 0 || len(h.Bounds) == 0 || math.IsNaN(q) {
		return Quantile{}, false
	}
	total := h.Count
	if last := h.Cumulative[len(h.Cumulative)-1]; math.IsInf(h.Bounds[len(h.Bounds)-1], 1) && last > 0 {
		total = last
	}
	rank := q * total
	lo, below := 0.0, 0.0
	for i, hi := range h.Bounds {
		c := h.Cumulative[i]
		if c >= rank && c > below {
			if math.IsInf(hi, 1) {
				return Quantile{Q: q, Value: lo, Lo: lo, Hi: hi, Count: total}, true
			}
			v := lo + (hi-lo)*(rank-below)/(c-below)
			return Quantile{Q: q, Value: v, Lo: lo, Hi: hi, Count: total}, true
		}
		lo, below = hi, c
	}
	// The rank lies above every listed bucket: the buckets lack +Inf and _count is
	// larger. All that is known is "above the last bound".
	return Quantile{Q: q, Value: lo, Lo: lo, Hi: math.Inf(1), Count: total}, true
}

// String renders a quantile in milliseconds with its bucket, e.g. "12.3 ms in (8 ms, 16 ms]".
func (q Quantile) String() string {
	if math.IsInf(q.Hi, 1) {
		return fmt.Sprintf("> %s (beyond the last bucket)", units.Duration(q.Lo))
	}
	return fmt.Sprintf("%s in (%s, %s]", units.Duration(q.Value), units.Duration(q.Lo), units.Duration(q.Hi))
}

// Window is a member's scrapes over a run, oldest first: deltas are taken between
// consecutive scrapes and summed, so a restart between two scrapes loses only what
// happened before it in that one interval.
type Window struct {
	Member string
	Snaps  []*Snapshot
}

// Between is the window of two scrapes of one member, a before b; nil (no
// deltas: every figure unknown) when either is missing.
func Between(a, b *Snapshot) *Window {
	if a == nil || b == nil {
		return nil
	}
	return &Window{Snaps: []*Snapshot{a, b}}
}

// Usable reports whether the window has two scrapes to take deltas from.
func (w *Window) Usable() bool { return w != nil && len(w.Snaps) >= 2 }

// Seconds is the time between the first and last scrape; 0 when unknown.
func (w *Window) Seconds() float64 {
	if !w.Usable() {
		return 0
	}
	first, last := w.Snaps[0].Time, w.Snaps[len(w.Snaps)-1].Time
	if first.IsZero() || last.IsZero() {
		return 0
	}
	return last.Sub(first).Seconds()
}

// Last is the newest scrape, or nil.
func (w *Window) Last() *Snapshot {
	if w == nil || len(w.Snaps) == 0 {
		return nil
	}
	return w.Snaps[len(w.Snaps)-1]
}

// CounterDelta is how much a counter grew over the window, resets handled: when a
// value drops, the counter restarted from zero and the new value is all growth.
// ok is false when the window is unusable or the counter is absent from the last scrape.
func (w *Window) CounterDelta(name string, sel Labels) (float64, bool) {
	return w.sumRises(name, sel, true)
}

// Increases is CounterDelta for a counter whose count after a restart is no
// event of the window: a drop (the process restarted) or a series that appears
// adds nothing, not even the count it starts at (a restarted member counts the
// leader it finds as a leader change); the rises before and after add up.
func (w *Window) Increases(name string, sel Labels) (float64, bool) {
	return w.sumRises(name, sel, false)
}

// sumRises adds the counter's rises between consecutive scrapes; where the
// series appeared or dropped (a reset) it adds the new count when afterReset
// says so.
func (w *Window) sumRises(name string, sel Labels, afterReset bool) (float64, bool) {
	if !w.Usable() {
		return 0, false
	}
	total, seen := 0.0, false
	prev, prevOK := w.Snaps[0].Value(name, sel)
	for _, s := range w.Snaps[1:] {
		v, ok := s.Value(name, sel)
		if !ok {
			continue
		}
		switch {
		case !prevOK || v < prev:
			// Absent before, present now: the series appeared (etcd creates labelled
			// series on first use); or it dropped: the process restarted. All of it
			// is growth within the window, where the caller counts it so.
			if afterReset {
				total += v
			}
		default:
			total += v - prev
		}
		prev, prevOK, seen = v, true, true
	}
	if _, ok := w.Last().Value(name, sel); !ok || !seen {
		return 0, false
	}
	return total, true
}

// Gauge is the value in the last scrape.
func (w *Window) Gauge(name string, sel Labels) (float64, bool) {
	s := w.Last()
	if s == nil {
		return 0, false
	}
	return s.Value(name, sel)
}

// GaugeMax is the largest value over the window's scrapes (e.g. peak RSS).
func (w *Window) GaugeMax(name string, sel Labels) (float64, bool) {
	if w == nil {
		return 0, false
	}
	max, ok := 0.0, false
	for _, s := range w.Snaps {
		if v, found := s.Value(name, sel); found && (!ok || v > max) {
			max, ok = v, true
		}
	}
	return max, ok
}

// HistDelta is the histogram of the observations made over the window.
// ok is false when the window is unusable or the histogram is absent from the last scrape.
func (w *Window) HistDelta(name string, sel Labels) (Hist, bool) {
	if !w.Usable() {
		return Hist{}, false
	}
	var total Hist
	have := false
	prev, prevOK := w.Snaps[0].Histogram(name, sel)
	for _, s := range w.Snaps[1:] {
		h, ok := s.Histogram(name, sel)
		if !ok {
			continue
		}
		d := h
		if prevOK {
			d = h.sub(prev)
		}
		if !have {
			total, have = d, true
		} else {
			total = total.add(d)
		}
		prev, prevOK = h, true
	}
	if _, ok := w.Last().Histogram(name, sel); !ok || !have {
		return Hist{}, false
	}
	return total, true
}

// parseTime reads a Scrape.Time; the zero time when it does not parse.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
