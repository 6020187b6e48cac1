// Package drill runs membership drills under load and measures what they cost:
// replace-member (remove a follower, add a fresh member as a learner, let it
// receive the leader's snapshot and catch up on the log, promote it) and
// rolling-restart (restart each member in turn). Each drill is a sequence of
// phases; for each phase it reports the client latency and errors (from the
// background load's per-second histograms), leader changes and heartbeat send
// failures (from the members' /metrics scraped at the phase boundaries), and the
// leader's peer traffic. A guard refuses a drill that would risk the quorum, and
// an interrupted drill leaves the cluster with its original number of voters.
package drill

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/results"
)

// The drills' names, as their reports' "drill" field says.
const (
	ReplaceName = "replace-member"
	RestartName = "rolling-restart"
)

// Phase names, in drill order.
const (
	PhaseBefore   = "before"
	PhaseRemove   = "remove"
	PhaseSnapshot = "snapshot"
	PhaseCatchUp  = "catch-up"
	PhaseAfter    = "after"
	PhaseRestart  = "restart"
)

// Load runs the background load until ctx is done and returns what it
// measured; its per-second intervals give the phases their client figures.
type Load func(ctx context.Context) (*results.Run, error)

// Env is what every drill needs: the cluster, its metrics, the load, and where
// to say what it is doing.
type Env struct {
	// Client reaches the cluster (its endpoints need not include a member the
	// drill adds; Status and HashKV dial members by URL). ReplaceMember points it
	// at the members that stay before it removes one.
	Client *clientv3.Client
	// HTTP fetches /metrics; MetricsURL maps a member's client URL to its metrics URL
	// (nil: the client URL + /metrics).
	HTTP       *http.Client
	MetricsURL func(clientURL string) string
	Load       Load
	// Progress receives one line per phase and per action (stderr).
	Progress func(format string, args ...any)
	// Timeout bounds one API call (default 5 s).
	Timeout time.Duration
	// Poll is how often the drill polls Status and the leader's metrics (default 200 ms).
	Poll time.Duration
}

func (e *Env) timeout() time.Duration {
	if e.Timeout <= 0 {
		return bench.DefaultCommandTimeout
	}
	return e.Timeout
}

func (e *Env) poll() time.Duration {
	if e.Poll <= 0 {
		return 200 * time.Millisecond
	}
	return e.Poll
}

func (e *Env) metricsURL(clientURL string) string {
	if e.MetricsURL != nil {
		return e.MetricsURL(clientURL)
	}
	return strings.TrimSuffix(clientURL, "/") + "/metrics"
}

func (e *Env) say(format string, args ...any) {
	if e.Progress != nil {
		e.Progress(format, args...)
	}
}

// Phase is one stretch of a drill with what it cost.
type Phase struct {
	Name      string    `json:"name"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	// Member is the member a rolling-restart phase restarted.
	Member string `json:"member,omitempty"`
	Client Client `json:"client"`
	// LeaderChanges is the most leader changes any member saw during the phase
	// (etcd_server_leader_changes_seen_total); nil when no member was scraped at both ends.
	LeaderChanges *int64 `json:"leader_changes"`
	// HeartbeatSendFailures sums etcd_server_heartbeat_send_failures_total over the members.
	HeartbeatSendFailures *int64 `json:"heartbeat_send_failures"`
	// LeaderPeerBytesPerS is the leader's etcd_network_peer_sent_bytes_total rate.
	LeaderPeerBytesPerS *float64 `json:"leader_peer_sent_bytes_per_s"`
	// UnavailableS is, in a rolling restart, how long the restarted member did not
	// answer (stop to healthy again).
	UnavailableS *float64 `json:"unavailable_s,omitempty"`
	Note         string   `json:"note,omitempty"`
}

// Client is the background load's figures over a phase, from its per-second
// histograms: the seconds whose middle lies in the phase, or for a phase shorter
// than that, the seconds it overlaps (shared with its neighbours).
type Client struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// Action is something the drill did to the cluster, with when it did it.
type Action struct {
	At   time.Time `json:"at"`
	What string    `json:"what"`
}

// record makes the load's run the drill's run file: it stores the drill's report
// as its section, so a report of the file shows the drill, and the analysis of
// the load, so its verdict is the one analyze of the file gives; and it
// marks the run interrupted or failed as the drill was, not as its load, which
// the drill always stops.
func record(run *results.Run, rep results.Section, interrupted bool, errText string) error {
	if run == nil {
		return nil
	}
	if err := run.SetSection(rep); err != nil {
		return fmt.Errorf("record the drill in its run: %w", err)
	}
	run.Interrupted, run.Error = interrupted, errText
	if run.Diagnosis == nil {
		// The verdict on the load, as analyze RUNFILE grades the file later.
		if a, err := analyze.Run(run, analyze.Options{}); err == nil {
			run.Diagnosis = a.Diagnosis()
		}
	}
	return nil
}

// SectionName is the report's key in the run file's sections.
func (*ReplaceResult) SectionName() string { return "drill_replace_member" }

// SectionName is the report's key in the run file's sections.
func (*RestartResult) SectionName() string { return "drill_rolling_restart" }

var (
	_ = results.RegisterSection(&ReplaceResult{})
	_ = results.RegisterSection(&RestartResult{})
)
