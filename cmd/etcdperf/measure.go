package main

import (
	"context"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/measure"
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
	return measure.Measure(ctx, &t.Target, cfg, w, run, opts, measure.Config{ScrapeEvery: scrapeEvery, DialTimeout: a.conn.DialTimeout})
}

// writeReport writes the report and plots of run, with the diagnosis it stores,
// to dir, when one is named.
func writeReport(dir string, run *results.Run) error {
	if dir == "" {
		return nil
	}
	return report.WriteReport(dir, run, run.Diagnosis)
}
