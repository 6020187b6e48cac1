package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/profiles"
)

// Projection sources.
const (
	srcDBMax  = "etcd docs (dev-guide/limit.md: 8 GiB suggested maximum db size)"
	srcQuota  = "etcd --quota-backend-bytes (etcd_server_quota_backend_bytes): writes fail with NOSPACE past it"
	srcMemKey = "etcdctl check datascale (process_resident_memory_bytes before and after the fill)"
)

// backendSettle is how long datascale waits after the fill for the backend to
// commit it, so that Status sees the grown db.
const backendSettle = time.Second

// suggestedMaxDB is etcd's suggested maximum db size.
const suggestedMaxDB = 8 << 30

// datascaleJSON is plan --datascale's -w json object.
type datascaleJSON struct {
	Verdict   finding.Verdict   `json:"verdict"`
	Findings  []finding.Finding `json:"findings"`
	Datascale datascaleResult   `json:"datascale"`
}

// datascaleResult is what filling the keys cost and what it projects.
type datascaleResult struct {
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

func (a *app) runDatascale(cmd *cobra.Command, pf *planFlags) error {
	val, err := profiles.ParseSize(pf.valSize)
	switch {
	case err != nil:
		return usageErr(fmt.Errorf("--val-size: %w", err))
	case pf.keys == 0:
		return usageErr(errors.New("--keys must be at least 1"))
	case pf.prefix == "":
		return usageErr(errors.New("--prefix must not be empty: plan deletes its prefix afterwards"))
	}
	ctx := cmd.Context()
	t, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.MetricsURLs) == 0 {
		return errors.New("datascale reads the member's /metrics; no metrics URL is known (give --metrics-urls)")
	}
	w, err := bench.NewRange([]*clientv3.Client{t.Client}, bench.RangeConfig{Prefix: pf.prefix, KeySize: pf.keySize, ValSize: int(val), Keys: pf.keys, Width: 1})
	if err != nil {
		return usageErr(err)
	}
	if !pf.force {
		resp, err := t.Client.Get(ctx, pf.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return fmt.Errorf("check prefix %q: %w", pf.prefix, err)
		}
		if resp.Count > 0 {
			return fmt.Errorf("%w: %q holds %d keys; choose another --prefix or pass --force", bench.ErrPrefixInUse, pf.prefix, resp.Count)
		}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), bench.CleanupTimeout)
		defer cancel()
		_, _ = t.Client.Delete(cctx, pf.prefix, clientv3.WithPrefix())
	}()
	r := datascaleResult{Keys: pf.keys, KeySize: pf.keySize, ValueSize: int(val)}
	ep, murl := t.Info.Endpoints[0], t.MetricsURLs[0]
	before, err := memberSizes(ctx, a, t, ep, murl)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := w.Prepare(ctx, nil); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	r.FillSeconds = time.Since(start).Seconds()
	// The db size Status reports changes when the backend commits its batch (every
	// --backend-batch-interval, 100 ms by default); give it a few intervals.
	time.Sleep(backendSettle)
	after, err := memberSizes(ctx, a, t, ep, murl)
	if err != nil {
		return err
	}
	r.DBBefore, r.DBAfter, r.DBInUseAfter = before.db, after.db, after.dbInUse
	r.RSSBefore, r.RSSAfter, r.QuotaBytes = before.rss, after.rss, after.quota
	r.DBPerKey = float64(after.db-before.db) / float64(pf.keys)
	if d := after.rss - before.rss; d > 0 {
		v := float64(d) / float64(pf.keys)
		r.RSSPerKey = &v
	} else {
		r.Notes = append(r.Notes, "the fill did not raise the member's RSS measurably: fill more keys")
	}
	if r.DBPerKey <= 0 {
		// bbolt grows its file in steps; a small fill may land in free pages.
		r.DBPerKey = float64(after.dbInUse-before.dbInUse) / float64(pf.keys)
		r.Notes = append(r.Notes, "the db file did not grow (free pages were reused): db bytes per key from the in-use size")
	}
	if local := t.Info.Embedded || allLoopback(t.Info.Endpoints); local {
		h := hardware.Collect(hardware.Config{})
		r.MemoryBytes = h.MemoryBytes
		if t.Info.Embedded {
			r.Notes = append(r.Notes, "embedded etcd: its RSS includes this process's client")
		}
	} else {
		r.Notes = append(r.Notes, "remote member: its memory is unknown here, so keys in memory are not projected")
	}
	if r.DBPerKey > 0 {
		if r.QuotaBytes > 0 {
			v := math.Max(0, float64(r.QuotaBytes-after.db)) / r.DBPerKey
			r.KeysInQuota = &v
		}
		v := math.Max(0, float64(suggestedMaxDB-after.db)) / r.DBPerKey
		r.KeysIn8GiB = &v
	}
	if r.RSSPerKey != nil && r.MemoryBytes > 0 {
		v := math.Max(0, float64(r.MemoryBytes-after.rss)) / *r.RSSPerKey
		r.KeysInMemory = &v
	}
	out := datascaleJSON{Datascale: r, Findings: []finding.Finding{},
		Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone, Summary: datascaleSummary(r)}}
	if a.output == "json" {
		return a.printJSON(out)
	}
	return a.printDatascale(r, out.Verdict.Summary)
}

// sizes are a member's db and memory figures at one moment.
type sizes struct {
	db, dbInUse, rss, quota int64
}

// memberSizes reads the db size from Status and RSS and quota from /metrics.
func memberSizes(ctx context.Context, a *app, t *target, ep, murl string) (sizes, error) {
	cctx, cancel := context.WithTimeout(ctx, a.conn.dialTimeout+10*time.Second)
	defer cancel()
	st, err := t.Client.Status(cctx, ep)
	if err != nil {
		return sizes{}, fmt.Errorf("status of %s: %w", ep, err)
	}
	text, err := analyze.Fetch(cctx, t.HTTP, murl)
	if err != nil {
		return sizes{}, err
	}
	snap, err := analyze.Parse(text)
	if err != nil {
		return sizes{}, fmt.Errorf("%s: %w", murl, err)
	}
	rss, ok := snap.Value("process_resident_memory_bytes", nil)
	if !ok {
		return sizes{}, fmt.Errorf("%s has no process_resident_memory_bytes", murl)
	}
	quota, _ := snap.Value("etcd_server_quota_backend_bytes", nil)
	return sizes{db: st.DbSize, dbInUse: st.DbSizeInUse, rss: int64(rss), quota: int64(quota)}, nil
}

func datascaleSummary(r datascaleResult) string {
	parts := []string{fmt.Sprintf("%d keys of %d+%d bytes: %.0f db bytes per key", r.Keys, r.KeySize, r.ValueSize, r.DBPerKey)}
	if r.RSSPerKey != nil {
		parts = append(parts, fmt.Sprintf("%.0f RSS bytes per key", *r.RSSPerKey))
	}
	if r.KeysInQuota != nil {
		parts = append(parts, fmt.Sprintf("about %s more keys fit in the %s quota", human(*r.KeysInQuota), bytesText(r.QuotaBytes)))
	}
	if r.KeysInMemory != nil {
		parts = append(parts, fmt.Sprintf("about %s more in %s of memory", human(*r.KeysInMemory), bytesText(r.MemoryBytes)))
	}
	return strings.Join(parts, "; ")
}

func (a *app) printDatascale(r datascaleResult, summary string) error {
	tw := a.table()
	fmt.Fprintf(tw, "keys filled\t%d (%d-byte keys, %d-byte values) in %.1fs\n", r.Keys, r.KeySize, r.ValueSize, r.FillSeconds)
	fmt.Fprintf(tw, "db size\t%s → %s (in use %s): %.0f bytes per key\t(Status.DbSize)\n", bytesText(r.DBBefore), bytesText(r.DBAfter), bytesText(r.DBInUseAfter), r.DBPerKey)
	rss := "not measurable"
	if r.RSSPerKey != nil {
		rss = fmt.Sprintf("%.0f bytes per key", *r.RSSPerKey)
	}
	fmt.Fprintf(tw, "member RSS\t%s → %s: %s\t(%s)\n", bytesText(r.RSSBefore), bytesText(r.RSSAfter), rss, srcMemKey)
	if r.KeysInQuota != nil {
		fmt.Fprintf(tw, "keys that fit in the quota\t%s more (quota %s)\t(%s)\n", human(*r.KeysInQuota), bytesText(r.QuotaBytes), srcQuota)
	}
	if r.KeysIn8GiB != nil {
		fmt.Fprintf(tw, "keys that fit in 8 GiB\t%s more\t(%s)\n", human(*r.KeysIn8GiB), srcDBMax)
	}
	if r.KeysInMemory != nil {
		fmt.Fprintf(tw, "keys that fit in memory\t%s more (%s)\t(RSS per key)\n", human(*r.KeysInMemory), bytesText(r.MemoryBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(a.stdout, "note: %s\n", n)
	}
	fmt.Fprintf(a.stdout, "PASS  %s\n", summary)
	return nil
}

// human renders a count with a k/M/G suffix.
func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// bytesText renders bytes in binary units.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
