package analyze

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/stats"
	"github.com/etcdperf/etcdperf/results"
)

// peerRTTRule grades the p99 of the round trip to the slowest peer.
func peerRTTRule(in *Input, lim Limits) Observation {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Observation{Severity: finding.OK, Observed: "single member: no peers"}
	}
	peers := in.W.Last().LabelValues(metrics.PeerRTT, "To")
	if len(peers) == 0 {
		return unknown("%s absent", metrics.PeerRTT)
	}
	// Grade the worst peer; but raft commits with a quorum, so while the slow
	// peers are few enough that the leader and the fast ones still form one, the
	// worst is a risk (warn), not every write's wait.
	var worst Observation
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
func peerFailRule(in *Input, lim Limits) Observation {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Observation{Severity: finding.OK, Observed: "single member: no peers"}
	}
	return rareEventRule(metrics.PeerSentFailures, networkAgrees)(in, lim)
}

// Network by share: a measured round trip that is more than the server itself
// spends and a fair share of what the client sees (several times the server and
// most of it, where the network's part is inferred) means the run measures the
// network more than etcd — at any delay size. etcd's minimum request time is the round trip
// plus the time to write the data to disk (etcd tuning guide; OpenShift's etcd
// latency requirements), which is why the share, not a fixed gap, is the measure.
const (
	// netShareWarn: "most of" the client p50.
	netShareWarn = 0.5
	// netShareLargest: etcdperf's own. A measured round trip that exceeds the
	// server's own time is the largest part of what clients wait for; from a
	// fifth of the client p50 on, removing it makes requests at least 1.25×
	// faster (Amdahl), which is worth naming. Below a fifth it is not what
	// limits the clients, whatever its size.
	netShareLargest = 0.2
	// clientRTTFloorMs: a round trip shorter than one within a datacenter
	// (≈ 0.5 ms, "Latency numbers every programmer should know") is no fault of
	// the network, whatever its share of a sub-millisecond request: a loopback's
	// 70 µs is most of a 240 µs range and nothing to fix.
	clientRTTFloorMs = 0.5
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

// clientRTTRule grades the round trip between client and members by its share
// of the client's latency. Through the load, it is the HTTP/2 PINGs on every
// endpoint's load connections (no gRPC or etcd code handles them: the network
// and the kernels alone), graded per endpoint at the p50 and the p99
// (pingRule). Only where no PING was answered (the grpc transport) does the
// round trip measured before the load stand in, at the p50: its HTTP/2 PING
// less the same PING to this host itself (the kernels' and thread wake-ups'
// part, which a busy host makes large), else a Status call.
func clientRTTRule(in *Input, _ Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	b := computeBudget(in)
	if ps := endpointPings(in.Run, b.Op); len(ps) > 0 {
		return pingRule(in, b, ps)
	}
	if in.NetworkRTTMs <= 0 {
		return Observation{} // not measured: the gap is unexplained (latencyGapRule)
	}
	if b.ClientP50Ms == nil || *b.ClientP50Ms <= 0 {
		return unknown("the run has no request latencies")
	}
	rtt, client := in.NetworkRTTMs, *b.ClientP50Ms
	server, known := serverSide(b, false)
	src := in.rttSource + ", measured before the load: the run holds no PINGs through it"
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
	case rtt < clientRTTFloorMs, known && (rtt < server || share < netShareLargest), !known && share < netShareWarn:
		return Observation{Severity: finding.OK, Observed: obs}
	case rtt >= clientRTTFailMs:
		return Observation{Severity: finding.Fail, Observed: obs}
	}
	return Observation{Severity: finding.Warn, Observed: obs + "; the run measures the network between client and leader more than etcd"}
}

// replicationRule grades the replication round a multi-member write waits
// for, as measured, never as what the other parts leave over (under load that
// remainder is queueing in gRPC and raft as often as the network). The
// linearizable read through each endpoint, beyond its round trip
// (results.EndpointRound.PeerMs), crosses the links a write crosses: through
// the leader, its heartbeat round to a quorum (a write's MsgApp round); through
// a follower, the way to the leader and back as well (a forwarded proposal and
// its commit notice). Clients spread over the endpoints, so the median write
// pays the median endpoint's round. It does not apply to a single member or to
// reads, and stays quiet while a CPU is busy (the reads then queue too).
func replicationRule(in *Input, _ Limits) Observation {
	if in.Run == nil || !in.PeersKnown || in.Peers == 0 {
		return Observation{}
	}
	b := computeBudget(in)
	if b.ClientP50Ms == nil || *b.ClientP50Ms <= 0 || isRead(b.Op) {
		return Observation{}
	}
	round, ok := replicationRound(in.Run)
	if !ok {
		return unknown("no linearizable read was measured through the endpoints, so the replication round is not known")
	}
	client := *b.ClientP50Ms
	server, known := serverSide(b, false)
	var rep float64
	for _, p := range b.Parts {
		if p.Component == finding.PartReplication && p.P50Ms != nil {
			rep = *p.P50Ms
		}
	}
	share := min(round/client, 1)
	obs := fmt.Sprintf("%s: the replication round (a linearizable read beyond its round trip, median of %d endpoints) %s = %s of the client p50 %s",
		b.Op, len(in.Run.Network.Endpoints), units.Duration(round/1000), pct(share), units.Duration(client/1000))
	switch {
	case share < netShareWarn || (known && round < netOverServer*(server-rep)):
		return Observation{Severity: finding.OK, Observed: obs}
	}
	if busy, what := cpuBusy(in); busy >= limCPU.Warn {
		return Observation{Severity: finding.OK, Observed: obs + fmt.Sprintf("; %s CPU %s busy, so the round may be queueing", what, pct(busy))}
	}
	if round >= peerRTTFailMs {
		return Observation{Severity: finding.Fail, Observed: obs + "; every write waits for it"}
	}
	return Observation{Severity: finding.Warn, Observed: obs + "; every write waits for it"}
}

// replicationRound is the median over the run's endpoints of the linearizable
// read's time beyond its round trip (ms): the replication round the median
// write pays (see replicationRule).
func replicationRound(run *results.Run) (float64, bool) {
	if run == nil || run.Network == nil || len(run.Network.Endpoints) == 0 {
		return 0, false
	}
	var rounds []float64
	for _, e := range run.Network.Endpoints {
		rounds = append(rounds, e.PeerMs())
	}
	return stats.Median(rounds), true
}

// followerLinkRule grades the slowest endpoint's peer round (its linearizable
// read beyond its own round trip) over the fastest endpoint's: the extra is the
// way between that follower and the leader, which every request sent to it pays
// (the read's ReadIndex, a write's forwarded proposal and commit notice), so a
// slow link to one follower shows though the quorum, and so the median write,
// never waits for it. etcd's peer-RTT histogram, sampled every 30 s, rarely
// holds a sample of a run.
func followerLinkRule(in *Input, _ Limits) Observation {
	if in.Run == nil || in.Run.Network == nil || len(in.Run.Network.Endpoints) < 2 {
		return Observation{}
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
	server, known := serverSide(b, false)
	share := min(extra/client, 1)
	obs := fmt.Sprintf("a linearizable read through %s took %s beyond its round trip, %s more than through %s: %s of the %s client p50 %s, paid by every request sent to it (1 of %d endpoints)",
		slow.Endpoint, units.Duration(slow.PeerMs()/1000), units.Duration(extra/1000), fast.Endpoint, pct(share), b.Op, units.Duration(client/1000), len(eps))
	switch {
	case share < netShareWarn || (known && extra < netOverServer*server):
		return Observation{Severity: finding.OK, Observed: obs}
	case extra >= peerRTTFailMs:
		return Observation{Severity: finding.Fail, Observed: obs + "; the link between that member and the leader is slow"}
	}
	return Observation{Severity: finding.Warn, Observed: obs + "; the link between that member and the leader is slow"}
}

// latencyGapRule: where no round trip was measured (run files from before
// results.Run.Network was kept, a transport that sent no PING and a failed
// probe) the gap between the client's p50 and the server's own is what the
// measured parts leave over: network, queueing in gRPC and raft, or the
// generator. It is printed as unexplained and graded as no class: the network
// is not measured.
func latencyGapRule(in *Input, _ Limits) Observation {
	if in.Run == nil || in.NetworkRTTMs > 0 {
		return Observation{}
	}
	b := computeBudget(in)
	if len(endpointPings(in.Run, b.Op)) > 0 {
		return Observation{}
	}
	if b.ClientP50Ms == nil {
		return unknown("the run has no request latencies")
	}
	server, ok := serverSide(b, false)
	if !ok {
		return unknown("no round trip was measured, and no server-side latency for the leader (need scrapes before and after)")
	}
	gapMs := max(*b.ClientP50Ms-server, 0)
	return unknown("no round trip was measured: %s client p50 %s vs server-side %s leaves %s unexplained (network, queueing in gRPC and raft, or the generator: a rest is no class's)",
		b.Op, units.Duration(*b.ClientP50Ms/1000), units.Duration(server/1000), units.Duration(gapMs/1000))
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
