// Package serve is etcdperf's canary: a scheduler that runs one short, bounded
// probe of a cluster per tick (never two at once, none without a leader, backing
// off while probes fail), an exporter that turns each probe's verdict into
// Prometheus series, and a status page with the latest verdict and the probe
// latency of the last hours.
package serve

import (
	"context"
	_ "embed"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// DefaultListen is serve's default HTTP address: loopback only, and a port no
// etcd uses (2379 client, 2380 peer, 2381 kubeadm's --listen-metrics-urls).
const DefaultListen = "127.0.0.1:9379"

// LoadTiny is the --load of serve's own light probe (TinyProfile).
const LoadTiny = "tiny"

//go:embed tiny.yaml
var tinyYAML []byte

// TinyProfile is the default probe: 10 requests/s for 5 s, half writes, half gets.
func TinyProfile() (*profiles.Profile, error) {
	return profiles.Parse("serve-tiny", tinyYAML)
}

// Skip reasons: a tick on which no load was sent.
const (
	SkipNoLeader    = "no_leader"
	SkipUnreachable = "unreachable"
	// SkipForeign: keys the canary did not write are in its directory.
	SkipForeign = "foreign_keys"
)

// Result is what one tick did.
type Result struct {
	Start, End time.Time
	// Skipped names why no load was sent ("" when the probe ran).
	Skipped string
	// HasLeader is whether the cluster had a leader before the load; LeaderKnown
	// is false when no member answered.
	HasLeader, LeaderKnown bool
	// Err is why the probe failed; Code its gRPC code name.
	Err  error
	Code string
	// Run and Analysis are the probe's run file and analysis; Verdict is check's
	// default verdict over them.
	Run      *results.Run
	Analysis analyze.Result
	Verdict  finding.Verdict
	RunFile  string
	// State is the cluster's footprint before the load.
	State ClusterState
	// Foreign names up to ForeignLimit keys in the canary's directory it did
	// not write; ForeignN counts them all.
	Foreign  []string
	ForeignN int64
	// Members is each member's own answer, nil when the cluster was not reached.
	Members []MemberState
	// Certs is the expiry of the certificates in the TLS files, by file.
	Certs map[string]time.Time
	// Revisions is how many revisions the probe wrote (0 or 1), of WroteBytes
	// of key and value.
	Revisions, WroteBytes int
}

// Ran says whether the probe sent load and produced a verdict.
func (r Result) Ran() bool { return r.Skipped == "" && r.Run != nil && len(r.Run.Ops) > 0 }

// Failing says whether the cluster could not be probed or did not serve the
// probe: it makes the scheduler back off. A fail verdict on a cluster that
// served every request is a measurement, not a failure: the ticks keep their
// pace, so the verdict series stay fresh.
func (r Result) Failing() bool {
	if r.Skipped != "" || r.Err != nil || !r.Ran() {
		return true
	}
	return r.Run.Paced().Errors > 0
}

// Probe runs one probe; it returns when the probe is done or ctx is cancelled
// (then with whatever was measured, its keys deleted).
type Probe func(ctx context.Context) Result

// Schedule says how often to probe and how far to back off.
type Schedule struct {
	Every time.Duration
	// MaxBackoff bounds the wait after consecutive failing probes, which doubles
	// from Every; 0 means 8 × Every.
	MaxBackoff time.Duration
	// Probes, when positive, ends the schedule after that many ticks.
	Probes int
}

// Next is the period from one probe's start to the next after failures
// failing probes in a row: Every, doubled per failure up to MaxBackoff.
func (s Schedule) Next(failures int) time.Duration {
	limit := s.MaxBackoff
	if limit <= 0 {
		limit = 8 * s.Every
	}
	d := s.Every
	for range failures {
		if d >= limit/2 {
			return max(limit, s.Every)
		}
		d *= 2
	}
	return d
}

// Run probes on schedule until ctx is done (or s.Probes ticks have run),
// handing each result to record.
// Probes run one after the other in this goroutine, so they never overlap; a
// probe longer than the period delays the next rather than running beside it.
// The first probe starts at once.
func Run(ctx context.Context, s Schedule, probe Probe, record func(Result)) {
	failures, ticks := 0, 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		start := time.Now()
		r := probe(ctx)
		if r.Start.IsZero() {
			r.Start = start
		}
		if r.End.IsZero() {
			r.End = time.Now()
		}
		if ctx.Err() != nil && !r.Ran() {
			return // stopped mid-probe: nothing to report
		}
		record(r)
		if ticks++; s.Probes > 0 && ticks >= s.Probes {
			return
		}
		if r.Failing() {
			failures++
		} else {
			failures = 0
		}
		// Start to start, so the series land every period; never negative.
		timer.Reset(max(0, s.Next(failures)-time.Since(start)))
	}
}
