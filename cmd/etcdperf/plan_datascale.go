package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/report"
)

func (a *app) runDatascale(cmd *cobra.Command, pf *planFlags) error {
	if _, err := pf.datascale.Check(); err != nil {
		return usageErr(err)
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
	w, r, err := pf.datascale.Fill(t.Client)
	if err != nil {
		return usageErr(err)
	}
	if err := bench.CheckPrefix(ctx, t.Client, pf.Prefix, pf.force, a.conn.CommandTimeout); err != nil {
		return err
	}
	// As a bench run's: also after Ctrl-C, until the prefix stays empty; a
	// failure here changes nothing in the projection already printed.
	defer func() { _ = bench.Cleanup(t.Client, pf.Prefix, ctx.Err() != nil) }()
	sizes := func() (plan.Sizes, error) {
		cctx, cancel := context.WithTimeout(ctx, a.conn.DialTimeout+10*time.Second)
		defer cancel()
		return plan.ReadSizes(cctx, t.Client, t.HTTP, t.Info.Endpoints[0], t.MetricsURLs[0])
	}
	memory := func() (int64, string) {
		return plan.MemberMemory(t.Info.Embedded, t.Info.Endpoints, func() int64 { return hardware.Collect(hardware.Config{}).MemoryBytes })
	}
	if err := r.Measure(ctx, w, sizes, plan.BackendSettle, memory); err != nil {
		return err
	}
	return report.Print(a.stdout, a.output, report.Datascale{DatascaleResult: r.Result()})
}
