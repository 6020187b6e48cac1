package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// measured is one load run with its scrapes and diagnosis.
type measured struct {
	run    *results.Run
	report analyze.Report
	// err is what bench.Run returned; run holds whatever was measured.
	err error
}

// measure is what every load-driving command does: time the client-to-cluster
// round trip, scrape the members' /metrics before, during and after the load,
// drive it, collect host facts, and analyze the result.
func (a *app) measure(ctx context.Context, t *target, cfg bench.Config, w bench.Workload, run *results.Run, opts analyze.Options) measured {
	readMemberLimits(t, run) // while the members surely run
	if opts.NetworkRTTMs == 0 {
		opts.NetworkRTTMs = statusRTTMs(ctx, t)
	}
	if a.stderrTTY && a.output != "json" {
		bar := newBenchBar(a.stderr, cfg)
		cfg.Progress = bar.update
		defer bar.finish()
	}
	if cfg.StartAt.IsZero() {
		cfg.StartAt = a.startAt
	}
	// The "before" scrape is taken where the measured window starts (after the
	// prefix check, the fill, the wait for --start-at and the warm-up) and the
	// "after" one when the load stopped, before the cleanup deletes the keys:
	// the server-side deltas cover the load window and nothing else.
	scraper := analyze.NewScraper(t.HTTP, t.MetricsURLs, scrapeEvery)
	began, ended := false, false
	var psi *hardware.PressureMeter
	cfg.WindowStart = func() {
		scraper.Before(ctx)
		scraper.Start(ctx)
		psi = hardware.StartCPUPressure(os.DirFS("/"))
		began = true
	}
	// Also after Ctrl-C: the "after" scrape brackets what was measured.
	after := func() {
		if share, ok := psi.Share(); ok {
			run.HostCPUPressure = &share // over the measured window, as the scrapes
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		run.Scrapes = scraper.After(sctx)
		cancel()
		ended = true
	}
	cfg.LoadDone = func() {
		if began {
			after()
		}
	}
	// A cluster that goes away ends the run within the dial timeout, as it would
	// the connect; otherwise requests would wait for it forever.
	cfg.Connected, cfg.DialTimeout = t.connected, a.conn.dialTimeout
	m := measured{run: run}
	m.err = bench.Run(ctx, cfg, w, run)
	// Host facts do not change with the load: read after it, they add nothing to
	// the time before it starts nor garbage to collect during it.
	run.Host = hardware.Collect(hardware.Config{DataDir: embeddedDir(t)})
	if began && !ended {
		after()
	}
	// Alarms (NOSPACE) are state, not a delta: read them once the run is over.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	run.Alarms = readAlarms(actx, t)
	acancel()
	if m.err != nil && !run.Interrupted {
		run.Error = m.err.Error()
	}
	if len(run.Ops) > 0 {
		// analyze.Run fails only on a run it cannot read; this one was just made.
		m.report, _ = analyze.Run(run, opts)
		run.Diagnosis = m.report.Diagnosis()
	}
	return m
}

// readAlarms lists the cluster's alarms (NOSPACE when the backend quota filled)
// for the quota class; nil when they cannot be read.
func readAlarms(ctx context.Context, t *target) []results.Alarm {
	if t.Client == nil {
		return nil
	}
	resp, err := t.Client.AlarmList(ctx)
	if err != nil {
		return nil
	}
	out := []results.Alarm{}
	for _, a := range resp.Alarms {
		out = append(out, results.Alarm{Member: fmt.Sprintf("%x", a.MemberID), Type: a.Alarm.String()})
	}
	return out
}

// statusRTTMs is the fastest of a few Status round trips to the first endpoint
// after one to warm the connection: the network share of the latency budget
// (Status does almost no server work). 0 when unknown.
func statusRTTMs(ctx context.Context, t *target) float64 {
	if t.Client == nil || len(t.Info.Endpoints) == 0 {
		return 0
	}
	var rtts []float64
	for range 6 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		start := time.Now()
		_, err := t.Client.Status(cctx, t.Info.Endpoints[0])
		cancel()
		if err != nil {
			return 0
		}
		rtts = append(rtts, float64(time.Since(start))/float64(time.Millisecond))
	}
	return slices.Min(rtts[1:])
}

// embeddedDir is the embedded cluster's data folder, whose disk the host facts
// describe; "" for a remote cluster.
func embeddedDir(t *target) string {
	if t.Cluster == nil {
		return ""
	}
	return t.Cluster.Dir()
}

// writeReport writes the report and plots of run, with the diagnosis it stores,
// to dir, when one is named.
func writeReport(dir string, run *results.Run) error {
	if dir == "" {
		return nil
	}
	return report.WriteReport(dir, run, run.Diagnosis)
}
