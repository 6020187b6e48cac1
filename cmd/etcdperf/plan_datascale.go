package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/units"
)

// backendSettle is how long datascale waits after the fill for the backend to
// commit it, so that Status sees the grown db.
const backendSettle = time.Second

// datascaleJSON is plan --datascale's -w json object.
type datascaleJSON struct {
	Verdict   finding.Verdict   `json:"verdict"`
	Findings  []finding.Finding `json:"findings"`
	Datascale plan.Datascale    `json:"datascale"`
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
	if err := bench.CheckPrefix(ctx, t.Client, pf.prefix, pf.force); err != nil {
		return err
	}
	// As a bench run's: also after Ctrl-C, until the prefix stays empty; a
	// failure here changes nothing in the projection already printed.
	defer func() { _ = bench.Cleanup(t.Client, pf.prefix, ctx.Err() != nil) }()

	r := plan.Datascale{Keys: pf.keys, KeySize: pf.keySize, ValueSize: int(val)}
	ep, murl := t.Info.Endpoints[0], t.MetricsURLs[0]
	sizes := func() (plan.Sizes, error) {
		cctx, cancel := context.WithTimeout(ctx, a.conn.dialTimeout+10*time.Second)
		defer cancel()
		return plan.ReadSizes(cctx, t.Client, t.HTTP, ep, murl)
	}
	before, err := sizes()
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
	after, err := sizes()
	if err != nil {
		return err
	}
	var mem int64
	note := "remote member: its memory is unknown here, so keys in memory are not projected"
	if t.Info.Embedded || hardware.AllLoopback(t.Info.Endpoints) {
		mem, note = hardware.Collect(hardware.Config{}).MemoryBytes, ""
		if t.Info.Embedded {
			note = "embedded etcd: its RSS includes this process's client"
		}
	}
	r.Project(before, after, mem, note)
	out := datascaleJSON{Datascale: r, Findings: []finding.Finding{},
		Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone, Summary: r.Summary()}}
	if a.output == "json" {
		return a.printJSON(out)
	}
	return a.printDatascale(r, out.Verdict.Summary)
}

func (a *app) printDatascale(r plan.Datascale, summary string) error {
	tw := a.table()
	fmt.Fprintf(tw, "keys filled\t%d (%d-byte keys, %d-byte values) in %.1fs\n", r.Keys, r.KeySize, r.ValueSize, r.FillSeconds)
	fmt.Fprintf(tw, "db size\t%s → %s (in use %s): %.0f bytes per key\t(Status.DbSize)\n", units.Bytes(r.DBBefore), units.Bytes(r.DBAfter), units.Bytes(r.DBInUseAfter), r.DBPerKey)
	rss := "not measurable"
	if r.RSSPerKey != nil {
		rss = fmt.Sprintf("%.0f bytes per key", *r.RSSPerKey)
	}
	fmt.Fprintf(tw, "member RSS\t%s → %s: %s\t(%s)\n", units.Bytes(r.RSSBefore), units.Bytes(r.RSSAfter), rss, plan.SourceMemKey)
	if r.KeysInQuota != nil {
		fmt.Fprintf(tw, "keys that fit in the quota\t%s more (quota %s)\t(%s)\n", units.Count(*r.KeysInQuota), units.Bytes(r.QuotaBytes), plan.SourceQuota)
	}
	if r.KeysIn8GiB != nil {
		fmt.Fprintf(tw, "keys that fit in 8 GiB\t%s more\t(%s)\n", units.Count(*r.KeysIn8GiB), plan.SourceDBMax)
	}
	if r.KeysInMemory != nil {
		fmt.Fprintf(tw, "keys that fit in memory\t%s more (%s)\t(RSS per key)\n", units.Count(*r.KeysInMemory), units.Bytes(r.MemoryBytes))
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
