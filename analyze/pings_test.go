package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// spread is a histogram (µs) of n values of which tail (a share) are at slow
// and the rest at fast.
type spread struct {
	fast, slow int64
	tail       float64
}

func (s spread) hist(t *testing.T, n int) results.Hist {
	t.Helper()
	h := results.NewHist()
	slow := int(float64(n) * s.tail)
	for i := range n {
		v := s.fast
		if i < slow {
			v = s.slow
		}
		_ = h.RecordValue(v)
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// pingRun is a 3-member run whose endpoints served their put requests in
// served[m] and answered their PINGs in pings[m].
func pingRun(t *testing.T, served, pings []spread) *results.Run {
	t.Helper()
	run := endpointRun(t, served, func(m, _ int) string { return member(m == 0, 1) })
	for m := range run.EndpointLoads {
		run.EndpointLoads[m].Pings, run.EndpointLoads[m].PingHist = 600, pings[m].hist(t, 600)
	}
	return run
}

// endpointRun is a 3-member run (healthRun's scrapes made by text) whose
// endpoints served their puts in served[m], each with an endpoint load to fill,
// and a replication round of 0.2 ms measured through each before the load.
func endpointRun(t *testing.T, served []spread, text func(m, i int) string) *results.Run {
	t.Helper()
	t0 := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	run := healthRun(t0, eps, text)
	op := &run.Ops[0]
	run.Network = &results.Network{}
	for m, ep := range eps {
		h := served[m].hist(t, 3000)
		op.Members = append(op.Members, results.MemberOp{Endpoint: ep, Requests: 3000, ResponseHist: h, ServiceHist: h})
		run.EndpointLoads = append(run.EndpointLoads, results.EndpointLoad{Endpoint: ep})
		run.Network.Endpoints = append(run.Network.Endpoints, results.EndpointRound{Endpoint: ep, StatusRTTMs: 0.1, ReadMs: 0.3})
	}
	return run
}

// TestPingRule: the round trip through the load is graded per endpoint at the
// client's p50 and p99: a link that holds a few percent of its packets 200 ms
// fails at p99 with a fine median, a constant delay warns at p50, and a busy
// loopback's few-ms PING tail is no fault.
func TestPingRule(t *testing.T) {
	ok := spread{fast: 3000, slow: 9000, tail: 0.02}
	for _, tc := range []struct {
		name    string
		served  []spread
		pings   []spread
		sev     finding.Severity
		want    string
		shareAt string
		genCPU  float64 // the generator's CPU-s over the 60 s on 2 cores
	}{
		{"healthy loopback, PING tail of a busy host", []spread{ok, ok, ok}, []spread{{100, 4000, 0.02}, {100, 4000, 0.02}, {100, 4000, 0.02}}, finding.OK, "p99 4 ms", "", 0},
		{"a link holding 3% of packets 200 ms", []spread{ok, {3000, 376_000, 0.03}, ok}, []spread{{100, 400, 0.02}, {400, 210_000, 0.03}, {100, 400, 0.02}},
			finding.Fail, "round trip to m2 127.0.0.1:22379 during the load (600 HTTP/2 PINGs): p50 400 µs, p99 210 ms = 56% of its requests' p99 376 ms", "p99", 0},
		{"a constant 10 ms round trip", []spread{{13000, 20000, 0.02}, {13000, 20000, 0.02}, {13000, 20000, 0.02}}, []spread{{10000, 10000, 0}, {10000, 10000, 0}, {10000, 10000, 0}},
			finding.Warn, "= 77% of its requests' p50 13 ms", "p50", 0},
		{"PINGs slower than the requests: a queue, not the link", []spread{{1500, 9000, 0.02}, {1500, 9000, 0.02}, {1500, 9000, 0.02}}, []spread{{2300, 3000, 0.02}, {2300, 3000, 0.02}, {2300, 3000, 0.02}},
			finding.OK, "the PINGs were slower than the requests that cross the same link", "", 0},
		{"the same tail with the generator's CPU 95% busy", []spread{ok, {3000, 376_000, 0.03}, ok}, []spread{{100, 400, 0.02}, {400, 210_000, 0.03}, {100, 400, 0.02}},
			finding.OK, "generator CPU 95% busy, so the PINGs wait for it too", "", 114},
	} {
		run := pingRun(t, tc.served, tc.pings)
		run.Client.CPUSeconds, run.Client.Cores = tc.genCPU, 2
		rep, err := Run(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := evidenceOf(t, rep, ruleBy(t, "client round trip").Signal)
		if e.Severity != tc.sev || !strings.Contains(e.Observed, tc.want) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, e.Severity, e.Observed, tc.sev, tc.want)
		}
		f := findingOf(t, rep, finding.ClassNetwork)
		if tc.shareAt != "" && (f.Share == nil || f.ShareAt != tc.shareAt) {
			t.Errorf("%s: network share %v at %q, want one at %s", tc.name, ptrVal(f.Share), f.ShareAt, tc.shareAt)
		}
		for _, p := range rep.Budget.Parts {
			if p.Component == finding.PartNetwork && (p.P99Ms == nil || !strings.Contains(p.Source, "HTTP/2 PINGs")) {
				t.Errorf("%s: budget network part %+v, want the PINGs' p50 and p99", tc.name, p)
			}
		}
	}
}

// TestPingFallback: without PINGs through the load (grpc transport), the round
// trip measured before it is graded at p50 and the evidence says so.
func TestPingFallback(t *testing.T) {
	run := putRun(10)
	run.Network = &results.Network{PingRTTMs: 8}
	i := withRun(single(in(t, etcdBase(), etcdBase())), run)
	i.NetworkRTTMs, i.rttSource = 8, "HTTP/2 PING"
	c := clientRTTRule(i, Limits{})
	if !strings.Contains(c.Observed, "measured before the load") {
		t.Errorf("fallback %s %q, want the source named", c.Severity, c.Observed)
	}
}

// TestSlowFollowerDiskShare: a follower disk that makes its own requests slow
// (slowServer) is shared by its fsyncs against the requests it served, not the
// leader's path (disk/3m/follower/iops=80 read "1% of the client p99").
func TestSlowFollowerDiskShare(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	run := healthRun(t0, eps, func(m, i int) string {
		n, le := float64(i*100), 0.001
		if m == 2 {
			le = 0.256 // the follower's fsyncs: ~250 ms
		}
		l := 0.0
		if m == 0 {
			l = 1
		}
		return etcdBase().gauge(metrics.IsLeader, l).counter(metrics.LeaderChanges, 1).gauge(metrics.DBTotal, 2*mib).gauge(metrics.Quota, 2*gib).
			hist(metrics.WALFsync, "", diskBuckets, cumAt(0, n, le), n*le/2).String()
	})
	withMembers(t, run, func(m int) int64 { return []int64{3000, 3000, 340_000}[m] })
	rep, err := Run(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := findingOf(t, rep, finding.ClassDisk)
	if f.Share == nil || *f.Share < 0.5 || f.ShareAt != "p99" || f.Risk != "" {
		t.Errorf("follower disk share %v at %q risk %q, want its own ≥ 50%% at p99: %+v", ptrVal(f.Share), f.ShareAt, f.Risk, f.Evidence)
	}
}

// TestPingsOfAStarvedHost: a member under a CPU quota that its own metrics do
// not show answers its PINGs late; where node_exporter says its host's tasks
// waited for a CPU at PSI's warn level, the PINGs' tail is not the network's
// (make truth's remote/prometheus/cpu/quota=0.10 read network fail from it).
func TestPingsOfAStarvedHost(t *testing.T) {
	ok := spread{fast: 3000, slow: 9000, tail: 0.02}
	for _, tc := range []struct {
		name string
		psi  float64 // the share of each 5 s between scrapes m2's host waited
		sev  finding.Severity
		want string
	}{
		{"host not starved", 0.2, finding.Fail, "p99 210 ms"},
		{"host starved", 0.64, finding.OK, "the tasks of m2 127.0.0.1:22379's host waited for a CPU 64% of the window, so the PINGs wait for it too"},
	} {
		run := endpointRun(t, []spread{ok, {3000, 376_000, 0.03}, ok}, func(m, i int) string {
			s := member(m == 0, 1)
			if m == 1 {
				s += fmt.Sprintf("# TYPE %s counter\n%s %g\n", metrics.NodePressureCPU, metrics.NodePressureCPU, tc.psi*5*float64(i))
			}
			return s
		})
		for m, p := range []spread{{100, 400, 0.02}, {400, 210_000, 0.03}, {100, 400, 0.02}} {
			run.EndpointLoads[m].Pings, run.EndpointLoads[m].PingHist = 600, p.hist(t, 600)
		}
		rep, err := Run(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := evidenceOf(t, rep, ruleBy(t, "client round trip").Signal)
		if e.Severity != tc.sev || !strings.Contains(e.Observed, tc.want) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, e.Severity, e.Observed, tc.sev, tc.want)
		}
	}
}
