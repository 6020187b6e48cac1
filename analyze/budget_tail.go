package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// The budget of the tail: the client p99 is explained, as the p50 is, from
// measured parts only. Besides the network and the server's parts, three
// parts hold time the others do not: the server's own handling time where the
// members expose it, the generator's wake-up lag, and the stalls. What they
// leave is printed as unexplained, never given to a class.

// grpcMethods maps an op to the gRPC method etcd's handling histogram labels
// it with; an op not listed has no server handling part.
var grpcMethods = []struct{ prefix, method string }{
	{"put", "Put"}, {"range", "Range"}, {"get", "Range"}, {"txn", "Txn"}, {"delete", "DeleteRange"},
}

// serverPart is the members' own handling time of op's requests, from
// grpc_server_handling_seconds (etcd's --metrics=extensive) summed over every
// member that received some (clients spread over the endpoints); unknown when
// no member exposes it.
func serverPart(in *Input, op string) finding.BudgetPart {
	p := finding.BudgetPart{Component: finding.PartServer, Source: metrics.GRPCHandling + " absent (etcd --metrics=extensive exposes it): the server's parts stand in"}
	method := ""
	for _, m := range grpcMethods {
		if strings.HasPrefix(strings.ToLower(op), m.prefix) {
			method = m.method
		}
	}
	if method == "" {
		return p
	}
	var sum Hist
	n := 0
	for _, w := range in.Members {
		if !w.Usable() {
			continue
		}
		h, ok := w.HistDelta(metrics.GRPCHandling, Labels{"grpc_method": method})
		if !ok || h.Count <= 0 {
			continue
		}
		if n == 0 {
			sum = h
		} else {
			sum = sum.add(h)
		}
		n++
	}
	q50, ok50 := sum.Quantile(0.50)
	q99, ok99 := sum.Quantile(0.99)
	if n == 0 || !ok50 || !ok99 {
		return p
	}
	p.P50Ms, p.P99Ms = ptr(q50.Value*1000), ptr(q99.Value*1000)
	p.Source = fmt.Sprintf("%s{grpc_method=%q} of %d member(s): from a request's arrival to its reply, so the WAL, its queue, the replication and the apply are inside it", metrics.GRPCHandling, method, n)
	return p
}

// generatorPart is the generator's own lag: the pacer's wake-up lag p99, as
// late as the generator's threads wake to read a reply (its p50 is not
// measured).
func generatorPart(run *results.Run) finding.BudgetPart {
	p := finding.BudgetPart{Component: finding.PartGenerator, Source: "not measured (the run holds no pacer lag)"}
	if run == nil || run.Client.PacingWakeups == 0 {
		return p
	}
	p.P99Ms = ptr(run.Client.PacingLagP99Ms)
	p.Source = fmt.Sprintf("the pacer's wake-up lag p99 over %d wake-ups: the generator's threads wake as late to read a reply; its p50 is not measured", run.Client.PacingWakeups)
	return p
}

// stallPart is the wait of the requests sent in the run's longest stall. Sent
// at a steady rate, the requests of a stall of S seconds in a window of T are
// S/T of them, and one sent t into it waits S−t more, so the fraction that
// waits longer than w is (S−w)/T: its p99 is S − T/100 and its p50 S − T/2,
// 0 where the stall is shorter.
func stallPart(run *results.Run) finding.BudgetPart {
	p := finding.BudgetPart{Component: finding.PartStall, Source: "not measured (no request was timed for stalls)"}
	if run == nil || run.DurationS <= 0 || run.Stall == nil {
		return p
	}
	s, t := run.Stall.Seconds, run.DurationS
	p.P50Ms, p.P99Ms = ptr(max(s-t/2, 0)*1000), ptr(max(s-t/100, 0)*1000)
	p.Source = fmt.Sprintf("the longest stall, %s in a %s window: the requests sent in it waited for its end", units.Duration(s), units.Duration(t))
	return p
}

// measuredSum is the sum of the parts that explain the client latency at the
// quantile get reads: with the server's handling time known, it stands for
// the parts inside it.
func measuredSum(parts []finding.BudgetPart, get func(finding.BudgetPart) *float64) float64 {
	server := false
	for _, p := range parts {
		if p.Component == finding.PartServer && get(p) != nil {
			server = true
		}
	}
	sum := 0.0
	for _, p := range parts {
		v := get(p)
		if v == nil || p.Component == finding.PartRest {
			continue
		}
		switch p.Component {
		case finding.PartWAL, finding.PartWALQueue, finding.PartReplication, finding.PartApply:
			if server {
				continue
			}
		}
		sum += *v
	}
	return sum
}
