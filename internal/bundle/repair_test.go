package bundle

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

func gauges(db, inUse, quota float64) string {
	return "# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes " + ftoa(db) +
		"\n# TYPE etcd_mvcc_db_total_size_in_use_in_bytes gauge\netcd_mvcc_db_total_size_in_use_in_bytes " + ftoa(inUse) +
		"\n# TYPE etcd_server_quota_backend_bytes gauge\netcd_server_quota_backend_bytes " + ftoa(quota) + "\n"
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestLiveRepair computes the repair cost from two scrapes 10 s apart: a
// 100 MB db growing 1 MB in them, 50 MB in use, a 2 GiB quota, the assumed rates.
func TestLiveRepair(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	scrapes := []results.Scrape{
		{Member: "127.0.0.1:2379", Phase: results.PhaseBefore, Time: at(0), Text: gauges(100e6, 50e6, 2147483648)},
		{Member: "127.0.0.1:2379", Phase: results.PhaseAfter, Time: at(10 * time.Second), Text: gauges(101e6, 50e6, 2147483648)},
		{Member: "127.0.0.1:2381", Phase: results.PhaseBefore, Time: at(0), Error: "refused"},
	}
	r := liveRepair(scrapes, []MemberStatus{{Name: "m0", Endpoint: "http://127.0.0.1:2379"}}, Rates{})
	if len(r.Members) != 1 || len(r.Assumed) != 2 || r.DiskMBps != 56 || r.NetMBps != 125 {
		t.Fatalf("repair %+v", r)
	}
	c := r.Members[0]
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6*want }
	if c.Member != "m0 127.0.0.1:2379" || !near(c.DefragS, 50e6/56e6) || !near(c.CatchUpS, 101e6/56e6) ||
		c.GrowthBytesPerS == nil || !near(*c.GrowthBytesPerS, 1e5) || c.QuotaS == nil || !near(*c.QuotaS, (2147483648-101e6)/1e5) ||
		c.QuotaSource == "" {
		t.Errorf("cost %+v growth %v quota in %v", c, deref(c.GrowthBytesPerS), deref(c.QuotaS))
	}

	// A db that shrank (a compaction and defrag in the window) is not growing: no quota time.
	scrapes[1].Text = gauges(90e6, 50e6, 2147483648)
	if c := liveRepair(scrapes, nil, Rates{DiskMBps: 200, NetMBps: 1000}).Members[0]; c.QuotaS != nil || !near(c.DefragS, 50e6/200e6) || !near(c.CatchUpS, 90e6/200e6) {
		t.Errorf("shrinking db: %+v", c)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
