package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Watch delivery has no published threshold in etcd. An event is sent when its
// put is applied, the moment the put's own reply is sent, so an event should
// reach a watcher about as fast as the put's reply reaches its client: the run's
// own put service time (from the put's send, as the delivery is timed) is the
// baseline, measured on the same cluster in the same seconds. Delivery warns at
// twice the put p99 and at least 100 ms later than it
// (etcd's own expected request duration, past which it logs "apply request took
// too long"), and fails at five times and at least 500 ms later (etcdctl check
// perf's slowest request).
const (
	watchOverPutWarn = 2.0
	watchOverPutFail = 5.0
	watchExtraWarnMs = 100.0
	watchExtraFailMs = 500.0
)

const (
	srcWatchLatency = "etcdperf: an event is sent when its put is applied, so its delivery (from the put's send) is graded against the run's own put service p99 (etcd publishes no watch threshold); floors from etcd's 100 ms expected request duration ('apply request took too long') and etcdctl check perf's 500 ms slowest request; etcdperf's factors: twice the put p99 is more than the put's own variation (a delivery also waits for the apply and the send), five times is a backlog"
	srcWatchMissed  = "etcd API guarantees (api_guarantees.md: watch events are ordered, unique and reliable — a watcher never misses a subsequence of events): a watcher that misses one is broken"
	srcSlowWatchers = "etcd server/storage/mvcc (watchable_store.go: a watcher whose channel is full is moved to the unsynced victims and catches up later; etcd_debugging_mvcc_pending_events_total, a gauge, holds the events waiting now)"
)

// watchOps is the run's watch op and the put op that fed it; nil when the run
// has no watchers.
func watchOps(run *results.Run) (watch, put *results.Op) {
	if run == nil {
		return nil, nil
	}
	for i := range run.Ops {
		op := &run.Ops[i]
		switch {
		case isWatch(op.Op) && op.Watchers > 0:
			watch = op
		case op.Op == "put":
			put = op
		}
	}
	return watch, put
}

// watchDeliveryRule grades the watch delivery p99 (put send to event arrival)
// against the run's put p99 and, when it is late, names what ran out.
func watchDeliveryRule(in *Input, _ Limits) Observation {
	w, put := watchOps(in.Run)
	if w == nil {
		return Observation{}
	}
	if w.Events == 0 {
		return unknown("no event arrived in the window")
	}
	if put == nil || put.Service.P99 <= 0 {
		return unknown("no put latency to compare the delivery with")
	}
	// Both from the put's send: its response time would count the queue before it.
	watchMs, putMs := w.Latency.P99, put.Service.P99
	ratio := watchMs / putMs
	obs := fmt.Sprintf("delivery p99 %s = %s× the put service p99 %s (%d events to %d watchers)", units.Ms(watchMs), units.Trim(ratio), units.Ms(putMs), w.Events, w.Watchers)
	sev := finding.OK
	if w.UndeliveredEvents > 0 {
		// Still on their way when bench stopped waiting for them, up to the 60 s
		// its histograms reach: later than any delivery timed.
		obs += fmt.Sprintf("; %d events still undelivered when the wait for them ended", w.UndeliveredEvents)
	}
	switch {
	case w.UndeliveredEvents > 0:
		sev = finding.Fail
	case ratio >= watchOverPutFail && watchMs-putMs >= watchExtraFailMs:
		sev = finding.Fail
	case ratio >= watchOverPutWarn && watchMs-putMs >= watchExtraWarnMs:
		sev = finding.Warn
	}
	if sev != finding.OK {
		obs += "; " + ranOut(in)
	}
	return Observation{Severity: sev, Observed: obs}
}

// ranOut says what could not keep up with the fan-out: the server's CPU, the
// watchers' (the generator's) CPU, or, when neither is busy and etcd held events
// for full watcher channels, the network between them.
func ranOut(in *Input) string {
	var out []string
	if in.Leader != nil {
		lead := in.member(in.Leader)
		if c := serverCPURule(&lead, limCPU); c.Severity == finding.Warn || c.Severity == finding.Fail {
			out = append(out, "server CPU ("+c.Observed+")")
		}
	}
	if c := clientCPURule(in, limCPU); c.Severity == finding.Warn || c.Severity == finding.Fail {
		out = append(out, "the watchers' client CPU ("+c.Observed+")")
	}
	if len(out) == 0 {
		// Neither alone, but the host they share: together, or other work on it.
		if c := sharedHostCPURule(in, limCPU); c.Severity == finding.Warn || c.Severity == finding.Fail {
			out = append(out, "this host's CPUs, shared by the server and the watchers ("+c.Observed+")")
		} else if c := hostPressureRule(in, limPSI); c.Severity == finding.Warn || c.Severity == finding.Fail {
			out = append(out, "this host's CPUs, contended by other work ("+c.Observed+")")
		}
	}
	if len(out) > 0 {
		return "ran out: " + strings.Join(out, " and ")
	}
	for _, w := range in.Members {
		slow, _ := w.GaugeMax(metrics.SlowWatchers, nil)
		pending, _ := w.GaugeMax(metrics.PendingEvents, nil)
		if slow > 0 || pending > 0 {
			return fmt.Sprintf("ran out: the network to the watchers (no CPU is busy, and %s held up to %.0f events for full watcher channels, %.0f slow watchers at most)",
				in.describe(w.Member), pending, slow)
		}
	}
	return "no CPU is busy and etcd held no event back: the delay is between the server and the watchers (network or the watchers' reading)"
}

// watchMissedRule fails a run in which any watcher missed an event or saw one
// out of order.
func watchMissedRule(in *Input, lim Limits) Observation {
	w, _ := watchOps(in.Run)
	if w == nil {
		return Observation{}
	}
	if in.Run.Interrupted {
		return unknown("the run was interrupted: missed events are not judged")
	}
	n := w.MissedEvents + w.OutOfOrder
	return Observation{Severity: lim.Grade(float64(n)), Observed: fmt.Sprintf("%d missed, %d out of order, of %d events to %d watchers", w.MissedEvents, w.OutOfOrder, w.Events, w.Watchers)}
}

// slowWatchersRule reads etcd's own signals of watchers that fall behind: the
// most unsynced slow watchers in any scrape, and the events that waited for a
// full watcher channel, against the events sent; with the member's stream and
// watcher counts as context.
func slowWatchersRule(in *Input, lim Limits) Observation {
	if w, _ := watchOps(in.Run); in.Run != nil && w == nil {
		return Observation{} // the run watched nothing
	}
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	slow, ok := in.W.GaugeMax(metrics.SlowWatchers, nil)
	if !ok {
		return unknown("%s absent", metrics.SlowWatchers)
	}
	streams, _ := in.W.GaugeMax(metrics.WatchStreams, nil)
	watchers, _ := in.W.GaugeMax(metrics.Watchers, nil)
	if watchers == 0 && slow == 0 {
		return Observation{} // no watch on this member: nothing to grade
	}
	obs := fmt.Sprintf("%.0f slow of %.0f watchers on %.0f streams (most in a scrape)", slow, watchers, streams)
	pending, okP := in.W.GaugeMax(metrics.PendingEvents, nil)
	sent, okS := in.W.CounterDelta(metrics.EventsSent, nil)
	if okP && pending > 0 {
		obs += fmt.Sprintf("; up to %.0f events held for full channels in a scrape", pending)
		if okS && sent > 0 {
			obs += fmt.Sprintf(", %.0f sent over the run", sent)
		}
	}
	return Observation{Severity: lim.Grade(slow), Observed: obs}
}
