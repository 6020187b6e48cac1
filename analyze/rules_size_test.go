package analyze

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// rangeWindow is a member's /metrics 10 s apart: n ranges whose p99 lies in
// the bucket ending at rangeLe, sentPer bytes sent per range, and n WAL fsyncs
// in the bucket ending at walLe.
func rangeWindow(n, rangeLe, sentPer, walLe float64) (before, after string) {
	b := etcdBase().counter(metrics.RangeTotal, 0).counter(metrics.PutTotal, 0).counter(metrics.GRPCSent, 0).
		hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, 0, 1), 0).
		hist(metrics.WALFsync, "", diskBuckets, cumAt(0, 0, 1), 0)
	a := etcdBase().counter(metrics.RangeTotal, n).counter(metrics.PutTotal, n).counter(metrics.GRPCSent, n*(sentPer+putResponseBytes)).
		hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, n, rangeLe), n*rangeLe).
		hist(metrics.WALFsync, "", diskBuckets, cumAt(0, n, walLe), n*walLe)
	return b.String(), a.String()
}

// TestRangeDurationNeedsLargeRanges: a slow range is range size's evidence only
// with large ranges. Before the fix, serve's probe (256 B puts, one-key
// linearizable gets) on a throttled disk read range-size warn from the range
// duration alone, though every range returned one key.
func TestRangeDurationNeedsLargeRanges(t *testing.T) {
	probe := &results.Run{Version: results.Version, Valid: true, DurationS: 10, Ops: []results.Op{
		{Op: "put", Requests: 500, BytesSent: 500 * 256},
		{Op: "get", Requests: 500, KeysReceived: 500, BytesReceived: 500 * 300},
	}}
	for _, tc := range []struct {
		name          string
		rangeLe, sent float64
		walLe         float64
		run           *results.Run
		want          finding.Severity // of the range duration
		observed      string
		rangeSize     finding.Severity
		bottle        finding.Class
	}{
		{"slow disk, one-key ranges (bare dumps)", 0.256, 300, 0.128, nil,
			finding.OK, "the ranges are not large (300 B per range over 200 ranges", finding.OK, finding.ClassDisk},
		{"slow disk, serve's probe", 0.256, 300, 0.128, probe,
			finding.OK, "1 keys per range over 500 ranges", finding.OK, finding.ClassDisk},
		{"large ranges, fast disk", 0.256, 4 * mib, 0.001, nil,
			finding.Warn, "with sent 4 MiB per range", finding.Warn, finding.ClassRangeSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := rangeWindow(200, tc.rangeLe, tc.sent, tc.walLe)
			w := snapsAt(t, before, after)
			i := &Input{Run: tc.run, W: w, Members: []*Window{w}, Leader: w}
			c := ruleBy(t, "range duration").check(i)
			if c.Severity != tc.want || !strings.Contains(c.Observed, tc.observed) {
				t.Errorf("range duration = %s %q, want %s containing %q", c.Severity, c.Observed, tc.want, tc.observed)
			}
			if tc.run != nil {
				return // Dumps grades bare /metrics only
			}
			rep, err := Dumps(before, after, Options{WindowSeconds: 10, Cores: 2, MemoryBytes: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			if f := findingOf(t, rep, finding.ClassRangeSize); f.Severity != tc.rangeSize {
				t.Errorf("range-size %s (%s), want %s", f.Severity, f.Summary, tc.rangeSize)
			}
			if rep.Verdict.Bottleneck != string(tc.bottle) {
				t.Errorf("bottleneck %s (%s), want %s", rep.Verdict.Bottleneck, rep.Verdict.Summary, tc.bottle)
			}
		})
	}
}
