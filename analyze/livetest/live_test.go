package livetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// Live scenarios against an embedded etcd: the cause is created for real and the
// verdict must name it; the healthy baseline must not raise a false alarm. They run
// one at a time (the embedded servers share the process's metrics registry).

// liveRun wraps what a bench run would record around the scrapes.
func liveRun(t *testing.T, ep string, scrapes []results.Scrape, ops ...results.Op) *results.Run {
	t.Helper()
	host := hardware.Collect(hardware.Config{DataDir: t.TempDir()})
	return &results.Run{
		Version: results.Version, Command: "test", Valid: true, DurationS: 1,
		Target:  results.ClusterInfo{Endpoints: []string{ep}, Embedded: true, InProcess: true},
		Ops:     ops,
		Host:    host,
		Scrapes: scrapes,
	}
}

func latSummary(t *testing.T, lat []time.Duration) results.Summary {
	t.Helper()
	h := results.NewHist()
	for _, d := range lat {
		if err := h.RecordValue(d.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	return results.Summarize(h)
}

func requireLive(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("live etcd scenario: skipped with -short")
	}
}

func TestLiveHealthyBaseline(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	c := newClient(t, ep)
	ctx := context.Background()
	s := analyze.NewScraper(nil, []string{ep + "/metrics"}, 500*time.Millisecond)
	s.Before(ctx)
	s.Start(ctx)
	lat := putLoad(t, c, "/etcdperf/baseline/", 500, 1024, 8)
	run := liveRun(t, ep, s.After(ctx), results.Op{Op: "put", Requests: int64(len(lat)), BytesSent: int64(len(lat)) * 1050,
		Service: latSummary(t, lat), Latency: latSummary(t, lat)})

	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, rep)
	for _, f := range rep.Findings {
		if (f.Class == finding.ClassDisk || f.Class == finding.ClassNetwork || f.Class == finding.ClassValueSize || f.Class == finding.ClassRangeSize) && f.Severity == finding.Fail {
			t.Errorf("false alarm: %s fail on a healthy baseline: %s", f.Class, f.Summary)
		}
		if f.Class == finding.ClassDisk && f.Severity == finding.Unknown {
			t.Errorf("disk unknown on a live member: %s", f.Summary)
		}
	}
	switch rep.Verdict.Bottleneck {
	case "disk", "network", "value-size", "range-size":
		t.Errorf("healthy baseline blamed on %s: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
}

func TestLiveValueSize(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	c := newClient(t, ep)
	ctx := context.Background()
	s := analyze.NewScraper(nil, []string{ep + "/metrics"}, 0)
	s.Before(ctx)
	const size = 300 << 10
	lat := putLoad(t, c, "/etcdperf/values/", 40, size, 4)
	run := liveRun(t, ep, s.After(ctx), results.Op{Op: "put", Requests: int64(len(lat)), BytesSent: int64(len(lat)) * (size + 30),
		Service: latSummary(t, lat), Latency: latSummary(t, lat)})

	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, rep)
	if rep.Verdict.Bottleneck != string(finding.ClassValueSize) {
		t.Errorf("bottleneck = %s, want value-size: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
	// The server's own metrics must say so too, without the run's byte counts.
	f := findingOf(rep, finding.ClassValueSize)
	found := false
	for _, e := range f.Evidence {
		if strings.HasPrefix(e.Signal, "received bytes per put") && e.Severity == finding.Fail {
			found = true
		}
	}
	if !found {
		t.Errorf("value-size evidence from server metrics did not fail: %+v", f.Evidence)
	}
}

func TestLiveRangeSize(t *testing.T) {
	requireLive(t)
	ep := startEmbedded(t)
	c := newClient(t, ep)
	ctx := context.Background()
	const keys = 12_000
	val := strings.Repeat("r", 200)
	for i := 0; i < keys; i += 100 {
		var ops []clientv3.Op
		for j := i; j < i+100; j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/etcdperf/range/%08d", j), val))
		}
		if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	s := analyze.NewScraper(nil, []string{ep + "/metrics"}, 0)
	s.Before(ctx)
	var lat []time.Duration
	var got, bytes int64
	for i := 0; i < 5; i++ {
		start := time.Now()
		resp, err := c.Get(ctx, "/etcdperf/range/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		got += int64(len(resp.Kvs))
		for _, kv := range resp.Kvs {
			bytes += int64(len(kv.Key) + len(kv.Value))
		}
	}
	run := liveRun(t, ep, s.After(ctx), results.Op{Op: "range", Requests: 5, KeysReceived: got, BytesReceived: bytes,
		Service: latSummary(t, lat), Latency: latSummary(t, lat)})

	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, rep)
	if rep.Verdict.Bottleneck != string(finding.ClassRangeSize) {
		t.Errorf("bottleneck = %s, want range-size: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
	if f := findingOf(rep, finding.ClassDisk); f.Severity == finding.Fail {
		t.Errorf("reads blamed on disk: %s", f.Summary)
	}
}

func findingOf(rep analyze.Result, c finding.Class) finding.Finding {
	for _, f := range rep.Findings {
		if f.Class == c {
			return f
		}
	}
	return finding.Finding{}
}

func logReport(t *testing.T, rep analyze.Result) {
	t.Helper()
	var b strings.Builder
	if err := report.Analysis(rep).Table(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}
