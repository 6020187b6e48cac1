package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/analyze"
	"github.com/etcdperf/etcdperf/internal/bench"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/internal/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// DiskProbeBytes is the light fsync probe's size: fio's etcd job (2300-byte
// writes, each followed by fdatasync) cut from 22 MiB to about 230 syncs, more
// than the analyzer needs to grade a p99 (100 samples), bounded in time by the
// probe's load window.
const DiskProbeBytes = 512 << 10

// Prober runs serve's probe against one cluster: the profile's paced load under
// Prefix (bench refuses a prefix that holds keys and deletes its own after every
// probe, also when it is cancelled), the members' /metrics around it, a light
// fsync probe of DiskDir when it is set, and check's default verdict over the
// analysis.
type Prober struct {
	Target  *conn.Session
	Clients []*clientv3.Client
	// Profile is the load of one probe; Validate bounds it.
	Profile *profiles.Profile
	Prefix  string
	// DiskDir is a folder on a member's data disk, on this host; "" probes no disk.
	DiskDir string
	// NewRun returns the header of a probe's run file (tool, flags, target).
	NewRun func() *results.Run
	// P99 and P99Source are the default verdict's threshold (check.P99Limit).
	P99       time.Duration
	P99Source string
	// CommandTimeout bounds the leader check and the prefix check.
	CommandTimeout time.Duration
	DialTimeout    time.Duration
	// Keep, when set, stores each probe's run file (see Keeper).
	Keep *Keeper
}

// Validate refuses a probe that could not finish within a tick or sends more
// than it should: the profile's whole load (warm-up included) must fit in
// every, with time to spare for the scrapes and the cleanup.
func (p *Prober) Validate(every time.Duration) error {
	load := time.Duration(p.Profile.Duration + p.Profile.Warmup)
	switch {
	case p.Prefix == "" || p.Prefix == "/":
		return errors.New("--prefix must name a prefix of its own: serve deletes it after every probe")
	case p.Profile.Rate <= 0:
		return fmt.Errorf("profile %s has no rate: a canary's load must be paced", p.Profile.Name)
	case load <= 0:
		return fmt.Errorf("profile %s has no duration", p.Profile.Name)
	case 2*load > every:
		return fmt.Errorf("--every %s is too short for the probe's %s of load (%s): give at least twice the load's length", every, load, p.Profile.Name)
	}
	return nil
}

// CheckPrefix refuses to start when the prefix holds keys: serve did not write
// them (it deletes its own after every probe), and it would delete them.
func (p *Prober) CheckPrefix(ctx context.Context) error {
	return bench.CheckPrefix(ctx, p.Target.Client, p.Prefix, false, p.CommandTimeout)
}

// Probe runs one probe (a Probe).
func (p *Prober) Probe(ctx context.Context) Result {
	r := Result{Start: time.Now()}
	defer func() { r.End = time.Now() }()
	r.HasLeader, r.LeaderKnown, r.Err = p.leader(ctx)
	switch {
	case !r.LeaderKnown:
		r.Skipped, r.Code = SkipUnreachable, Code(r.Err)
		return r
	case !r.HasLeader:
		r.Skipped, r.Err = SkipNoLeader, nil
		return r
	}
	r.Err = nil
	w, cfg, err := profiles.Build(p.Profile, p.Clients, p.Prefix)
	if err != nil {
		r.Err, r.Code = err, Code(err)
		return r
	}
	bench.UseDirect(w, p.Target.Direct)
	cfg.KV, cfg.CommandTimeout = p.Target.Client, p.CommandTimeout
	run := p.NewRun()
	p.Profile.RecordIn(run.Flags)
	// The round trips are Measure's, kept in the run (run.Network) and judged from there.
	opts := analyze.Options{Clients: p.Profile.Clients}

	var disk *results.DiskResult
	var wg sync.WaitGroup
	if p.DiskDir != "" {
		wg.Go(func() {
			d, err := diskprobe.Run(ctx, diskprobe.Config{Dir: p.DiskDir, Pattern: diskprobe.PatternFio, Size: DiskProbeBytes,
				Duration: time.Duration(p.Profile.Duration + p.Profile.Warmup)})
			if err == nil {
				disk = &d
			}
		})
	}
	m := measure.Measure(ctx, &p.Target.ClusterConn, cfg, w, run, opts, measure.Config{ScrapeEvery: measure.DefaultScrapeEvery, DialTimeout: p.DialTimeout, NoDiskProbe: true,
		Pingers: measure.Pingers(p.Target.Direct)})
	wg.Wait()
	r.Run = run
	if m.Err != nil {
		r.Err, r.Code = m.Err, Code(m.Err)
	}
	if len(run.Ops) == 0 {
		return r
	}
	if disk != nil {
		run.Disk = append(run.Disk, *disk)
	}
	// Measure analyzed the run before the disk probe was in it.
	if m.Analysis, err = analyze.Run(run, opts); err != nil {
		r.Err, r.Code = err, Code(err)
		return r
	}
	r.Analysis = m.Analysis
	r.Verdict, _ = check.Default(run, m.Analysis, p.P99, p.P99Source)
	run.Diagnosis = m.Analysis.Diagnosis()
	run.Diagnosis.Verdict = &r.Verdict
	if p.Keep != nil {
		path, err := p.Keep.Save(run)
		if err != nil && r.Err == nil {
			r.Err, r.Code = err, Code(err)
		}
		r.RunFile = path
	}
	return r
}

// leader asks the cluster for its status once per endpoint, on the session's
// own connection, whose balancer takes turns among the members it can reach:
// known when one answered, and whether one of those that answered knows a
// leader. It dials nothing new: clientv3's Status(endpoint) dials the endpoint
// afresh (blocking, with the session's WithBlock), and that dial to the lone
// survivor of three timed out every time in TestServeNoLeader, so a cluster
// without a leader read unreachable; why the dial fails is not known.
func (p *Prober) leader(ctx context.Context) (has, known bool, err error) {
	mc := pb.NewMaintenanceClient(p.Target.Client.ActiveConnection())
	for range p.Target.Info.Endpoints {
		cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
		st, serr := mc.Status(cctx, &pb.StatusRequest{})
		cancel()
		if serr != nil {
			err = fmt.Errorf("status: %w", serr)
			continue
		}
		known = true
		if st.Leader != 0 {
			return true, true, nil
		}
	}
	return false, known, err
}
