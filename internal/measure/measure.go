// Package measure runs one load against a cluster the way every load-driving
// command does: host facts and the members' own limits, the client-to-leader
// round trip, /metrics scrapes before, during and after the load, the load
// itself (package bench), and the analysis of the result.
package measure

import (
	"context"
	"crypto/tls"
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

// ClusterConn is a connected cluster: the client, how to scrape its metrics, and what
// to record about it. Close stops an embedded cluster.
type ClusterConn struct {
	Client      *clientv3.Client
	Info        results.ClusterInfo
	MetricsURLs []string
	HTTP        *http.Client
	// TLS is the client's TLS configuration; nil for plain connections.
	TLS     *tls.Config
	Cluster *cluster.Cluster // nil unless embedded
}

// Connected says whether the client has a connection up, to any endpoint: it
// is false only while every endpoint is down (etcd's client balances over them).
func (t *ClusterConn) Connected() bool {
	switch t.Client.ActiveConnection().GetState() {
	case connectivity.Connecting, connectivity.TransientFailure, connectivity.Shutdown:
		return false
	}
	return true
}

// Measured is one load run with its scrapes and diagnosis.
type Measured struct {
	Run      *results.Run
	Analysis analyze.Result
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
	// NoDiskProbe leaves out the light fsync probe that otherwise runs on the
	// filesystem of each member data dir on this host during the measured window
	// (see diskProbes): for a caller that probes the disk itself (serve).
	NoDiskProbe bool
	// Pingers are the load connections that PING every endpoint through the
	// measured window (see PingEvery); none leaves the run without the round
	// trips per endpoint.
	Pingers []Pinger
}

// Measure is what every load-driving command does: time the client-to-cluster
// round trip, scrape the members' /metrics before, during and after the load,
// drive it, collect host facts, and analyze the result.
func Measure(ctx context.Context, t *ClusterConn, cfg bench.Config, w bench.Workload, run *results.Run, opts analyze.Options, mc Config) Measured {
	ReadMemberLimits(t, run) // while the members surely run
	if run.Network == nil {
		// Kept in the run, so that an analysis of the file judges by them too.
		run.Network = RoundTrips(ctx, t)
		if run.Network != nil {
			run.Network.Endpoints = EndpointRounds(ctx, t, cfg.Prefix+readRoundKey)
		}
	}
	// The "before" scrape is taken where the measured window starts (after the
	// prefix check, the fill, the wait for --start-at and the warm-up) and the
	// "after" one when the load stopped, before the cleanup deletes the keys:
	// the server-side deltas cover the load window and nothing else.
	scraper := analyze.NewScraper(t.HTTP, t.MetricsURLs, mc.ScrapeEvery)
	began, ended := false, false
	var psi *hardware.PressureMeter
	var probes *diskProbes
	var waits cpuWaits
	var rtts *pings
	var reads *rounds
	cfg.WindowStart = func() {
		rtts = startPings(ctx, mc.Pingers)
		reads = startRounds(ctx, t, cfg.Prefix+readRoundKey)
		scraper.Before(ctx)
		scraper.Start(ctx)
		psi = hardware.StartCPUPressure("")
		waits = startCPUWaits(run.Target.Members)
		if !mc.NoDiskProbe {
			probes = startDiskProbes(ctx, run.Target.Members)
		}
		began = true
	}
	// Also after Ctrl-C: the "after" scrape brackets what was measured.
	after := func() {
		rtts.stop()
		reads.stop()
		disks, _ := probes.stop()
		run.Disk = append(run.Disk, disks...)
		if share, ok := psi.Share(); ok {
			run.HostCPUPressure = &share // over the measured window, as the scrapes
		}
		if busy, ok := psi.Busy(); ok {
			run.HostCPUBusy = &busy
		}
		if top, ok := psi.Busiest(); ok {
			run.HostCPUBusiest = &top
		}
		waits.stop(run)
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
	if began && !ended {
		rtts.stop()
		reads.stop()
	}
	if err := rtts.fill(run); err != nil && m.Err == nil {
		m.Err = err
	}
	if err := reads.fill(run); err != nil && m.Err == nil {
		m.Err = err
	}
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
		m.Analysis, _ = analyze.Run(run, opts)
		run.Diagnosis = m.Analysis.Diagnosis()
	}
	return m
}

// ReadAlarms lists the cluster's alarms (NOSPACE when the backend quota filled)
// for the quota class; nil when they cannot be read.
func ReadAlarms(ctx context.Context, t *ClusterConn) []results.Alarm {
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
func StatusRTTMs(ctx context.Context, t *ClusterConn) float64 {
	if t.Client == nil || len(t.Info.Endpoints) == 0 {
		return 0
	}
	conn, err := t.Client.Dial(t.Info.Endpoints[0])
	if err != nil {
		return 0
	}
	defer conn.Close()
	mc := pb.NewMaintenanceClient(conn)
	return fastestMs(ctx, func(ctx context.Context) error { _, err := mc.Status(ctx, &pb.StatusRequest{}); return err })
}

// EndpointRounds measures, on every endpoint of a cluster of more than one, the
// fastest Status call and the fastest linearizable read of key (which need not
// exist: a read writes nothing), after one of each to warm the connection; nil
// for one endpoint, and an endpoint that fails either is left out.
func EndpointRounds(ctx context.Context, t *ClusterConn, key string) []results.EndpointRound {
	if t.Client == nil || len(t.Info.Endpoints) < 2 {
		return nil
	}
	var out []results.EndpointRound
	for _, ep := range t.Info.Endpoints {
		conn, err := t.Client.Dial(ep)
		if err != nil {
			continue
		}
		mc, kv := pb.NewMaintenanceClient(conn), pb.NewKVClient(conn)
		status := fastestMs(ctx, func(ctx context.Context) error { _, err := mc.Status(ctx, &pb.StatusRequest{}); return err })
		read := fastestMs(ctx, func(ctx context.Context) error {
			_, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(key), CountOnly: true})
			return err
		})
		conn.Close()
		if status > 0 && read > 0 {
			out = append(out, results.EndpointRound{Endpoint: ep, StatusRTTMs: status, ReadMs: read})
		}
	}
	return out
}

// fastestMs is the fastest of five calls of call after one to warm up, in ms;
// 0 when any fails.
func fastestMs(ctx context.Context, call func(context.Context) error) float64 {
	var best float64
	for i := range 6 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		start := time.Now()
		err := call(cctx)
		cancel()
		if err != nil {
			return 0
		}
		if ms := float64(time.Since(start)) / float64(time.Millisecond); i > 0 && (best == 0 || ms < best) {
			best = ms
		}
	}
	return best
}

// DataDir is the embedded cluster's data folder, whose disk the host facts
// describe; "" for a remote cluster.
func (t *ClusterConn) DataDir() string {
	if t.Cluster == nil {
		return ""
	}
	return t.Cluster.Dir()
}

// ReadMemberLimits records the pid and cgroup limits of each member that runs on
// this host (embedded, or reached on a loopback client URL), so the analyzer grades
// each against what it really has rather than etcdperf's own cgroup. Best effort:
// a member it cannot read is graded as before.
func ReadMemberLimits(t *ClusterConn, run *results.Run) {
	// run.Target.Members shares its array with t.Info, which later runs (plan's
	// steps) copy again: their limits must be read afresh, not inherited.
	run.Target.Members = slices.Clone(run.Target.Members)
	for i := range run.Target.Members {
		m := &run.Target.Members[i]
		pid := 0
		if t.Cluster != nil {
			for _, cm := range t.Cluster.Members() {
				if slices.Contains(m.ClientURLs, cm.ClientURL) {
					pid, m.DataDir = cm.Pid(), cm.DataDir
				}
			}
		} else if !hardware.AllLoopback(m.ClientURLs) {
			continue // on another host: its port here may be anyone's
		}
		_ = hardware.ReadMember("", m, pid)
	}
}

// cpuWaits are the run-queue waits, at the start of the measured window, of the
// generator (pid 0 here) and of each member process on this host, by pid.
type cpuWaits map[int]time.Duration

// startCPUWaits reads the waits of the generator and of the local members
// (results.Member.Pid) where the kernel keeps schedstat.
func startCPUWaits(members []results.Member) cpuWaits {
	w := cpuWaits{}
	for _, pid := range append([]int{os.Getpid()}, pids(members)...) {
		if d, err := hardware.RunQueueWait("", pid); err == nil {
			w[pid] = d
		}
	}
	return w
}

// stop records in run what each process waited for a CPU since start.
func (w cpuWaits) stop(run *results.Run) {
	since := func(pid int) (float64, bool) {
		start, ok := w[pid]
		if !ok {
			return 0, false
		}
		d, err := hardware.RunQueueWait("", pid)
		if err != nil || d < start {
			return 0, false
		}
		return (d - start).Seconds(), true
	}
	if s, ok := since(os.Getpid()); ok {
		run.Client.CPUWaitS = s
	}
	for i := range run.Target.Members {
		m := &run.Target.Members[i]
		if s, ok := since(m.Pid); ok && m.Pid > 0 && m.Pid != os.Getpid() {
			m.CPUWaitS = &s
		}
	}
}

// pids are the processes of the members that run on this host.
func pids(members []results.Member) []int {
	var out []int
	for _, m := range members {
		if m.Pid > 0 && m.Pid != os.Getpid() {
			out = append(out, m.Pid)
		}
	}
	return out
}
