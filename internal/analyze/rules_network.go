package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// peerRTTRule grades the p99 of the round trip to the slowest peer.
func peerRTTRule(in *Input, lim Limits) Check {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Check{Severity: finding.OK, Observed: "single member: no peers"}
	}
	peers := in.W.Last().LabelValues(metrics.PeerRTT, "To")
	if len(peers) == 0 {
		return unknown("%s absent", metrics.PeerRTT)
	}
	// Grade the worst peer; but raft commits with a quorum, so while the slow
	// peers are few enough that the leader and the fast ones still form one, the
	// worst is a risk (warn), not every write's wait.
	var worst Check
	worstV := -1.0
	failing := 0
	for _, to := range peers {
		h, ok := in.W.HistDelta(metrics.PeerRTT, Labels{"To": to})
		if !ok {
			continue
		}
		c := gradeHistMin(h, 0.99, lim, 1)
		if c.Severity == finding.Fail {
			failing++
		}
		q, ok := h.Quantile(0.99)
		if !ok {
			continue
		}
		if q.Value > worstV {
			worstV = q.Value
			worst = c
			worst.Observed = "to " + to + ": " + c.Observed
		}
	}
	if worstV < 0 {
		// etcd records each prober's smoothed RTT 5 s after it starts and then only
		// every 30 s, so a short run often holds no sample at all.
		return unknown("no peer round trips measured in the window (etcd samples them every 30 s; run longer)")
	}
	if n := len(peers) + 1; worst.Severity == finding.Fail && failing <= n-(n/2+1) {
		worst.Severity = finding.Warn
		worst.Observed += "; the other peers keep a quorum with this member, so a risk: one more slow peer and every write waits for it"
	}
	return worst
}

// peerFailRule grades failed sends to peers. etcd creates the per-peer series on
// the first failure, so on an etcd member the family's absence means zero.
func peerFailRule(in *Input, lim Limits) Check {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Check{Severity: finding.OK, Observed: "single member: no peers"}
	}
	return rareEventRule(metrics.PeerSentFailures, networkAgrees)(in, lim)
}

// Network by share: a round trip that is most of what the client sees, and more
// than the server itself spends (several times, where the network's part is
// inferred), means the run measures the network more than etcd — at any delay
// size. etcd's minimum request time is the round trip
// plus the time to write the data to disk (etcd tuning guide; OpenShift's etcd
// latency requirements), which is why the share, not a fixed gap, is the measure.
const (
	// netShareWarn: "most of" the client p50.
	netShareWarn = 0.5
	// netOverServer: "several times" the server's own p50, for the inferred
	// waits (replication, follower link): residuals of subtracted measurements,
	// so they need a margin over the server before they are the network's. The
	// client round trip is measured directly (an HTTP/2 PING no etcd code
	// handles), so it needs only to exceed the server's own p50: then the run
	// measures the network more than etcd.
	netOverServer = 3.0
	// clientRTTFailMs: the etcd mixin's peer-RTT alert (150 ms) applied to the
	// client's round trip; peerRTTFailMs: the OpenShift guidance (p99 < 50 ms)
	// that every write's replication round must meet.
	clientRTTFailMs = 150.0
	peerRTTFailMs   = 50.0
	srcNetShare     = "etcd tuning guide and OpenShift etcd latency docs (a request takes at least the round trip plus the disk write); etcdperf: a round trip that is most of the client latency and more than the server's own time (several times, for a wait inferred by subtraction) is the network's"
)

// clientRTTRule grades the measured client-to-leader round trip by its share of
// the client-observed p50. The round trip is the run's own HTTP/2 PING where it
// was measured (no gRPC or etcd code handles it: the network and the kernels
// alone), less the same PING to this host itself, measured with it (the
// kernels' and thread wake-ups' part, which a busy host makes large); else a
// Status call.
func clientRTTRule(in *Input, _ Limits) Check {
	if in.Run == nil || in.NetworkRTTMs <= 0 {
		return Check{} // not measured: the gap rule stands in
	}
	b := computeBudget(in)
	if b.ClientP50Ms == nil || *b.ClientP50Ms <= 0 {
		return unknown("the run has no request latencies")
	}
	rtt, client := in.NetworkRTTMs, *b.ClientP50Ms
	server, known := serverSideP50(b)
	src := in.rttSource
	if host := min(in.hostRTTMs, rtt); host > 0 {
		// A loaded host's own wake-ups are no network's: off the round trip.
		src += fmt.Sprintf("; %s of it this host's own, as a PING to itself: %s the network's", units.Duration(host/1000), units.Duration((rtt-host)/1000))
		rtt -= host
	}
	obs := fmt.Sprintf("round trip %s (%s) of %s client p50 %s", units.Duration(in.NetworkRTTMs/1000), src, b.Op, units.Duration(client/1000))
	share := min(rtt/client, 1)
	if known {
		obs += fmt.Sprintf("; server-side %s", units.Duration(server/1000))
	}
	obs += " = " + pct(share) + " of the client latency"
	switch {
	case share < netShareWarn || (known && rtt < server):
		return Check{Severity: finding.OK, Observed: obs}
	case rtt >= clientRTTFailMs:
		return Check{Severity: finding.Fail, Observed: obs}
	}
	return Check{Severity: finding.Warn, Observed: obs + "; the run measures the network between client and leader more than etcd"}
}

// replicationRule grades the part of a multi-member write that neither the client
// round trip nor the leader's own work explains: the replication round (peer
// round trip plus the follower's fsync), whose peer-RTT histogram etcd samples
// only every 30 s. It does not apply to a single member (the rest is queueing)
// or to reads, and it stays quiet while a CPU is busy (then the rest is queueing).
func replicationRule(in *Input, _ Limits) Check {
	if in.Run == nil || in.NetworkRTTMs <= 0 || !in.PeersKnown || in.Peers == 0 {
		return Check{}
	}
	b := computeBudget(in)
	if b.ClientP50Ms == nil || *b.ClientP50Ms <= 0 || isRead(b.Op) {
		return Check{}
	}
	server, known := serverSideP50(b)
	if !known {
		return unknown("no server-side latency for the leader (need scrapes before and after)")
	}
	client := *b.ClientP50Ms
	rest := client - server - in.NetworkRTTMs
	var rep float64
	for _, p := range b.Parts {
		if p.Component == finding.PartReplication && p.P50Ms != nil {
			rep = *p.P50Ms // measured: it is part of server already
		}
	}
	wait := max(rest+rep, 0)
	// The replication round is paid by every write, the fastest of the run too:
	// it is at most that write's time less the client round trip. What the p50
	// leaves beyond it is queueing (gRPC, raft), not the network between members.
	fastest, ok := fastestMs(in.Run, b.Op)
	if !ok {
		return unknown("%s: the run keeps no service-time histogram, so its fastest write (the bound of the replication round) is unknown", b.Op)
	}
	// The follower's own fsync is in the round too, and is the disk's, not the
	// network's: on one slow disk shared by three members it is most of it.
	ff, _ := quorumFollowerFsync(in)
	wait = max(wait-ff, 0)
	round := max(fastest-in.NetworkRTTMs-ff, 0)
	obs := fmt.Sprintf("%s: client p50 %s − round trip %s − leader %s − follower fsync p50 %s leaves %s; the fastest write (%s) bounds the replication round's network at %s",
		b.Op, units.Duration(client/1000), units.Duration(in.NetworkRTTMs/1000), units.Duration((server-rep)/1000), units.Duration(ff/1000), units.Duration(wait/1000),
		units.Duration(fastest/1000), units.Duration(round/1000))
	// A write sent to a follower crosses the peer links twice more: the follower
	// forwards the proposal to the leader, and answers only once the leader's
	// next message tells it the entry is committed (raft's MsgProp, then the
	// commit index on MsgApp or a heartbeat). When most endpoints are followers
	// (clients balance round-robin over them), the median write is such a write.
	if f, n := followerEndpoints(in.Run); n > 0 && 2*f > n {
		round *= 2
		obs += fmt.Sprintf(", twice that for a write through a follower (%d of %d endpoints)", f, n)
	}
	wait = min(wait, round)
	share := min(wait/client, 1)
	obs += fmt.Sprintf(" = %s of the client latency", pct(share))
	switch {
	case share < netShareWarn || wait < netOverServer*(server-rep):
		return Check{Severity: finding.OK, Observed: obs}
	}
	if busy, what := cpuBusy(in); busy >= limCPU.Warn {
		return Check{Severity: finding.OK, Observed: obs + fmt.Sprintf("; %s CPU %s busy, so the rest may be queueing", what, pct(busy))}
	}
	if wait >= peerRTTFailMs {
		return Check{Severity: finding.Fail, Observed: obs + "; every write waits for it"}
	}
	return Check{Severity: finding.Warn, Observed: obs + "; every write waits for it"}
}

// followerLinkRule grades the slowest endpoint's peer round (its linearizable
// read beyond its own round trip) over the fastest endpoint's: the extra is the
// way between that follower and the leader, which every request sent to it pays
// (the read's ReadIndex, a write's forwarded proposal and commit notice), so a
// slow link to one follower shows though the quorum, and so the median write,
// never waits for it. etcd's peer-RTT histogram, sampled every 30 s, rarely
// holds a sample of a run.
func followerLinkRule(in *Input, _ Limits) Check {
	if in.Run == nil || in.Run.Network == nil || len(in.Run.Network.Endpoints) < 2 {
		return Check{}
	}
	b := computeBudget(in)
	if b.ClientP50Ms == nil || *b.ClientP50Ms <= 0 {
		return unknown("the run has no request latencies")
	}
	eps := in.Run.Network.Endpoints
	fast, slow := eps[0], eps[0]
	for _, e := range eps[1:] {
		if e.PeerMs() < fast.PeerMs() {
			fast = e
		}
		if e.PeerMs() > slow.PeerMs() {
			slow = e
		}
	}
	extra, client := slow.PeerMs()-fast.PeerMs(), *b.ClientP50Ms
	server, known := serverSideP50(b)
	share := min(extra/client, 1)
	obs := fmt.Sprintf("a linearizable read through %s took %s beyond its round trip, %s more than through %s: %s of the %s client p50 %s, paid by every request sent to it (1 of %d endpoints)",
		slow.Endpoint, units.Duration(slow.PeerMs()/1000), units.Duration(extra/1000), fast.Endpoint, pct(share), b.Op, units.Duration(client/1000), len(eps))
	switch {
	case share < netShareWarn || (known && extra < netOverServer*server):
		return Check{Severity: finding.OK, Observed: obs}
	case extra >= peerRTTFailMs:
		return Check{Severity: finding.Fail, Observed: obs + "; the link between that member and the leader is slow"}
	}
	return Check{Severity: finding.Warn, Observed: obs + "; the link between that member and the leader is slow"}
}

// latencyGapRule compares the client-observed p50 with the server-side p50 when
// the client-to-leader round trip was not measured (run files from before
// results.Run.Network was kept): a large gap the server does not account for is
// spent between client and leader, graded against the peer round trip's cited
// limits since nothing in such a run measured a baseline. When a CPU is busy the
// gap may be queueing instead, so it is then only a warning.
func latencyGapRule(in *Input, lim Limits) Check {
	if in.Run == nil || in.NetworkRTTMs > 0 {
		return Check{}
	}
	b := computeBudget(in)
	if b.ClientP50Ms == nil {
		return unknown("the run has no request latencies")
	}
	server, ok := serverSideP50(b)
	if !ok {
		return unknown("no server-side latency for the leader (need scrapes before and after)")
	}
	gapMs := *b.ClientP50Ms - server
	sev := lim.Grade(gapMs / 1000)
	obs := fmt.Sprintf("%s: client %s vs server-side %s", b.Op, units.Duration(*b.ClientP50Ms/1000), units.Duration(server/1000))
	if gapMs < 0 {
		obs += " (no gap)"
	} else {
		obs += fmt.Sprintf(" → gap %s", units.Duration(gapMs/1000))
	}
	if sev == finding.Fail {
		if busy, what := cpuBusy(in); busy >= limCPU.Warn {
			sev = finding.Warn
			obs += fmt.Sprintf("; %s CPU %s busy, so the gap may be queueing", what, pct(busy))
		}
	}
	return Check{Severity: sev, Observed: obs}
}

// cpuBusy is the busiest of the leader's and the generator's CPU utilisation.
func cpuBusy(in *Input) (float64, string) {
	busy, what := 0.0, ""
	lead := in.member(in.Leader)
	if u, ok := serverCPU(&lead); ok && u > busy {
		busy, what = u, "server"
	}
	if u, _, ok := clientCPU(in); ok && u > busy {
		busy, what = u, "generator"
	}
	return busy, what
}

// fastestMs is the fastest service time of op in the run, in milliseconds.
func fastestMs(run *results.Run, op string) (float64, bool) {
	o := run.FindOp(op)
	if o == nil || o.ServiceHist == "" {
		return 0, false
	}
	h, err := o.ServiceHist.Decode()
	if err != nil || h.TotalCount() == 0 {
		return 0, false
	}
	return float64(h.Min()) / 1000, true
}

// followerEndpoints counts the run's endpoints that are a follower's client URL,
// of n endpoints; f is 0 when the member list says nothing of the leader.
func followerEndpoints(run *results.Run) (f, n int) {
	hostPort := func(u string) string {
		if i := strings.Index(u, "://"); i >= 0 {
			u = u[i+3:]
		}
		return strings.TrimSuffix(u, "/")
	}
	role := map[string]bool{} // host:port → is leader
	known := false
	for _, m := range run.Target.Members {
		known = known || m.IsLeader
		for _, u := range m.ClientURLs {
			role[hostPort(u)] = m.IsLeader
		}
	}
	for _, ep := range run.Target.Endpoints {
		if leader, ok := role[hostPort(ep)]; ok && known && !leader {
			f++
		}
	}
	return f, len(run.Target.Endpoints)
}
