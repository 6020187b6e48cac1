package analyze

import (
	"fmt"
	"math"

	"github.com/etcdperf/etcdperf/finding"
)

// peerRTTRule grades the p99 of the round trip to the slowest peer.
func peerRTTRule(in *Input) Check {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Check{Severity: finding.OK, Observed: "single member: no peers"}
	}
	peers := in.W.Last().LabelValues(mPeerRTT, "To")
	if len(peers) == 0 {
		return unknown("%s absent", mPeerRTT)
	}
	// Grade the worst peer: one distant member is enough to slow every commit.
	var worst Check
	worstV := -1.0
	for _, to := range peers {
		h, ok := in.W.HistDelta(mPeerRTT, Labels{"To": to})
		if !ok {
			continue
		}
		c := gradeHist(h, 0.99, 0.050, 0.150)
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
	return worst
}

// peerFailRule grades failed sends to peers. etcd creates the per-peer series on
// the first failure, so on an etcd member the family's absence means zero.
func peerFailRule(in *Input) Check {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if in.PeersKnown && in.Peers == 0 {
		return Check{Severity: finding.OK, Observed: "single member: no peers"}
	}
	if _, present := in.W.Last().Families[mPeerSentFail]; !present {
		if in.W.Last().IsEtcd() {
			return Check{Severity: finding.OK, Observed: "0 (no failure recorded)"}
		}
		return unknown("%s absent", mPeerSentFail)
	}
	d, _ := in.W.CounterDelta(mPeerSentFail, nil)
	return Check{Severity: grade(d, 1, math.Inf(1)), Observed: fmt.Sprintf("%.0f", d)}
}

// latencyGapRule compares the client-observed p50 with the server-side p50: a large
// gap the server does not account for is spent between client and leader. When a
// CPU is busy the gap may be queueing instead, so it is then only a warning.
func latencyGapRule(in *Input) Check {
	if in.Run == nil {
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
	if in.NetworkRTTMs > 0 {
		gapMs -= in.NetworkRTTMs
	}
	sev := grade(gapMs/1000, 0.050, 0.150)
	obs := fmt.Sprintf("%s: client %s vs server-side %s", b.Op, fmtSeconds(*b.ClientP50Ms/1000), fmtSeconds(server/1000))
	if gapMs < 0 {
		obs += " (no gap)"
	} else {
		obs += fmt.Sprintf(" → gap %s", fmtSeconds(gapMs/1000))
	}
	if sev == finding.Fail {
		if busy, what := cpuBusy(in); busy >= 0.7 {
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
