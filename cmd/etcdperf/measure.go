package main

import (
	"context"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// measure drives one load run (see measure.Measure), with a progress bar on a terminal.
func (a *app) measure(ctx context.Context, t *target, cfg bench.Config, w bench.Workload, run *results.Run, opts analyze.Options) measure.Measured {
	if a.stderrTTY && a.output != "json" {
		bar := report.NewBar(a.stderr, cfg)
		cfg.Progress = bar.Update
		defer bar.Finish()
	}
	if cfg.StartAt.IsZero() {
		cfg.StartAt = a.startAt
	}
	return measure.Measure(ctx, &t.ClusterConn, cfg, w, run, opts, measure.Config{ScrapeEvery: measure.DefaultScrapeEvery, DialTimeout: a.conn.DialTimeout,
		Pingers: measure.Pingers(t.Direct)})
}

// writeReport writes the report and plots of run, with the diagnosis it stores,
// to dir, when one is named.
func writeReport(dir string, run *results.Run) error {
	if dir == "" {
		return nil
	}
	return report.WriteReport(dir, run, run.Diagnosis)
}

// runProfile drives p against t under prefix and measures it (see measure).
// Failing to build the workload is bad input; any other error comes back in
// measured.err with what was measured.
func (a *app) runProfile(ctx context.Context, cmd *cobra.Command, command string, t *target, clis []*clientv3.Client, p *profiles.Profile, prefix string, force bool) (measure.Measured, error) {
	w, cfg, err := profiles.Build(p, clis, prefix)
	if err != nil {
		return measure.Measured{}, usageErr(err)
	}
	bench.UseDirect(w, t.Direct)
	cfg.KV, cfg.Force, cfg.CommandTimeout = t.Client, force, a.conn.CommandTimeout
	run := a.newRun(cmd, command, t)
	p.RecordIn(run.Flags)
	return a.measure(ctx, t, cfg, w, run, analyze.Options{Clients: p.Clients}), nil
}
