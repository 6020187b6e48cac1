package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

const budgetNote = "each part is its own percentile over the window; tails rarely coincide, so p99 parts need not add up to the client p99"

func ptr(v float64) *float64 { return &v }

// isRead says whether an op name is a read (range/get) rather than a write.
func isRead(op string) bool {
	op = strings.ToLower(op)
	return strings.HasPrefix(op, "range") || strings.HasPrefix(op, "get")
}

func isWatch(op string) bool { return strings.HasPrefix(strings.ToLower(op), "watch") }

// budgetOp picks the op to explain: the busiest write, else the busiest op.
func budgetOp(run *results.Run) *results.Op {
	var best, bestWrite *results.Op
	for i := range run.Ops {
		op := &run.Ops[i]
		if isWatch(op.Op) || op.Requests == 0 {
			continue
		}
		if best == nil || op.Requests > best.Requests {
			best = op
		}
		if !isRead(op.Op) && (bestWrite == nil || op.Requests > bestWrite.Requests) {
			bestWrite = op
		}
	}
	if bestWrite != nil {
		return bestWrite
	}
	return best
}

// computeBudget builds the budget from the leader's and followers' windows.
func computeBudget(in *Input) *finding.Budget {
	b := &finding.Budget{Note: budgetNote}
	read := false
	if in.Run != nil {
		if op := budgetOp(in.Run); op != nil {
			b.Op = op.Op
			read = isRead(op.Op)
			s := op.Service
			if s.P50 == 0 && s.P99 == 0 {
				s = op.Latency
			}
			b.ClientP50Ms, b.ClientP99Ms = ptr(s.P50), ptr(s.P99)
		}
	}
	leader := in.Leader

	net := finding.BudgetPart{Component: finding.PartNetwork, Source: "not measured (no PING through the load, no round trip before it): its part is in the unexplained rest"}
	if p50, p99, n, ok := mergedPings(in.Run); ok {
		net.P50Ms, net.P99Ms = ptr(p50), ptr(p99)
		net.Source = fmt.Sprintf("HTTP/2 PINGs on the load connections through the load (%d, every endpoint)", n)
	} else if in.NetworkRTTMs > 0 {
		// One figure measured before the load: no tail of its own.
		net.P50Ms, net.Source = ptr(in.NetworkRTTMs), "round trip measured before the load ("+in.rttSource+"); its p99 not measured"
	}

	wal := finding.BudgetPart{Component: finding.PartWAL, Source: metrics.WALFsync + " on the leader"}
	apply := finding.BudgetPart{Component: finding.PartApply, Source: metrics.ApplyDuration + " on the leader"}
	if read {
		wal = finding.BudgetPart{Component: finding.PartWAL, P50Ms: ptr(0), P99Ms: ptr(0), Source: "reads do not write the WAL"}
		apply.Source = metrics.RangeDuration + " on the leader"
		apply.P50Ms, apply.P99Ms = histMs(leader, metrics.RangeDuration)
	} else {
		wal.P50Ms, wal.P99Ms = histMs(leader, metrics.WALFsync)
		apply.P50Ms, apply.P99Ms = histMs(leader, metrics.ApplyDuration)
	}

	rep := replicationPart(in, read)
	server := serverPart(in, b.Op)
	gen, stall := generatorPart(in.Run), stallPart(in.Run)
	queue := finding.BudgetPart{Component: finding.PartWALQueue}
	if read {
		queue.P50Ms, queue.P99Ms, queue.Source = ptr(0), ptr(0), "reads do not write the WAL"
	}
	rest := finding.BudgetPart{Component: finding.PartRest, Source: "client latency minus the measured parts: queueing in gRPC and raft, and any part not measured; no class's"}
	at50 := func(p finding.BudgetPart) *float64 { return p.P50Ms }
	at99 := func(p finding.BudgetPart) *float64 { return p.P99Ms }
	if b.ClientP50Ms != nil {
		parts := []finding.BudgetPart{net, server, wal, rep, apply, gen, stall}
		rest.P50Ms = restOf(*b.ClientP50Ms, parts, at50)
		rest.P99Ms = restOf(*b.ClientP99Ms, parts, at99)
		if !read {
			// The fsyncs' queue waits in what the parts leave over: the
			// client's rest, or the server's own time beyond its parts.
			q50, q99 := *rest.P50Ms, *rest.P99Ms
			if server.P50Ms != nil {
				inner := []finding.BudgetPart{wal, rep, apply}
				q50 = *restOf(*server.P50Ms, inner, at50)
				q99 = *restOf(*server.P99Ms, inner, at99)
			}
			queue = walQueuePart(leader, in.Seconds, q50, q99)
			if queue.P50Ms != nil && server.P50Ms == nil {
				rest.P50Ms, rest.P99Ms = ptr(*rest.P50Ms-*queue.P50Ms), ptr(*rest.P99Ms-*queue.P99Ms)
			}
		}
	}
	b.Parts = []finding.BudgetPart{net, server, wal, queue, rep, apply, gen, stall, rest}
	return b
}

// walQueuePart is the time a write waits behind the fsyncs ahead of its own: etcd
// saves each batch of raft entries to the WAL, fsync included, before it goes on,
// so the fsyncs are one server whose busy share ρ over the window is the sum of
// their durations over the window's length (etcd_disk_wal_fsync_duration_seconds
// _sum). The wait is read from the M/M/1 waiting time, P(W > t) = ρ·e^(−(1−ρ)t/S)
// with S the mean fsync (Kleinrock, Queueing Systems vol. 1, the M/M/1 queue): its
// p50 and p99, each at most what the client latency leaves once the known parts
// are taken off (restP50, restP99). From the busy share the CPU class calls
// saturated (limCPU.Fail) the queue no longer settles (open-loop writes arrive
// faster than the fsyncs finish, and the wait grows through the run, past any
// steady-state figure): the whole rest is then queueing behind the disk. Unknown
// (nil) without the leader's fsync sum and window.
func walQueuePart(leader *Window, seconds, restP50, restP99 float64) finding.BudgetPart {
	p := finding.BudgetPart{Component: finding.PartWALQueue}
	if !leader.Usable() {
		p.Source = "no scrapes of the leader before and after"
		return p
	}
	h, ok := leader.HistDelta(metrics.WALFsync, nil)
	secs := leader.Seconds()
	if secs <= 0 {
		secs = seconds
	}
	if !ok || h.Count <= 0 || secs <= 0 {
		p.Source = metrics.WALFsync + " sum or the window length is unknown"
		return p
	}
	rho, mean := h.Sum/secs, h.Sum/h.Count
	w50, w99 := restP50, restP99
	if rho < limCPU.Fail {
		wait := func(q float64) float64 { return max(0, math.Log(rho/(1-q))) * mean / (1 - rho) * 1000 }
		w50, w99 = min(wait(0.50), restP50), min(wait(0.99), restP99)
	}
	p.P50Ms, p.P99Ms = ptr(w50), ptr(w99)
	p.Source = fmt.Sprintf("the leader's WAL fsyncs were busy %s of the window (mean %s): M/M/1 wait, at most the unexplained rest", pct(min(rho, 1)), units.Duration(mean))
	if rho >= limCPU.Fail {
		p.Source = fmt.Sprintf("the leader's WAL fsyncs were busy %s of the window (mean %s): saturated, so the unexplained rest is queueing behind them", pct(min(rho, 1)), units.Duration(mean))
	}
	return p
}

// replicationPart is peer RTT (leader to followers) plus the WAL fsync of the
// follower that completes the quorum; a linearizable read pays one round of heartbeats (read index) instead.
func replicationPart(in *Input, read bool) finding.BudgetPart {
	p := finding.BudgetPart{Component: finding.PartReplication}
	if in.PeersKnown && in.Peers == 0 {
		p.P50Ms, p.P99Ms, p.Source = ptr(0), ptr(0), "single member: nothing to replicate"
		return p
	}
	r50, r99 := histMs(in.Leader, metrics.PeerRTT)
	if r50 == nil {
		p.Source = metrics.PeerRTT + " absent on the leader"
		return p
	}
	if read {
		p.P50Ms, p.P99Ms, p.Source = r50, r99, "peer RTT (read index round)"
		return p
	}
	f50, f99 := quorumFollowerFsync(in)
	p.P50Ms, p.P99Ms, p.Source = ptr(*r50+f50), ptr(*r99+f99), "peer RTT + wal fsync of the follower the quorum waits for"
	return p
}

// quorumFollowerFsync is the WAL fsync p50 and p99 (ms) of the follower a write
// waits for: raft commits once a quorum has the entry, so with the leader counted
// the write waits for the (quorum-1)-th fastest follower, not the slowest; 0
// when no follower's fsyncs are known.
func quorumFollowerFsync(in *Input) (p50, p99 float64) {
	var f50s, f99s []float64
	for _, w := range in.Members {
		if w == in.Leader {
			continue
		}
		a, b := histMs(w, metrics.WALFsync)
		if a == nil {
			continue
		}
		f50s, f99s = append(f50s, *a), append(f99s, *b)
	}
	if len(f50s) == 0 {
		return 0, 0
	}
	slices.Sort(f50s)
	slices.Sort(f99s)
	k := min(max((len(in.Members)/2+1)-1, 1), len(f50s)) - 1
	return f50s[k], f99s[k]
}

// histMs is a window histogram's p50 and p99 in milliseconds; nil when unknown.
func histMs(w *Window, metric string) (*float64, *float64) {
	if !w.Usable() {
		return nil, nil
	}
	h, ok := w.HistDelta(metric, nil)
	if !ok {
		return nil, nil
	}
	q50, ok50 := h.Quantile(0.50)
	q99, ok99 := h.Quantile(0.99)
	if !ok50 || !ok99 {
		return nil, nil
	}
	return ptr(q50.Value * 1000), ptr(q99.Value * 1000)
}

// restOf is client minus the measured parts (measuredSum), clamped at 0 (parts
// measured at their own percentile can sum to more than the client's).
func restOf(client float64, parts []finding.BudgetPart, get func(finding.BudgetPart) *float64) *float64 {
	return ptr(math.Max(0, client-measuredSum(parts, get)))
}
