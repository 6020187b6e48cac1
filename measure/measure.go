// Package measure runs one load against a cluster the way every load-driving
// command does: host facts and the members' own limits, the client-to-leader
// round trip, /metrics scrapes before, during and after the load, the load
// itself (package bench), and the analysis of the result.
package measure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

// Target is a connected cluster: the client, how to scrape its metrics, and what
// to record about it. Close stops an embedded cluster.
type Target struct {
	Client      *clientv3.Client
	Info        results.Target
	MetricsURLs []string
	HTTP        *http.Client
	Cluster     *cluster.Cluster // nil unless embedded
}

// Connected says whether the client has a connection up, to any endpoint: it
// is false only while every endpoint is down (etcd's client balances over them).
func (t *Target) Connected() bool {
	switch t.Client.ActiveConnection().GetState() {
	case connectivity.Connecting, connectivity.TransientFailure, connectivity.Shutdown:
		return false
	}
	return true
}

// Measured is one load run with its scrapes and diagnosis.
type Measured struct {
	Run    *results.Run
	Report analyze.Report
	// Err is what bench.Run returned; Run holds whatever was measured.
	Err error
}

// DefaultScrapeEvery is the period of the /metrics scrapes during a command's run.
const DefaultScrapeEvery = 5 * time.Second

// Config says how a measurement scrapes and how long it waits for a lost cluster.
type Config struct {
	// ScrapeEvery is the period of the /metrics scrapes taken during the run.
	ScrapeEvery time.Duration
	// DialTimeout ends a run whose cluster went away within this long, as it
	// would the connect.
	DialTimeout time.Duration
}

// Measure is what every load-driving command does: time the client-to-cluster
// round trip, scrape the members' /metrics before, during and after the load,
// drive it, collect host facts, and analyze the result.
func Measure(ctx context.Context, t *Target, cfg bench.Config, w bench.Workload, run *results.Run, opts analyze.Options, mc Config) Measured {
	ReadMemberLimits(t, run) // while the members surely run
	if opts.NetworkRTTMs == 0 {
		opts.NetworkRTTMs = StatusRTTMs(ctx, t)
	}
	// The "before" scrape is taken where the measured window starts (after the
	// prefix check, the fill, the wait for --start-at and the warm-up) and the
	// "after" one when the load stopped, before the cleanup deletes the keys:
	// the server-side deltas cover the load window and nothing else.
	scraper := analyze.NewScraper(t.HTTP, t.MetricsURLs, mc.ScrapeEvery)
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
	cfg.Connected, cfg.DialTimeout = t.Connected, mc.DialTimeout
	m := Measured{Run: run}
	m.Err = bench.Run(ctx, cfg, w, run)
	// Host facts do not change with the load: read after it, they add nothing to
	// the time before it starts nor garbage to collect during it.
	run.Host = hardware.Collect(hardware.Config{DataDir: t.DataDir()})
	if began && !ended {
		after()
	}
	// Alarms (NOSPACE) are state, not a delta: read them once the run is over,
	// unless the cluster is gone (the client would wait for it as long as allowed).
	if !errors.Is(m.Err, bench.ErrUnreachable) {
		actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		run.Alarms = ReadAlarms(actx, t)
		acancel()
	}
	if m.Err != nil && !run.Interrupted {
		run.Error = m.Err.Error()
	}
	if len(run.Ops) > 0 {
		// analyze.Run fails only on a run it cannot read; this one was just made.
		m.Report, _ = analyze.Run(run, opts)
		run.Diagnosis = m.Report.Diagnosis()
	}
	return m
}

// ReadAlarms lists the cluster's alarms (NOSPACE when the backend quota filled)
// for the quota class; nil when they cannot be read.
func ReadAlarms(ctx context.Context, t *Target) []results.Alarm {
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

// StatusRTTMs is the fastest of a few Status round trips to the first endpoint
// over one connection, after one call to warm it: the network share of the
// latency budget (Status does almost no server work). clientv3's
// Maintenance.Status dials a new connection on every call, which would count the
// TCP and HTTP/2 set-up (about 1 ms on loopback, more than a whole range) as
// network; so the calls go over one connection of our own. 0 when unknown.
func StatusRTTMs(ctx context.Context, t *Target) float64 {
	if t.Client == nil || len(t.Info.Endpoints) == 0 {
		return 0
	}
	conn, err := t.Client.Dial(t.Info.Endpoints[0])
	if err != nil {
		return 0
	}
	defer conn.Close()
	mc := pb.NewMaintenanceClient(conn)
	var rtts []float64
	for range 6 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		start := time.Now()
		_, err := mc.Status(cctx, &pb.StatusRequest{})
		cancel()
		if err != nil {
			return 0
		}
		rtts = append(rtts, float64(time.Since(start))/float64(time.Millisecond))
	}
	return slices.Min(rtts[1:])
}

// DataDir is the embedded cluster's data folder, whose disk the host facts
// describe; "" for a remote cluster.
func (t *Target) DataDir() string {
	if t.Cluster == nil {
		return ""
	}
	return t.Cluster.Dir()
}

// ReadMemberLimits records the pid and cgroup limits of each member that runs on
// this host (embedded, or reached on a loopback client URL), so the analyzer grades
// each against what it really has rather than etcdperf's own cgroup. Best effort:
// a member it cannot read is graded as before.
func ReadMemberLimits(t *Target, run *results.Run) {
	// run.Target.Members shares its array with t.Info, which later runs (plan's
	// steps) copy again: their limits must be read afresh, not inherited.
	run.Target.Members = slices.Clone(run.Target.Members)
	for i := range run.Target.Members {
		m := &run.Target.Members[i]
		pid := 0
		if t.Cluster != nil {
			for _, cm := range t.Cluster.Members() {
				if slices.Contains(m.ClientURLs, cm.ClientURL) {
					pid = cm.Pid()
				}
			}
		} else if !hardware.AllLoopback(m.ClientURLs) {
			continue // on another host: its port here may be anyone's
		}
		_ = hardware.ReadMember(nil, m, pid)
	}
}
