package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/metrics"
)

// walFsyncText is a member's /metrics holding only the WAL fsync histogram, whose
// buckets hold the given counts (not cumulative) at le = 1 ms · 2^k.
func walFsyncText(counts map[float64]uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s histogram\n", metrics.WALFsync)
	var cum uint64
	var sum float64
	for le := 0.001; le <= 8.192; le *= 2 {
		cum += counts[le]
		sum += le * float64(counts[le])
		fmt.Fprintf(&b, "%s_bucket{le=\"%g\"} %d\n", metrics.WALFsync, le, cum)
	}
	fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", metrics.WALFsync, cum, metrics.WALFsync, sum, metrics.WALFsync, cum)
	return b.String()
}

// TestP99BucketSameFromBothSources: the same counts give the same p99 bucket
// whether the window's edges are bench's own scrapes of /metrics or the samples
// Prometheus stored of them. le is an inclusive upper bound, so the p99 lies in
// the first bucket whose cumulative count reaches 99%: with 990 of 1000 fsyncs
// at or below 32 ms (10 of them exactly at the bound) that is (16, 32]; with
// 989, (32, 64].
func TestP99BucketSameFromBothSources(t *testing.T) {
	before := walFsyncText(map[float64]uint64{0.001: 50})
	for _, tc := range []struct {
		name   string
		at32   uint64 // of 1000 fsyncs in the run, how many in (16, 32]
		lo, hi float64
	}{
		{"exactly 99% at or below 32 ms", 10, 0.016, 0.032},
		{"98.9% at or below 32 ms", 9, 0.032, 0.064},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := walFsyncText(map[float64]uint64{0.001: 50 + 980, 0.032: tc.at32, 0.064: 1000 - 980 - tc.at32})
			// Both sources' windows: direct scrapes, and the text rebuilt from
			// what Prometheus stores.
			direct := [2]string{before, after}
			var stored [2]string
			for i, text := range direct {
				series, types := asStored(t, text, "m0:2379")
				rebuilt, err := exposition(series, types)
				if err != nil {
					t.Fatal(err)
				}
				stored[i] = rebuilt
			}
			for name, texts := range map[string][2]string{"scrapes": direct, "prometheus": stored} {
				w := Between(mustParse(t, texts[0]), mustParse(t, texts[1]))
				h, ok := w.HistDelta(metrics.WALFsync, nil)
				if !ok {
					t.Fatalf("%s: no histogram delta", name)
				}
				q, ok := h.Quantile(0.99)
				if !ok || q.Lo != tc.lo || q.Hi != tc.hi || h.Count != 1000 {
					t.Errorf("%s: p99 %s of %g, want in (%g, %g] of 1000", name, q, h.Count, tc.lo, tc.hi)
				}
			}
		})
	}
}
