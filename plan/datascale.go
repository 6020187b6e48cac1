package plan

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Projection sources.
const (
	SourceDBMax  = "etcd docs (dev-guide/limit.md: 8 GiB suggested maximum db size)"
	SourceQuota  = "etcd --quota-backend-bytes (" + metrics.Quota + "): writes fail with NOSPACE past it"
	SourceMemKey = "etcdctl check datascale (" + metrics.RSS + " before and after the fill)"
)

// suggestedMaxDB is etcd's suggested maximum db size (SourceDBMax).
const suggestedMaxDB = 8 << 30

// Datascale is what filling keys cost and what it projects: plan --datascale's
// "datascale" object.
type Datascale struct {
	Keys         uint64  `json:"keys"`
	KeySize      int     `json:"key_size"`
	ValueSize    int     `json:"value_size"`
	FillSeconds  float64 `json:"fill_seconds"`
	DBBefore     int64   `json:"db_size_before_bytes"`
	DBAfter      int64   `json:"db_size_after_bytes"`
	DBInUseAfter int64   `json:"db_size_in_use_after_bytes"`
	RSSBefore    int64   `json:"rss_before_bytes"`
	RSSAfter     int64   `json:"rss_after_bytes"`
	DBPerKey     float64 `json:"db_bytes_per_key"`
	// RSSPerKey is null when the fill did not raise the RSS measurably.
	RSSPerKey   *float64 `json:"rss_bytes_per_key"`
	QuotaBytes  int64    `json:"quota_bytes"`
	MemoryBytes int64    `json:"memory_bytes"`
	// Projections: keys of this shape that fit, from the current db and RSS.
	KeysInQuota  *float64 `json:"keys_in_quota"`
	KeysInMemory *float64 `json:"keys_in_memory"`
	KeysIn8GiB   *float64 `json:"keys_in_suggested_max_db"`
	Notes        []string `json:"notes,omitempty"`
}

// Sizes are a member's db and memory figures at one moment.
type Sizes struct {
	DB, DBInUse, RSS, Quota int64
}

// ReadSizes reads the db size from Status of ep and the RSS and quota from the
// member's /metrics at murl.
func ReadSizes(ctx context.Context, cli *clientv3.Client, httpc *http.Client, ep, murl string) (Sizes, error) {
	st, err := cli.Status(ctx, ep)
	if err != nil {
		return Sizes{}, fmt.Errorf("status of %s: %w", ep, err)
	}
	text, err := analyze.Fetch(ctx, httpc, murl)
	if err != nil {
		return Sizes{}, err
	}
	snap, err := analyze.Parse(text)
	if err != nil {
		return Sizes{}, fmt.Errorf("%s: %w", murl, err)
	}
	rss, ok := snap.Value(metrics.RSS, nil)
	if !ok {
		return Sizes{}, fmt.Errorf("%s has no %s", murl, metrics.RSS)
	}
	quota, _ := snap.Value(metrics.Quota, nil)
	return Sizes{DB: st.DbSize, DBInUse: st.DbSizeInUse, RSS: int64(rss), Quota: int64(quota)}, nil
}

// Project fills d's per-key costs and projections from the member's sizes
// before and after the fill of d.Keys keys. memoryBytes is what the member has
// (0: unknown, and memoryNote says why, or what to mind, when not empty).
func (d *Datascale) Project(before, after Sizes, memoryBytes int64, memoryNote string) {
	d.DBBefore, d.DBAfter, d.DBInUseAfter = before.DB, after.DB, after.DBInUse
	d.RSSBefore, d.RSSAfter, d.QuotaBytes = before.RSS, after.RSS, after.Quota
	d.DBPerKey = float64(after.DB-before.DB) / float64(d.Keys)
	if diff := after.RSS - before.RSS; diff > 0 {
		v := float64(diff) / float64(d.Keys)
		d.RSSPerKey = &v
	} else {
		d.Notes = append(d.Notes, "the fill did not raise the member's RSS measurably: fill more keys")
	}
	if d.DBPerKey <= 0 {
		// bbolt grows its file in steps; a small fill may land in free pages.
		d.DBPerKey = float64(after.DBInUse-before.DBInUse) / float64(d.Keys)
		d.Notes = append(d.Notes, "the db file did not grow (free pages were reused): db bytes per key from the in-use size")
	}
	d.MemoryBytes = memoryBytes
	if memoryNote != "" {
		d.Notes = append(d.Notes, memoryNote)
	}
	if d.DBPerKey > 0 {
		if d.QuotaBytes > 0 {
			v := math.Max(0, float64(d.QuotaBytes-after.DB)) / d.DBPerKey
			d.KeysInQuota = &v
		}
		v := math.Max(0, float64(suggestedMaxDB-after.DB)) / d.DBPerKey
		d.KeysIn8GiB = &v
	}
	if d.RSSPerKey != nil && d.MemoryBytes > 0 {
		v := math.Max(0, float64(d.MemoryBytes-after.RSS)) / *d.RSSPerKey
		d.KeysInMemory = &v
	}
}

// Summary says in one line what the fill cost and what fits.
func (d *Datascale) Summary() string {
	parts := []string{fmt.Sprintf("%d keys of %d+%d bytes: %.0f db bytes per key", d.Keys, d.KeySize, d.ValueSize, d.DBPerKey)}
	if d.RSSPerKey != nil {
		parts = append(parts, fmt.Sprintf("%.0f RSS bytes per key", *d.RSSPerKey))
	}
	if d.KeysInQuota != nil {
		parts = append(parts, fmt.Sprintf("about %s more keys fit in the %s quota", units.Count(*d.KeysInQuota), units.Bytes(d.QuotaBytes)))
	}
	if d.KeysInMemory != nil {
		parts = append(parts, fmt.Sprintf("about %s more in %s of memory", units.Count(*d.KeysInMemory), units.Bytes(d.MemoryBytes)))
	}
	return strings.Join(parts, "; ")
}

// DatascaleResult is plan --datascale's answer: a verdict (pass: a measurement
// judges nothing), no findings, and the measurement.
type DatascaleResult struct {
	Verdict   finding.Verdict   `json:"verdict"`
	Findings  []finding.Finding `json:"findings"`
	Datascale Datascale         `json:"datascale"`
}

// Result is d's answer, its summary the verdict's.
func (d Datascale) Result() DatascaleResult {
	return DatascaleResult{Datascale: d, Findings: []finding.Finding{},
		Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone, Summary: d.Summary()}}
}

// MemberMemory is the memory of the member datascale filled, when it is on this
// host (embedded, or every endpoint on loopback), with a note on what to mind;
// 0 and why when it is remote. hostMemory is this host's memory in bytes.
func MemberMemory(embedded bool, endpoints []string, hostMemory func() int64) (int64, string) {
	switch {
	case embedded:
		return hostMemory(), "embedded etcd: its RSS includes this process's client"
	case hardware.AllLoopback(endpoints):
		return hostMemory(), ""
	}
	return 0, "remote member: its memory is unknown here, so keys in memory are not projected"
}
