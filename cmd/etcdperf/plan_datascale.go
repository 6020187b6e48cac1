package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
)

// backendSettle is how long datascale waits after the fill for the backend to
// commit it, so that Status sees the grown db.
const backendSettle = time.Second

func (a *app) runDatascale(cmd *cobra.Command, pf *planFlags) error {
	val, err := profiles.ParseSize(pf.valSize)
	switch {
	case err != nil:
		return usageErr(fmt.Errorf("--val-size: %w", err))
	case pf.keys == 0:
		return usageErr(errors.New("--keys must be at least 1"))
	case pf.Prefix == "":
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
	w, err := bench.NewRange([]*clientv3.Client{t.Client}, bench.RangeConfig{Prefix: pf.Prefix, KeySize: pf.keySize, ValSize: int(val), Keys: pf.keys, Width: 1})
	if err != nil {
		return usageErr(err)
	}
	if err := bench.CheckPrefix(ctx, t.Client, pf.Prefix, pf.force); err != nil {
		return err
	}
	// As a bench run's: also after Ctrl-C, until the prefix stays empty; a
	// failure here changes nothing in the projection already printed.
	defer func() { _ = bench.Cleanup(t.Client, pf.Prefix, ctx.Err() != nil) }()

	r := plan.Datascale{Keys: pf.keys, KeySize: pf.keySize, ValueSize: int(val)}
	ep, murl := t.Info.Endpoints[0], t.MetricsURLs[0]
	sizes := func() (plan.Sizes, error) {
		cctx, cancel := context.WithTimeout(ctx, a.conn.DialTimeout+10*time.Second)
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
	mem, note := plan.MemberMemory(t.Info.Embedded, t.Info.Endpoints, func() int64 { return hardware.Collect(hardware.Config{}).MemoryBytes })
	r.Project(before, after, mem, note)
	return report.Print(a.stdout, a.output, report.Datascale{DatascaleResult: r.Result()})
}
