package analyze

import (
	"strconv"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

func TestIntervalQuantiles(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	text := func(c1, c2, c4, count int) string {
		return "# TYPE " + metrics.WALFsync + " histogram\n" +
			metrics.WALFsync + `_bucket{le="0.001"} ` + strconv.Itoa(c1) + "\n" +
			metrics.WALFsync + `_bucket{le="0.002"} ` + strconv.Itoa(c2) + "\n" +
			metrics.WALFsync + `_bucket{le="0.004"} ` + strconv.Itoa(c4) + "\n" +
			metrics.WALFsync + `_bucket{le="+Inf"} ` + strconv.Itoa(count) + "\n" +
			metrics.WALFsync + "_sum 0\n" + metrics.WALFsync + "_count " + strconv.Itoa(count) + "\n"
	}
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano) }
	scrapes := []results.Scrape{
		{Member: "b", Time: at(0), Text: text(0, 0, 0, 0)},
		{Member: "a", Time: at(2), Text: text(100, 100, 100, 100)}, // out of order on purpose
		{Member: "a", Time: at(0), Text: text(0, 0, 0, 0)},
		{Member: "a", Time: at(1), Text: "garbage{"},               // does not parse: skipped
		{Member: "a", Time: at(3), Error: "timeout"},               // failed: skipped
		{Member: "a", Time: at(4), Text: text(100, 110, 200, 200)}, // 100 more, 90 of them in (2, 4] ms
		{Member: "a", Time: at(5), Text: text(100, 110, 200, 200)}, // nothing observed: no point
		{Member: "b", Time: at(5), Text: text(0, 0, 0, 0)},
	}
	got := IntervalQuantiles(scrapes, 0.5, metrics.WALFsync, metrics.BackendCommit)
	if len(got) != 1 || got[0].Member != "a" || got[0].Metric != metrics.WALFsync {
		t.Fatalf("series %+v, want one WAL series of a", got)
	}
	pts := got[0].Points
	if len(pts) != 2 {
		t.Fatalf("points %+v, want 2", pts)
	}
	if !pts[0].From.Equal(t0) || !pts[0].To.Equal(t0.Add(2*time.Second)) || pts[0].Value != 0.0005 {
		t.Errorf("first point %+v, want p50 0.5 ms over (0 s, 2 s]", pts[0])
	}
	if want := 0.002 + 0.002*40/90; pts[1].Value < want-1e-12 || pts[1].Value > want+1e-12 {
		t.Errorf("second point p50 %v, want %v", pts[1].Value, want)
	}
}
