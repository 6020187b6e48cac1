package analyze

import (
	"fmt"

	"github.com/etcdperf/etcdperf/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/metrics"
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
	if _, present := in.W.Last().Families[metrics.PeerSentFailures]; !present {
		if in.W.Last().IsEtcd() {
			return Check{Severity: finding.OK, Observed: "0 (no failure recorded)"}
		}
		return unknown("%s absent", metrics.PeerSentFailures)
	}
	d, _ := in.W.CounterDelta(metrics.PeerSentFailures, nil)
	return Check{Severity: lim.Grade(d), Observed: fmt.Sprintf("%.0f", d)}
}

// Network by share: a round trip that is most of what the client sees, and several
// times what the server itself spends, means the run measures the network more
// than etcd — at any delay size. etcd's minimum request time is the round trip
// plus the time to write the data to disk (etcd tuning guide; OpenShift's etcd
// latency requirements), which is why the share, not a fixed gap, is the measure.
const (
	// netShareWarn: "most of" the client p50.
	netShareWarn = 0.5
	// netOverServer: "several times" the server's own p50.
	netOverServer = 3.0
	// rttFloorMs: a round trip under 1 ms is loopback or one LAN hop (these
	// machines measure 0.1–0.3 ms on loopback, client stack included): the
	// client stack, not a network anyone can fix.
	rttFloorMs = 1.0
	// restFloorMs: the unexplained rest of a multi-member write also holds gRPC
	// and raft queueing, a few ms under load; below 5 ms it is not read as a
	// replication round trip.
	restFloorMs = 5.0
	// clientRTTFailMs: the etcd mixin's peer-RTT alert (150 ms) applied to the
	// client's round trip; peerRTTFailMs: the OpenShift guidance (p99 < 50 ms)
	// that every write's replication round must meet.
	clientRTTFailMs = 150.0
	peerRTTFailMs   = 50.0
	srcNetShare     = "etcd tuning guide and OpenShift etcd latency docs (a request takes at least the round trip plus the disk write); etcdperf: a round trip that is most of the client latency and several times the server's own time is the network's"
)

// clientRTTRule grades the measured client-to-leader round trip by its share of
// the client-observed p50.
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
	share := min(rtt/client, 1)
	obs := fmt.Sprintf("round trip %s of %s client p50 (%s)", units.Duration(rtt/1000), b.Op, units.Duration(client/1000))
	if known {
		obs += fmt.Sprintf("; server-side %s", units.Duration(server/1000))
	}
	obs += " = " + pct(share) + " of the client latency"
	switch {
	case rtt < rttFloorMs:
		return Check{Severity: finding.OK, Observed: obs + "; under 1 ms: loopback or LAN and the client stack"}
	case share < netShareWarn || (known && rtt < netOverServer*server):
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
	wait := rest + rep
	share := min(max(wait, 0)/client, 1)
	obs := fmt.Sprintf("%s: client p50 %s − round trip %s − leader %s leaves %s for replication = %s of the client latency",
		b.Op, units.Duration(client/1000), units.Duration(in.NetworkRTTMs/1000), units.Duration((server-rep)/1000), units.Duration(max(wait, 0)/1000), pct(share))
	switch {
	case wait < restFloorMs || share < netShareWarn || wait < netOverServer*(server-rep):
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

// latencyGapRule compares the client-observed p50 with the server-side p50 when
// the client-to-leader round trip was not measured (older run files): a large gap
// the server does not account for is spent between client and leader. When a CPU
// is busy the gap may be queueing instead, so it is then only a warning.
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
