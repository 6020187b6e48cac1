package bundle

import (
	"fmt"
	"math"
	"net/url"
	"time"

	"go.etcd.io/etcd/server/v3/storage"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Rates are the throughputs the repair cost is computed with, MB/s; 0 takes
// inspect's assumed defaults (DefaultDiskMBps, DefaultNetMBps) and says so.
type Rates struct {
	DiskMBps float64
	NetMBps  float64
}

// RepairCost is what repairing one member would cost, from what the bundle holds.
type RepairCost struct {
	Member     string `json:"member"`
	DBBytes    int64  `json:"db_bytes"`
	InUseBytes int64  `json:"in_use_bytes"`
	// DefragS is how long a defrag would block the member's reads and writes: it
	// copies the in-use part into a new file (etcd op-guide/maintenance.md), at
	// the disk's copy rate.
	DefragS float64 `json:"defrag_s"`
	// CatchUpS is how long a new member takes to receive and write the db (the
	// leader's snapshot): db size over the slower of disk and network (MTTR ≈
	// data size / I/O throughput); replaying the entries written meanwhile is not included.
	CatchUpS float64 `json:"catch_up_s"`
	// QuotaBytes is the backend quota, from the member's metrics or etcd's default.
	QuotaBytes  int64  `json:"quota_bytes"`
	QuotaSource string `json:"quota_source"`
	// GrowthBytesPerS is the db's growth between the two scrapes (live only).
	GrowthBytesPerS *float64 `json:"growth_bytes_per_s,omitempty"`
	// QuotaS is the time until the db reaches the quota at that growth; nil when
	// it did not grow in the window (or offline, with no window).
	QuotaS *float64 `json:"quota_s,omitempty"`
}

// Repair is the repair cost of every member, and the rates it assumed.
type Repair struct {
	DiskMBps float64      `json:"disk_mb_per_s"`
	NetMBps  float64      `json:"net_mb_per_s"`
	Assumed  []string     `json:"assumed,omitempty"`
	Members  []RepairCost `json:"members"`
	Basis    string       `json:"basis"`
}

const repairBasis = "defrag: in-use bytes / disk MB/s (a defrag rewrites the in-use part and blocks the member meanwhile, etcd op-guide/maintenance.md); " +
	"catch-up: db bytes / min(disk, network) MB/s (MTTR ≈ data size / I/O throughput); " +
	"quota: (quota - db size) / the db's growth between the two scrapes (etcd_mvcc_db_total_size_in_bytes), extrapolated linearly from a short window"

// newRepair fills the rates, defaults stated as assumed.
func newRepair(r Rates) *Repair {
	rep := &Repair{DiskMBps: r.DiskMBps, NetMBps: r.NetMBps, Basis: repairBasis}
	if rep.DiskMBps <= 0 {
		rep.DiskMBps = inspect.DefaultDiskMBps
		rep.Assumed = append(rep.Assumed, fmt.Sprintf("disk copies %d MB/s (hardware guide small-tier example; set --disk-mbps)", inspect.DefaultDiskMBps))
	}
	if rep.NetMBps <= 0 {
		rep.NetMBps = inspect.DefaultNetMBps
		rep.Assumed = append(rep.Assumed, fmt.Sprintf("network to a new member carries %d MB/s (1 GbE; set --net-mbps)", inspect.DefaultNetMBps))
	}
	return rep
}

// cost is one member's repair cost without growth.
func (r *Repair) cost(member string, db, inUse, quota int64, quotaSource string) RepairCost {
	if quota <= 0 {
		quota, quotaSource = storage.DefaultQuotaBytes, "etcd's default (assumed)"
	}
	return RepairCost{Member: member, DBBytes: db, InUseBytes: inUse, QuotaBytes: quota, QuotaSource: quotaSource,
		DefragS:  float64(inUse) / (r.DiskMBps * 1e6),
		CatchUpS: inspect.EstimateRecovery(db, r.DiskMBps, r.NetMBps).Seconds}
}

// liveRepair is every scraped member's repair cost, with the db's growth
// between its first and last good scrape.
func liveRepair(scrapes []results.Scrape, members []MemberStatus, rates Rates) *Repair {
	rep := newRepair(rates)
	type seen struct {
		first, last *analyze.Snapshot
		t0, t1      string
	}
	by := map[string]*seen{}
	var order []string
	for _, sc := range scrapes {
		if sc.Error != "" {
			continue
		}
		s, err := analyze.Parse(sc.Text)
		if err != nil {
			continue
		}
		e := by[sc.Member]
		if e == nil {
			e = &seen{first: s, t0: sc.Time}
			by[sc.Member] = e
			order = append(order, sc.Member)
		}
		e.last, e.t1 = s, sc.Time
	}
	for _, name := range order {
		e := by[name]
		db, ok := e.last.Value(metrics.DBTotal, nil)
		if !ok {
			continue
		}
		inUse, _ := e.last.Value(metrics.DBInUse, nil)
		quota, qok := e.last.Value(metrics.Quota, nil)
		src := "metrics (" + metrics.Quota + ")"
		if !qok {
			quota, src = 0, ""
		}
		c := rep.cost(memberLabel(name, members), int64(db), int64(inUse), int64(quota), src)
		if db0, ok := e.first.Value(metrics.DBTotal, nil); ok && e.first != e.last {
			if secs := scrapeSeconds(e.t0, e.t1); secs > 0 {
				g := (db - db0) / secs
				c.GrowthBytesPerS = &g
				if g > 0 {
					q := math.Max(float64(c.QuotaBytes)-db, 0) / g
					c.QuotaS = &q
				}
			}
		}
		rep.Members = append(rep.Members, c)
	}
	return rep
}

// offlineRepair is each data dir's repair cost (no growth: no window).
func offlineRepair(o *Offline, rates Rates) *Repair {
	rep := newRepair(rates)
	for _, d := range o.Dirs {
		if d.DB != nil {
			rep.Members = append(rep.Members, rep.cost(d.Path, d.DB.SizeBytes, d.DB.InUseBytes, 0, ""))
		}
	}
	return rep
}

// memberLabel names a scraped host:port by the member whose endpoint it is.
func memberLabel(hostPort string, ms []MemberStatus) string {
	for _, m := range ms {
		if u, err := url.Parse(m.Endpoint); err == nil && u.Host == hostPort && m.Name != "" {
			return m.Name + " " + hostPort
		}
	}
	return hostPort
}

// scrapeSeconds is the time between two scrapes' RFC 3339 times; 0 when unknown.
func scrapeSeconds(a, b string) float64 {
	t0, err0 := time.Parse(time.RFC3339Nano, a)
	t1, err1 := time.Parse(time.RFC3339Nano, b)
	if err0 != nil || err1 != nil {
		return 0
	}
	return t1.Sub(t0).Seconds()
}
