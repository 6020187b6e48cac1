package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// The round between the members through the load: pairs of reads sent to each
// endpoint through the measured window (results.EndpointLoad.ReadRoundHist),
// a linearizable one's time beyond a serializable one's, graded at the p99
// against the requests that endpoint served. A link between members that holds
// its packets now and then shows there: etcd samples its own peer round trip
// every 30 s, and the rounds measured before the load keep the fastest.

// endpointRound is one endpoint's read rounds and the latency of the requests
// of the budget's op that it served (ms).
type endpointRound struct {
	endpoint             string
	n, unanswered        int64
	round50, round99     float64
	client99             float64
	clientOwn, clientSet bool
}

// endpointRounds is the run's read rounds per endpoint with the requests of op
// each served; nil when none was measured (one endpoint, older run files).
func endpointRounds(run *results.Run, op string) []endpointRound {
	if run == nil {
		return nil
	}
	o := run.FindOp(op)
	var out []endpointRound
	for _, e := range run.EndpointLoads {
		if e.ReadRounds+e.ReadRoundsUnanswered == 0 || e.ReadRoundHist == "" {
			continue
		}
		p50, p99, _, ok := histQuantiles(e.ReadRoundHist)
		if !ok {
			continue
		}
		r := endpointRound{endpoint: e.Endpoint, n: e.ReadRounds, unanswered: e.ReadRoundsUnanswered, round50: p50, round99: p99}
		_, r.client99, r.clientOwn, r.clientSet = endpointClient(o, e.Endpoint)
		out = append(out, r)
	}
	return out
}

// roundGraded is where readRoundRule graded the worst endpoint: its share of
// the p99 of the requests it served; ok false when no endpoint was graded.
type roundGraded struct {
	share float64
	ok    bool
}

// readRoundRule grades each endpoint's read rounds at the p99, by what the
// tail adds over the round's own median, as the PINGs are graded (pingGrade:
// over the floor of a busy host's wake-ups, at least a fifth of the requests'
// p99, fail from the etcd mixin's 150 ms), against the slowest disk of the
// members: a member's WAL fsync holds its answer to the leader's heartbeat (a
// follower sends after it saves) and its backend commit and apply hold the
// read, so a round under the slowest member's WAL fsync and backend commit
// p99 plus the apply's is no link's. A busy CPU delays the answers too, and
// an election the reads (the election rule grades it).
func readRoundRule(in *Input, _ Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	c, _ := readRoundWorst(in, computeBudget(in))
	return c
}

// readRoundWorst grades every endpoint (see readRoundRule) and returns the
// worst with its share.
func readRoundWorst(in *Input, b *finding.Budget) (Observation, roundGraded) {
	if in.Run == nil || b == nil {
		return Observation{}, roundGraded{}
	}
	rs := endpointRounds(in.Run, b.Op)
	if len(rs) == 0 {
		return Observation{}, roundGraded{}
	}
	disk, diskOn, known := slowestDisk(in, b)
	var worst Observation
	var where roundGraded
	worstShare := -1.0
	var rest []string
	for _, r := range rs {
		if !r.clientSet {
			continue
		}
		// The tail over the round's own median: the median round is the
		// replication rule's (at p50), and a loaded host's steady round (the
		// followers' fsyncs, the apply) moves both.
		tail := max(r.round99-r.round50, 0)
		sev, share := pingGrade(tail, r.client99, pingTailFloorMs, disk, known)
		whose := "the client"
		if r.clientOwn {
			whose = "its requests'"
		}
		obs := fmt.Sprintf("read round through %s during the load (%d pairs of reads): p50 %s, p99 %s, %s over its median = %s of %s p99 %s",
			in.describe(memberName(r.endpoint)), r.n, units.Duration(r.round50/1000), units.Duration(r.round99/1000), units.Duration(tail/1000), pct(share), whose, units.Duration(r.client99/1000))
		if r.unanswered > 0 {
			obs += fmt.Sprintf(" (%d unanswered)", r.unanswered)
		}
		if sev.Bad() {
			obs += "; the round between the members (the leader's heartbeat to a quorum, a follower's way to the leader) is slow now and then"
		}
		if worstShare < 0 || sev.Rank() > worst.Severity.Rank() || (sev == worst.Severity && share > worstShare) {
			if worstShare >= 0 {
				rest = append(rest, worst.Observed)
			}
			worst, worstShare = Observation{Severity: sev, Observed: obs}, share
			where = roundGraded{share: share, ok: true}
			continue
		}
		rest = append(rest, obs)
	}
	if worstShare < 0 {
		return unknown("the run has no request latencies beside its read rounds"), roundGraded{}
	}
	if known {
		worst.Observed += fmt.Sprintf("; the slowest disk: %s WAL fsync and backend commit p99, and the apply's, %s", diskOn, units.Duration(disk/1000))
	}
	starved := cpuStarved(in)
	changes, _ := leaderChanges(in)
	switch {
	case !worst.Severity.Bad():
	case starved != "":
		worst.Severity = finding.OK
		worst.Observed += fmt.Sprintf("; %s, so the members' answers wait for it too: not the link's alone", starved)
	case changes > 0:
		// A read waits for the new leader's first commit: the election's cost,
		// which the election rule grades.
		worst.Severity = finding.OK
		worst.Observed += fmt.Sprintf("; the leader changed %.0f time(s) in the window, and the reads waited for the election", changes)
	}
	if len(rest) > 0 {
		worst.Observed += "; the others: " + strings.Join(shortLines(rest, "read round through "), "; ")
	}
	return worst, where
}

// slowestDisk is the largest over the members of the WAL fsync p99 plus the
// backend commit p99 (ms: a member applies behind its backend's commit, and a
// read waits for the apply), plus the budget's apply part at the p99, and the
// member it was read on; known false when no member's WAL fsync was measured.
func slowestDisk(in *Input, b *finding.Budget) (float64, string, bool) {
	worst, on, known := 0.0, "", false
	for _, w := range in.Members {
		_, wal := histMs(w, metrics.WALFsync)
		if wal == nil {
			continue
		}
		known = true
		d := *wal
		if _, commit := histMs(w, metrics.BackendCommit); commit != nil {
			d += *commit
		}
		if d >= worst {
			worst, on = d, in.describe(w.Member)
		}
	}
	for _, p := range b.Parts {
		if p.Component == finding.PartApply && p.P99Ms != nil {
			worst += *p.P99Ms
		}
	}
	return worst, on, known
}
