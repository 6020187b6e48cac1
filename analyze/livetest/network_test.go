package livetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/results"
)

// delayProxy is faults.DelayProxy: added latency each way, no bandwidth limit.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	return faults.DelayProxy(t, target, delay)
}

// TestLiveNetwork puts a 100 ms (each way) delay between the client and an embedded
// member: the server's own latency stays sub-millisecond, so the verdict must name
// the network, from the PINGs sent through the load.
func TestLiveNetwork(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	addr := delayProxy(t, ep[len("http://"):], 100*time.Millisecond)
	rep := pingedRun(t, ep, addr, "/etcdperf/network/", 160, 16, 0)
	if rep.Verdict.Bottleneck != string(finding.ClassNetwork) {
		t.Errorf("bottleneck = %s, want network: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
	if f := findingOf(rep, finding.ClassDisk); f.Severity == finding.Fail {
		t.Errorf("client-side delay blamed on disk: %s", f.Summary)
	}
}

// TestLiveNetworkTail: a link held for TCP's minimum retransmission timeout
// (200 ms) once a second leaves the median round trip alone and puts the
// PINGs' p99 near 200 ms: the network is named, graded at p99.
func TestLiveNetworkTail(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	addr := faults.HoldProxy(t, ep[len("http://"):], time.Second, 200*time.Millisecond)
	rep := pingedRun(t, ep, addr, "/etcdperf/network-tail/", 500, 4, 20*time.Millisecond)
	f := findingOf(rep, finding.ClassNetwork)
	if rep.Verdict.Bottleneck != string(finding.ClassNetwork) || f.ShareAt != "p99" {
		t.Errorf("bottleneck %s, network %s at %q: want the network, graded at p99: %s", rep.Verdict.Bottleneck, f.Severity, f.ShareAt, rep.Verdict.Summary)
	}
}

// pingedRun runs n puts from workers (every apart) through addr, a proxy to
// the embedded member at ep, PINGing the load connection, and analyzes it.
func pingedRun(t *testing.T, ep, addr, prefix string, n, workers int, every time.Duration) analyze.Result {
	t.Helper()
	ctx := context.Background()
	// Scrape the member directly: metrics are not what the delay is about.
	s := analyze.NewScraper(nil, []string{ep + "/metrics"}, 0)
	s.Before(ctx)
	lat, pings := pingedPutLoad(t, addr, "http://"+addr, prefix, n, 256, workers, every)
	run := liveRun(t, "http://"+addr, s.After(ctx), results.Op{Op: "put", Requests: int64(len(lat)), BytesSent: int64(len(lat)) * 280,
		Service: latSummary(t, lat), Latency: latSummary(t, lat)})
	run.EndpointLoads = []results.EndpointLoad{pings}
	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, rep)
	t.Logf("PINGs: %d, %+v", pings.Pings, pings.PingMs)
	return rep
}

// TestLiveNetworkHealthy: PINGs on a busy loopback (16 workers, 660 puts/s for
// 6 s, on this 2-core host) take a few ms at p99: no network alarm.
func TestLiveNetworkHealthy(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	rep := pingedRun(t, ep, ep[len("http://"):], "/etcdperf/network-healthy/", 4000, 16, 1500*time.Microsecond)
	if f := findingOf(rep, finding.ClassNetwork); f.Severity.Bad() {
		t.Errorf("loopback graded network %s: %s", f.Severity, rep.Verdict.Summary)
	}
}

// TestLiveServerHandling: a member run with --metrics=extensive (a separate
// process: the flag turns on a histogram for the whole process, which would
// change every later embedded test's budget) exposes
// grpc_server_handling_seconds, and the tail's budget takes the server's own
// time from it at p50 and p99, inside what the clients saw.
func TestLiveServerHandling(t *testing.T) {
	requireLive(t)
	ep := startEtcd34(t, "--metrics", "extensive")
	rep := pingedRun(t, ep, ep[len("http://"):], "/etcdperf/handling/", 500, 4, 5*time.Millisecond)
	b := rep.Budget
	if b == nil || b.ClientP50Ms == nil || b.ClientP99Ms == nil {
		t.Fatalf("budget %+v: want the clients' p50 and p99", b)
	}
	for _, p := range b.Parts {
		if p.Component != finding.PartServer {
			continue
		}
		if p.P50Ms == nil || p.P99Ms == nil || !strings.Contains(p.Source, `grpc_method="Put"`) {
			t.Fatalf("server part %+v: want p50 and p99 from grpc_server_handling_seconds{grpc_method=\"Put\"}", p)
		}
		// Bucket bounds (5 ms first) may round the server's p50 up past a
		// loopback client's; its p99 holds no more than the client's tail
		// plus one bucket.
		if *p.P99Ms > 2*max(*b.ClientP99Ms, 5) {
			t.Errorf("server p99 %.2f ms beyond the clients' %.2f ms", *p.P99Ms, *b.ClientP99Ms)
		}
		return
	}
	t.Fatalf("no server part in the budget: %+v", b.Parts)
}
