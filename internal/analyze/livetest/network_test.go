package livetest

import (
	"context"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/analyze"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/results"
)

// delayProxy is faults.DelayProxy: added latency each way, no bandwidth limit.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	return faults.DelayProxy(t, target, delay)
}

// TestLiveNetwork puts a 100 ms (each way) delay between the client and an embedded
// member: the server's own latency stays sub-millisecond, so the verdict must name
// the network.
func TestLiveNetwork(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	proxy := "http://" + delayProxy(t, ep[len("http://"):], 100*time.Millisecond)
	c := newClient(t, proxy)
	ctx := context.Background()
	// Scrape the member directly: metrics are not what the delay is about.
	s := analyze.NewScraper(nil, []string{ep + "/metrics"}, 0)
	s.Before(ctx)
	lat := putLoad(t, c, "/etcdperf/network/", 160, 256, 16)
	run := liveRun(t, proxy, s.After(ctx), results.Op{Op: "put", Requests: int64(len(lat)), BytesSent: int64(len(lat)) * 280,
		Service: latSummary(t, lat), Latency: latSummary(t, lat)})

	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, rep)
	if rep.Verdict.Bottleneck != string(finding.ClassNetwork) {
		t.Errorf("bottleneck = %s, want network: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
	if f := findingOf(rep, finding.ClassDisk); f.Severity == finding.Fail {
		t.Errorf("client-side delay blamed on disk: %s", f.Summary)
	}
}
