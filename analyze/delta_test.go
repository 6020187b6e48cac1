package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
)

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name           string
		h              Hist
		q              float64
		want, lo, hi   float64
		wantOK         bool
		wantString     string
		wantStringSkip bool
	}{
		{name: "first bucket starts at 0", h: Hist{Bounds: []float64{1, 2, 4, inf}, Cumulative: []float64{10, 20, 20, 20}, Count: 20},
			q: 0.5, want: 1, lo: 0, hi: 1, wantOK: true},
		{name: "interpolated inside a bucket", h: Hist{Bounds: []float64{1, 2, 4, inf}, Cumulative: []float64{10, 20, 20, 20}, Count: 20},
			q: 0.75, want: 1.5, lo: 1, hi: 2, wantOK: true},
		{name: "rank in +Inf gives the last finite bound", h: Hist{Bounds: []float64{1, 2, 4, inf}, Cumulative: []float64{0, 0, 0, 10}, Count: 10},
			q: 0.99, want: 4, lo: 4, hi: inf, wantOK: true, wantString: "> 4 s (beyond the last bucket)"},
		{name: "wal p99 in (64 ms, 128 ms]", h: Hist{Bounds: append(append([]float64{}, diskBuckets...), inf), Cumulative: append(cumAt(90, 10, 0.128), 100), Count: 100},
			q: 0.99, want: 0.1216, lo: 0.064, hi: 0.128, wantOK: true, wantString: "122 ms in (64 ms, 128 ms]"},
		{name: "empty", h: Hist{Bounds: []float64{1, inf}, Cumulative: []float64{0, 0}}, q: 0.99},
		{name: "no +Inf bucket, count beyond", h: Hist{Bounds: []float64{1, 2}, Cumulative: []float64{1, 2}, Count: 10},
			q: 0.99, want: 2, lo: 2, hi: inf, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.h.Quantile(tc.q)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if math.Abs(got.Value-tc.want) > 1e-9 || got.Lo != tc.lo || got.Hi != tc.hi {
				t.Errorf("Quantile(%g) = %g in (%g, %g], want %g in (%g, %g]", tc.q, got.Value, got.Lo, got.Hi, tc.want, tc.lo, tc.hi)
			}
			if tc.wantString != "" && got.String() != tc.wantString {
				t.Errorf("String() = %q, want %q", got.String(), tc.wantString)
			}
		})
	}
}

func snapsAt(t *testing.T, texts ...string) *Window {
	t.Helper()
	w := &Window{Member: "m"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, text := range texts {
		s := mustParse(t, text)
		s.Time = t0.Add(time.Duration(i) * 10 * time.Second)
		w.Snaps = append(w.Snaps, s)
	}
	return w
}

func TestCounterDeltaResets(t *testing.T) {
	c := func(v float64) string { return newText().counter(metrics.PutTotal, v).String() }
	for _, tc := range []struct {
		name   string
		values []float64
		want   float64
	}{
		{"plain", []float64{100, 150}, 50},
		{"reset in between", []float64{100, 150, 20}, 70},
		{"reset at the end", []float64{100, 30}, 30},
		{"no growth", []float64{5, 5, 5}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var texts []string
			for _, v := range tc.values {
				texts = append(texts, c(v))
			}
			got, ok := snapsAt(t, texts...).CounterDelta(metrics.PutTotal, nil)
			if !ok || got != tc.want {
				t.Errorf("CounterDelta = %g, %v; want %g", got, ok, tc.want)
			}
		})
	}
	// Absent from the last scrape: unknown, never zero.
	w := snapsAt(t, c(1), newText().gauge("etcd_other", 1).String())
	if _, ok := w.CounterDelta(metrics.PutTotal, nil); ok {
		t.Error("CounterDelta of a counter absent from the last scrape is ok")
	}
	if _, ok := snapsAt(t, c(1)).CounterDelta(metrics.PutTotal, nil); ok {
		t.Error("CounterDelta of a single scrape is ok")
	}
}

func TestHistDelta(t *testing.T) {
	before := newText().hist(metrics.WALFsync, "", diskBuckets, cumAt(1000, 0, 1), 0.5).String()
	// 100 more fsyncs, 10 of them in (64 ms, 128 ms].
	after := newText().hist(metrics.WALFsync, "", diskBuckets, cumAt(1090, 10, 0.128), 1.9).String()
	h, ok := snapsAt(t, before, after).HistDelta(metrics.WALFsync, nil)
	if !ok || h.Count != 100 {
		t.Fatalf("HistDelta count = %g, %v; want 100", h.Count, ok)
	}
	q, _ := h.Quantile(0.99)
	if q.Lo != 0.064 || q.Hi != 0.128 {
		t.Errorf("p99 bucket (%g, %g], want (0.064, 0.128]", q.Lo, q.Hi)
	}
	// A restart between scrapes: the after histogram is all new.
	restarted := newText().hist(metrics.WALFsync, "", diskBuckets, cumAt(40, 0, 1), 0.02).String()
	h, _ = snapsAt(t, before, restarted).HistDelta(metrics.WALFsync, nil)
	if h.Count != 40 {
		t.Errorf("HistDelta across a restart count = %g, want 40", h.Count)
	}
	// A restart whose new process already counts more in every bucket: only the
	// sum, which can never shrink, shows it (before the fix: 100 observations
	// with a negative sum).
	busier := newText().hist(metrics.WALFsync, "", diskBuckets, cumAt(1100, 0, 1), 0.4).String()
	h, _ = snapsAt(t, before, busier).HistDelta(metrics.WALFsync, nil)
	if h.Count != 1100 || h.Sum != 0.4 {
		t.Errorf("HistDelta across a restart with a smaller sum: count %g sum %g, want 1100 and 0.4", h.Count, h.Sum)
	}
}

func TestCountAbove(t *testing.T) {
	h := Hist{Bounds: []float64{0.001, 0.002, 0.004, math.Inf(1)}, Cumulative: []float64{10, 15, 18, 20}, Count: 20}
	for _, tc := range []struct{ v, want float64 }{
		{0, 20}, {0.001, 10}, {0.0015, 5}, {0.002, 5}, {0.004, 2}, {1, 0},
	} {
		if got := h.countAbove(tc.v); got != tc.want {
			t.Errorf("countAbove(%g) = %g, want %g", tc.v, got, tc.want)
		}
	}
}

// TestBetween: two scrapes make a window whose counter deltas handle resets; a
// missing scrape makes no window, so every delta is unknown.
func TestBetween(t *testing.T) {
	a := snapsAt(t, newText().counter("c_total", 10).String()).Snaps[0]
	b := snapsAt(t, newText().counter("c_total", 4).String()).Snaps[0]
	if d, ok := Between(a, b).CounterDelta("c_total", nil); !ok || d != 4 {
		t.Errorf("after a reset: delta %v %v, want 4 (all of the new value)", d, ok)
	}
	if d, ok := Between(b, a).CounterDelta("c_total", nil); !ok || d != 6 {
		t.Errorf("delta %v %v, want 6", d, ok)
	}
	for _, w := range []*Window{Between(nil, b), Between(a, nil)} {
		if _, ok := w.CounterDelta("c_total", nil); ok || w.Usable() {
			t.Error("a window with a missing scrape gave a delta")
		}
	}
}
