package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// loadRun is one measured run of a profile: check, each plan step and qualify use it.
type loadRun struct {
	run    *results.Run
	report analyze.Report
	// err is what bench.Run returned; run holds whatever was measured.
	err error
}

// runProfile drives p against t under prefix, scraping the members' /metrics
// around it, and analyzes the result. Failing to build the workload is bad input;
// any other error comes back in loadRun.err with what was measured.
func (a *app) runProfile(ctx context.Context, cmd *cobra.Command, command string, t *target, clis []*clientv3.Client, p *profiles.Profile, prefix string, force bool) (loadRun, error) {
	w, cfg, err := profiles.Build(p, clis, prefix)
	if err != nil {
		return loadRun{}, usageErr(err)
	}
	cfg.KV, cfg.Force = t.Client, force
	run := a.newRun(cmd, command, t)
	run.Flags["profile"] = p.Name
	run.Flags["profile_version"] = itoa(p.Version)
	run.Flags["clients"] = itoa(p.Clients)
	run.Flags["rate"] = ftoa(p.Rate)
	run.Host = hardware.Collect(hardware.Config{DataDir: embeddedDir(t)})
	if a.stderrTTY && a.output != "json" {
		bar := newBenchBar(a.stderr, cfg)
		cfg.Progress = bar.update
		defer bar.finish()
	}
	scraper := analyze.NewScraper(t.HTTP, t.MetricsURLs, scrapeEvery)
	scraper.Before(ctx)
	scraper.Start(ctx)
	lr := loadRun{run: run}
	lr.err = bench.Run(ctx, cfg, w, run)
	// After the run, also after Ctrl-C: the "after" scrape brackets what was measured.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	run.Scrapes = scraper.After(sctx)
	cancel()
	if lr.err != nil && !run.Interrupted {
		run.Error = lr.err.Error()
	}
	if len(run.Ops) > 0 {
		// analyze.Run fails only on a run it cannot read; this one was just made.
		lr.report, _ = analyze.Run(run, analyze.Options{Clients: p.Clients})
		if f, ok := sharedCPUFinding(run); ok {
			lr.report.Findings = append([]analyze.Finding{f}, lr.report.Findings...)
		}
	}
	return lr, nil
}

// connections returns the profile's connections to t: the target's client and
// more as the profile asks (etcdctl check perf opens one per client). close
// releases the extra ones.
func (a *app) connections(t *target, p *profiles.Profile) (clis []*clientv3.Client, close func(), err error) {
	clis, err = a.benchClients(t, max(p.Connections, 1))
	if err != nil {
		return nil, nil, err
	}
	return clis, func() {
		for _, c := range clis[1:] {
			c.Close()
		}
	}, nil
}
