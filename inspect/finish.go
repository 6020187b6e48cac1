package inspect

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Options are the settings both modes share. Zero values of the tuning settings
// mean "etcd's default", which the report then lists as an assumption.
type Options struct {
	// Depth groups keys into prefixes by their first Depth '/'-separated segments (≥ 1).
	Depth int
	// Top is the number of largest keys listed.
	Top int
	// KeyPrefix restricts the inspection to keys under it.
	KeyPrefix string
	// MaxRequestBytes is the server's --max-request-bytes; keys whose key+value reach
	// two thirds of it are listed as near the limit.
	MaxRequestBytes int64
	// QuotaBytes overrides the quota read from the cluster (status or /metrics).
	QuotaBytes int64
	// DiskMBps and NetMBps are a new member's disk write and network throughput in
	// MB/s, for the recovery estimate.
	DiskMBps, NetMBps float64
	// HeartbeatMs, ElectionMs and SnapshotCount are the members' settings; the API
	// does not expose them.
	HeartbeatMs, ElectionMs float64
	SnapshotCount           int64
	// Previous is an earlier inspection, for the growth rate.
	Previous *Previous
}

// Defaults for the recovery estimate: the hardware guide's small-tier example disk
// (m4.large, 56 MB/s) and a 1 GbE link (125 MB/s), the general guidance on the same page.
const (
	DefaultDiskMBps = 56
	DefaultNetMBps  = 125
)

// etcdDefaults are the server's own defaults, from the embedded release's config.
var etcdDefaults = embed.NewConfig()

// DefaultMaxRequestBytes is etcd's --max-request-bytes default (1.5 MiB).
const DefaultMaxRequestBytes = embed.DefaultMaxRequestBytes

func (o Options) nearLimit() int64 { return o.MaxRequestBytes * 2 / 3 }

// clusterMetrics are the figures read from the members' /metrics; nil is unknown.
type clusterMetrics struct {
	quota       *float64
	rttP99      *float64 // seconds, worst member
	walFsyncP99 *float64 // seconds, worst member
	err         string
}

// scrapeMetrics reads each member's /metrics once. The histograms are cumulative
// since each member started: the best a one-shot inspection can do, and said so.
func scrapeMetrics(ctx context.Context, hc *http.Client, urls []string) clusterMetrics {
	var m clusterMetrics
	worst := func(dst **float64, v float64) {
		if *dst == nil || v > **dst {
			*dst = &v
		}
	}
	for _, u := range urls {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		text, err := analyze.Fetch(cctx, hc, u)
		cancel()
		var snap *analyze.Snapshot
		if err == nil {
			snap, err = analyze.Parse(text)
		}
		if err != nil {
			if m.err == "" {
				m.err = err.Error()
			}
			continue
		}
		if v, ok := snap.Value(metrics.Quota, nil); ok {
			worst(&m.quota, v)
		}
		if h, ok := snap.Histogram(metrics.PeerRTT, nil); ok {
			if q, ok := h.Quantile(0.99); ok {
				worst(&m.rttP99, q.Value)
			}
		}
		if h, ok := snap.Histogram(metrics.WALFsync, nil); ok {
			if q, ok := h.Quantile(0.99); ok {
				worst(&m.walFsyncP99, q.Value)
			}
		}
	}
	return m
}

// EstimateRecovery is the time a new member (or learner) needs to receive and
// write a snapshot of dbBytes when its disk writes diskMBps and the network to it
// carries netMBps (MB/s): the leader streams the db while the new member writes
// it, so the slower pipe decides. drill compares it with a measured replacement.
func EstimateRecovery(dbBytes int64, diskMBps, netMBps float64) Recovery {
	return Recovery{DiskMBps: diskMBps, NetMBps: netMBps, Seconds: float64(dbBytes) / (min(diskMBps, netMBps) * 1e6),
		Basis: "db size / min(disk, network) throughput; replaying the entries written meanwhile is not included"}
}

// finish completes a report whose data figures are filled: db ratios, quota,
// recovery, growth, tuning, and the findings.
func finish(r *Result, o Options, m clusterMetrics) {
	db := &r.DB
	if db.SizeBytes > 0 {
		db.InUseRatio = float64(db.InUseBytes) / float64(db.SizeBytes)
	}
	switch {
	case o.QuotaBytes > 0:
		db.QuotaBytes, db.QuotaSource = o.QuotaBytes, "--quota-bytes"
	case db.QuotaSource != "":
	case m.quota != nil:
		db.QuotaBytes, db.QuotaSource = int64(*m.quota), "metrics ("+metrics.Quota+")"
	default:
		db.QuotaBytes, db.QuotaSource = storage.DefaultQuotaBytes, "etcd's default (assumed)"
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("quota is etcd's default %s (not read from the cluster; set --quota-bytes)", units.Bytes(storage.DefaultQuotaBytes)))
	}
	db.QuotaUsed = float64(db.SizeBytes) / float64(db.QuotaBytes)

	disk, net := o.DiskMBps, o.NetMBps
	if disk <= 0 {
		disk = DefaultDiskMBps
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("new member's disk writes %d MB/s (hardware guide small-tier example; set --disk-mbps)", DefaultDiskMBps))
	}
	if net <= 0 {
		net = DefaultNetMBps
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("network to a new member carries %d MB/s (1 GbE; set --net-mbps)", DefaultNetMBps))
	}
	r.Recovery = EstimateRecovery(db.SizeBytes, disk, net)

	if p := o.Previous; p != nil {
		days := r.InspectedAt.Sub(p.At).Hours() / 24
		if days <= 0 {
			r.Assumptions = append(r.Assumptions, fmt.Sprintf("--previous (%s) is not older than this inspection; growth not computed", p.At.Format(time.RFC3339)))
		} else {
			g := &Growth{PreviousAt: p.At, PreviousSizeBytes: p.SizeBytes, PreviousFrom: p.From,
				BytesPerDay: float64(db.SizeBytes-p.SizeBytes) / days}
			if g.BytesPerDay > 0 {
				d := float64(db.QuotaBytes-db.SizeBytes) / g.BytesPerDay
				g.DaysToQuota = &d
			}
			r.Growth = g
		}
	}

	t := &r.Tuning
	t.HeartbeatMs, t.ElectionMs, t.SnapshotCount = o.HeartbeatMs, o.ElectionMs, o.SnapshotCount
	if t.HeartbeatMs <= 0 {
		t.HeartbeatMs = float64(etcdDefaults.TickMs)
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("heartbeat interval is etcd's default %d ms (the API does not expose it; set --heartbeat-ms)", etcdDefaults.TickMs))
	}
	if t.ElectionMs <= 0 {
		t.ElectionMs = float64(etcdDefaults.ElectionMs)
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("election timeout is etcd's default %d ms (set --election-ms)", etcdDefaults.ElectionMs))
	}
	if t.SnapshotCount <= 0 {
		t.SnapshotCount = int64(etcdDefaults.SnapshotCount)
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("snapshot count is etcd's default %d (set --snapshot-count)", etcdDefaults.SnapshotCount))
	}
	ms := func(s *float64) *float64 {
		if s == nil {
			return nil
		}
		v := *s * 1000
		return &v
	}
	t.PeerRTTP99Ms, t.WALFsyncP99Ms = ms(m.rttP99), ms(m.walFsyncP99)
	if r.Total.Keys > 0 {
		t.RaftLogBytes = t.SnapshotCount * (r.Total.KeyBytes + r.Total.ValueBytes) / r.Total.Keys
	}
	t.Source = "https://etcd.io/docs/v3.6/tuning/"
	if r.Source == "live" && (t.PeerRTTP99Ms != nil || t.WALFsyncP99Ms != nil) {
		r.Assumptions = append(r.Assumptions, "peer RTT and WAL fsync p99 are cumulative since each member started (one scrape, no window)")
	}
	r.Findings = findings(r, o)
}
