package serve

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// DiskProbeBytes is the light fsync probe's size: fio's etcd job (2300-byte
// writes, each followed by fdatasync) cut from 22 MiB to about 230 syncs, more
// than the analyzer needs to grade a p99 (100 samples), bounded in time by the
// probe's load window.
const DiskProbeBytes = 512 << 10

// Prober runs serve's probe against one cluster: the cluster's status, a
// look for foreign keys in the canary's own directory, the paced Load of its
// one key, the members' /metrics around it, a light fsync probe of DiskDir
// when it is set, and check's default verdict over the analysis. It writes one
// revision per probe, bound to a lease of LeaseTTL, and deletes nothing.
type Prober struct {
	// Connect, when set, opens Target and Clients at the first probe and again
	// after a failure or a change of TLSFiles; else Target is fixed.
	Connect  Connector
	TLSFiles []string // CA, certificate and key files: read again when they change
	// TLS and Endpoints tell a connect that failed on TLS from an unreachable
	// cluster: TLS builds the client's TLS config from the files (nil without TLS).
	TLS       func() (*tls.Config, error)
	Endpoints []string
	Target    *conn.Session
	Clients   []*clientv3.Client
	// Profile is the load of one probe; Validate bounds it.
	Profile *profiles.Profile
	ID      Identity
	// LeaseTTL is the life of the canary's key without a probe: long enough to
	// outlast the longest back-off, so that a running canary keeps its key.
	LeaseTTL time.Duration
	// DiskDir is a folder on a member's data disk, on this host; "" probes no disk.
	DiskDir string
	// NewRun returns the header of a probe's run file (tool, flags, target).
	NewRun func(*conn.Session) *results.Run
	// P99 and P99Source are the default verdict's threshold (check.P99Limit).
	P99       time.Duration
	P99Source string
	// CommandTimeout bounds the leader check and the key check.
	CommandTimeout time.Duration
	DialTimeout    time.Duration
	// Keep, when set, stores each probe's run file (see Keeper).
	Keep *Keeper

	mu      sync.Mutex
	lease   clientv3.LeaseID // the last probe's, revoked by Close
	compact int64            // the last compact revision found
	release func()           // closes what Connect opened
	stamp   string           // of TLSFiles when Connect succeeded

	memberList    []*pb.Member // the last member list read
	memberClients map[string]*clientv3.Client
}

// ForeignLimit is how many foreign keys a probe names; it counts them all.
const ForeignLimit = 5

// Validate refuses a probe that could not finish within a tick or sends more
// than it should: the profile's whole load (warm-up included) must fit in
// every, with time to spare for the scrapes, and its ops must be puts and
// ranges (see NewLoad).
func (p *Prober) Validate(every time.Duration) error {
	load := time.Duration(p.Profile.Duration + p.Profile.Warmup)
	if err := p.ID.Check(); err != nil {
		return err
	}
	if _, err := NewLoad(p.Profile, []*clientv3.Client{nil}, p.ID); err != nil {
		return err
	}
	switch {
	case p.Profile.Rate <= 0:
		return fmt.Errorf("profile %s has no rate: a canary's load must be paced", p.Profile.Name)
	case load <= 0:
		return fmt.Errorf("profile %s has no duration", p.Profile.Name)
	case 2*load > every:
		return fmt.Errorf("--every %s is too short for the probe's %s of load (%s): give at least twice the load's length", every, load, p.Profile.Name)
	}
	return nil
}

// Close revokes the last probe's lease, which deletes the canary's key and
// nothing else (only the canary binds keys to it), and closes what Connect
// opened.
func (p *Prober) Close(ctx context.Context) error {
	defer p.disconnect()
	p.mu.Lock()
	id := p.lease
	p.lease = clientv3.NoLease
	p.mu.Unlock()
	if id == clientv3.NoLease || p.Target == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	_, err := p.Target.Client.Revoke(ctx, id)
	return err
}

// Probe runs one probe (a Probe).
func (p *Prober) Probe(ctx context.Context) Result {
	r := Result{Start: time.Now(), Certs: CertExpiry(p.TLSFiles)}
	defer func() { r.End = time.Now() }()
	if r.Err = p.connect(ctx); r.Err != nil {
		r.Skipped, r.Code = SkipUnreachable, Code(r.Err)
		return r
	}
	r.Members = p.members(ctx)
	var st *pb.StatusResponse
	st, r.HasLeader, r.LeaderKnown, r.Err = p.leader(ctx)
	switch {
	case !r.LeaderKnown:
		r.Skipped, r.Code = SkipUnreachable, Code(r.Err)
		return r
	case !r.HasLeader:
		r.Skipped, r.Err = SkipNoLeader, nil
		return r
	}
	r.Err = nil
	r.State = p.state(ctx, st)
	cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	r.Foreign, r.ForeignN, r.Err = p.ID.Foreign(cctx, p.Target.Client, ForeignLimit)
	cancel()
	switch {
	case r.Err != nil:
		r.Code = Code(r.Err)
		return r
	case r.ForeignN > 0:
		r.Skipped = SkipForeign // another client writes in the canary's directory: no load
		return r
	}
	w, err := NewLoad(p.Profile, p.Clients, p.ID)
	if err == nil {
		w.Lease, err = p.grant(ctx)
	}
	if err != nil {
		r.Err, r.Code = err, Code(err)
		return r
	}
	cfg := bench.Config{Workers: max(p.Profile.Clients, 1), Rate: p.Profile.Rate, Duration: time.Duration(p.Profile.Duration),
		Warmup: time.Duration(p.Profile.Warmup), Prefix: p.ID.Dir(), OwnKeys: true, KV: p.Target.Client, CommandTimeout: p.CommandTimeout}
	run := p.NewRun(p.Target)
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
	if w.Wrote > 0 {
		r.Revisions, r.WroteBytes = 1, w.Wrote
	}
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
// The first status that answered is returned.
func (p *Prober) leader(ctx context.Context) (first *pb.StatusResponse, has, known bool, err error) {
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
		if first == nil {
			first = st
		}
		if st.Leader != 0 {
			return st, true, true, nil
		}
	}
	return first, false, known, err
}

// grant takes the probe's lease. A lease a probe, not one kept alive: a
// canary cut off from its cluster for longer than the TTL finds its key gone
// and writes it anew, with no keep-alive stream to mend. The previous lease
// then holds no key and expires without a delete.
func (p *Prober) grant(ctx context.Context) (clientv3.LeaseID, error) {
	cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	ttl := max(int64(p.LeaseTTL/time.Second), MinLeaseTTL)
	l, err := p.Target.Client.Grant(cctx, ttl)
	if err != nil {
		return clientv3.NoLease, fmt.Errorf("lease: %w", err)
	}
	p.mu.Lock()
	p.lease = l.ID
	p.mu.Unlock()
	return l.ID, nil
}
