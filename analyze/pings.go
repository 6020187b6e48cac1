package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// The round trip through the load: the HTTP/2 PINGs sent on each endpoint's
// load connections through the measured window (results.EndpointLoad.PingHist)
// are the network's distribution, graded at the client's p50 and p99 against
// the latency of the requests that endpoint served, so a link that holds a
// few percent of its packets shows in the tail while its median is fine.

// pingTailFloorMs: a PING p99 under 10 ms is no fault of the network whatever
// its share of a fast request's p99. etcdperf's own: a tenth of etcd's default
// heartbeat interval (100 ms; the tuning guide sets the heartbeat near the
// round trip between members, so a cluster on defaults is tuned for round
// trips well under it), and above what the loopback of this project's busy
// 2-core host reads at p99 under load (a few ms: the members' and the
// generator's threads wait for a CPU before they answer or read a PING).
const pingTailFloorMs = 10.0

const measuresNetwork = "; the run measures the network between client and member more than etcd"

const srcPingTail = "etcd tuning guide (heartbeat interval ≈ the round trip between members, default 100 ms); etcdperf: a PING p99 under a tenth of it (10 ms) is a busy host's wake-ups, not a link"

// endpointPing is one endpoint's PING round trips and the latency of the
// requests of the budget's op that it served, at p50 and p99 (ms).
type endpointPing struct {
	endpoint             string
	n                    int64
	ping50, ping99       float64
	client50, client99   float64
	clientOwn, clientSet bool // the member's own requests; any client latency
}

// endpointPings is the run's PING distribution per endpoint with the latency
// of the requests of op that each endpoint served (the op's own where the
// member's were not kept); nil when no PING was answered (the grpc transport
// does not ping).
func endpointPings(run *results.Run, op string) []endpointPing {
	if run == nil {
		return nil
	}
	o := run.FindOp(op)
	var out []endpointPing
	for _, e := range run.EndpointLoads {
		if e.Pings == 0 || e.PingHist == "" {
			continue
		}
		p50, p99, n, ok := histQuantiles(e.PingHist)
		if !ok {
			continue
		}
		ep := endpointPing{endpoint: e.Endpoint, n: n, ping50: p50, ping99: p99}
		ep.client50, ep.client99, ep.clientOwn, ep.clientSet = endpointClient(o, e.Endpoint)
		out = append(out, ep)
	}
	return out
}

// endpointClient is the p50 and p99 (ms) of the requests of o that endpoint
// served, own true; the op's own where the member's were not kept (or too
// few); set false when o has no latency.
func endpointClient(o *results.Op, endpoint string) (p50, p99 float64, own, set bool) {
	if o == nil {
		return 0, 0, false, false
	}
	for _, m := range o.Members {
		if m.Endpoint == endpoint {
			if c50, c99, cn, ok := histQuantiles(m.ServiceHist); ok && cn >= minSamples {
				return c50, c99, true, true
			}
		}
	}
	s := o.Service
	if s.P50 == 0 && s.P99 == 0 {
		s = o.Latency
	}
	return s.P50, s.P99, false, s.P99 > 0
}

// mergedPings is the p50 and p99 (ms) of every endpoint's PINGs together, and
// how many; ok false when none was answered.
func mergedPings(run *results.Run) (p50, p99 float64, n int64, ok bool) {
	if run == nil {
		return 0, 0, 0, false
	}
	var hs []results.Hist
	for _, e := range run.EndpointLoads {
		if e.Pings > 0 && e.PingHist != "" {
			hs = append(hs, e.PingHist)
		}
	}
	return histQuantiles(hs...)
}

// histQuantiles merges hs (microseconds) and returns its p50 and p99 in ms.
func histQuantiles(hs ...results.Hist) (p50, p99 float64, n int64, ok bool) {
	h := results.NewHist()
	for _, x := range hs {
		if d, err := x.Decode(); err == nil {
			h.Merge(d)
		}
	}
	if h.TotalCount() == 0 {
		return 0, 0, 0, false
	}
	return float64(h.ValueAtQuantile(50)) / 1000, float64(h.ValueAtQuantile(99)) / 1000, h.TotalCount(), true
}

// pingOverClient: a request crosses the same link as a PING on its
// connection and waits for the server besides, so a PING slower than the
// requests at the same quantile, by more than the sampling noise of two
// quantiles (etcdperf's own 1.2×), waited in a queue they did not (a busy
// transport, a reader that woke late): not the link's round trip.
const pingOverClient = 1.2

// pingGrade grades one endpoint's PINGs at one quantile: the round trip net
// (ms) against the client's latency there and the server's own time at that
// quantile (known false when not measured).
func pingGrade(net, client, floor, server float64, known bool) (finding.Severity, float64) {
	share := 0.0
	if client > 0 {
		share = min(net/client, 1)
	}
	switch {
	case net < floor, share < netShareLargest, known && net < server, net > pingOverClient*client:
		return finding.OK, share
	case net >= clientRTTFailMs:
		return finding.Fail, share
	}
	return finding.Warn, share
}

// pingRule grades the round trip to every endpoint through the load, at the
// client's p50 and p99, and reports the worst: "round trip to m1 during the
// load: p50 0.4 ms, p99 210 ms = 56% of the client p99 376 ms". At the p50 this
// host's own PING to itself, measured before the load, is taken off (a loaded
// host's wake-ups are no network's); the p99 has its own floor for them.
func pingRule(in *Input, b *finding.Budget, ps []endpointPing) Observation {
	c, _ := pingWorst(in, b, ps)
	return c
}

// pingGraded is where pingWorst graded the worst endpoint: the quantile and
// the round trip's share of the client latency there; share50 is the largest
// share at the p50 over the endpoints.
type pingGraded struct {
	at             string
	share, share50 float64
}

// pingWorst grades every endpoint of ps (see pingRule) and returns the worst,
// with where it was graded; ok false when no endpoint has a client latency.
func pingWorst(in *Input, b *finding.Budget, ps []endpointPing) (Observation, pingGraded) {
	server50, known50 := serverSide(b, false)
	server99, known99 := serverSide(b, true)
	host := in.hostRTTMs
	// The generator reads a PING's answer as late as its threads wake: its
	// pacer's measured wake-up lag p99 is off the PINGs' p99.
	lag := 0.0
	if in.Run != nil && in.Run.Client.PacingWakeups > 0 {
		lag = in.Run.Client.PacingLagP99Ms
	}
	var worst Observation
	var where pingGraded
	worstSev, worstShare, share50 := finding.Severity(""), -1.0, 0.0
	var rest []string
	for _, p := range ps {
		if !p.clientSet {
			continue
		}
		net50 := max(p.ping50-min(host, p.ping50), 0)
		s50, sh50 := pingGrade(net50, p.client50, clientRTTFloorMs, server50, known50)
		s99, sh99 := pingGrade(max(p.ping99-lag, 0), p.client99, pingTailFloorMs, server99, known99)
		share50 = max(share50, sh50)
		at, sev, share, client := "p50", s50, sh50, p.client50
		if s99.Rank() > s50.Rank() || (s99 == s50 && sh99 > sh50) {
			at, sev, share, client = "p99", s99, sh99, p.client99
		}
		whose := "the client"
		if p.clientOwn {
			whose = "its requests'"
		}
		obs := fmt.Sprintf("round trip to %s during the load (%d HTTP/2 PINGs): p50 %s, p99 %s = %s of %s %s %s",
			in.describe(memberName(p.endpoint)), p.n, units.Duration(p.ping50/1000), units.Duration(p.ping99/1000), pct(share), whose, at, units.Duration(client/1000))
		if host > 0 && at == "p50" {
			obs += fmt.Sprintf(" (less %s, this host's PING to itself)", units.Duration(host/1000))
		}
		if lag > 0 && at == "p99" {
			obs += fmt.Sprintf(" (less %s, the generator's wake-up lag p99)", units.Duration(lag/1000))
		}
		switch {
		case sev.Bad():
			obs += measuresNetwork
		case max(net50, p.ping99-lag) > 0 && (net50 > pingOverClient*p.client50 || p.ping99-lag > pingOverClient*p.client99):
			obs += "; the PINGs were slower than the requests that cross the same link: they waited in a queue (a busy transport or reader), not the network's"
		}
		if worstShare < 0 || sev.Rank() > worstSev.Rank() || (sev == worstSev && share > worstShare) {
			if worstShare >= 0 {
				rest = append(rest, worst.Observed)
			}
			worst, worstSev, worstShare = Observation{Severity: sev, Observed: obs}, sev, share
			where = pingGraded{at: at, share: share}
			continue
		}
		rest = append(rest, obs)
	}
	if worstShare < 0 {
		return unknown("the run has no request latencies beside its PINGs"), pingGraded{}
	}
	if why := cpuStarved(in); worst.Severity.Bad() && why != "" {
		// A busy CPU delays the PINGs' answer (the member's transport) or
		// their reading (the generator) as it delays the requests.
		worst.Severity = finding.OK
		worst.Observed = strings.Replace(worst.Observed, measuresNetwork, "", 1)
		worst.Observed += fmt.Sprintf("; %s, so the PINGs wait for it too: not the network's alone", why)
	}
	if len(rest) > 0 {
		worst.Observed += "; the others: " + strings.Join(shortLines(rest, "round trip to "), "; ")
	}
	where.share50 = share50
	return worst, where
}

// cpuStarved says why the members' answers and the generator's reading wait
// for a CPU, "" when nothing says they do: a CPU at limCPU's warn level or more
// (busiestCPU), or a member's host whose tasks waited for a CPU at limPSI's
// warn level or more (node_exporter's pressure, where a Prometheus gave it: a
// CFS quota under the member's GOMAXPROCS shows nowhere in its own metrics).
func cpuStarved(in *Input) string {
	if busy, what := busiestCPU(in); busy >= limCPU.Warn {
		return fmt.Sprintf("%s CPU %s busy", what, pct(busy))
	}
	for _, w := range in.Members {
		if !w.Usable() || w.Seconds() < minCPUWindow {
			continue
		}
		if d, ok := w.CounterDelta(metrics.NodePressureCPU, nil); ok && d/w.Seconds() >= limPSI.Warn {
			return fmt.Sprintf("the tasks of %s's host waited for a CPU %s of the window", in.describe(w.Member), pct(min(d/w.Seconds(), 1)))
		}
	}
	return ""
}

// busiestCPU is the busiest of every member's CPU (a member at its quota
// answers PINGs and reads late, the leader or a follower), the generator's and
// this host's busiest CPU, and whose it is.
func busiestCPU(in *Input) (float64, string) {
	busy, what := cpuBusy(in)
	for _, w := range in.Members {
		m := in.member(w)
		if u, ok := serverCPU(&m); ok && u > busy {
			busy, what = u, in.describe(w.Member)+"'s"
		}
	}
	if in.Run != nil {
		if b, w, ok := hostBusiest(in.Run); ok && b > busy {
			busy, what = b, "this host's ("+w+")"
		}
	}
	return busy, what
}

// shortLines keeps the other endpoints' lines up to their figures, prefix off.
func shortLines(obs []string, prefix string) []string {
	out := make([]string, len(obs))
	for i, o := range obs {
		o = strings.TrimPrefix(o, prefix)
		if j := strings.Index(o, "; "); j >= 0 {
			o = o[:j]
		}
		out[i] = o
	}
	return out
}

// serverSide is the server's own time at the p50, or the p99 when tail: the
// members' handling time where they expose it (PartServer), else the sum of
// the server parts (WAL, its queue, replication, apply); and whether it is
// known (for the sum, the part that anchors it: the WAL fsync for writes, the
// range for reads; without it there is no server-side estimate).
func serverSide(b *finding.Budget, tail bool) (float64, bool) {
	at := func(p finding.BudgetPart) *float64 {
		if tail {
			return p.P99Ms
		}
		return p.P50Ms
	}
	for _, p := range b.Parts {
		if v := at(p); p.Component == finding.PartServer && v != nil {
			return *v, true
		}
	}
	anchor := finding.PartWAL
	if isRead(b.Op) {
		anchor = finding.PartApply
	}
	sum, known := 0.0, false
	for _, p := range b.Parts {
		switch p.Component {
		case finding.PartWAL, finding.PartWALQueue, finding.PartReplication, finding.PartApply:
			v := at(p)
			if v == nil {
				continue
			}
			sum += *v
			if p.Component == anchor {
				known = true
			}
		}
	}
	return sum, known
}
