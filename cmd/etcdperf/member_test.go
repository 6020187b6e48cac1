package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

// TestFrozenFollowerNamed freezes one follower of three for 3 s in the middle
// of an open-loop put run spread over all three endpoints: the run file holds
// every member's requests and PING round trips, the frozen one's slow and
// silent, and the verdict names that member.
func TestFrozenFollowerNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: -short")
	}
	c := clustertest.Start(t, cluster.Config{Members: 3, Processes: true})
	cli := clustertest.Client(t, c)
	var frozen *cluster.Member
	for _, m := range c.Members() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := cli.Status(ctx, m.ClientURL)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if st.Leader != st.Header.MemberId {
			frozen = m
		}
	}
	addr := strings.TrimPrefix(frozen.ClientURL, "http://")
	done := freezeDuringLoad(t, cli, frozen, 2*time.Second, 3*time.Second)
	runFile := filepath.Join(t.TempDir(), "run.json")
	r := runBin(t, nil, "bench", "put", "--endpoints", strings.Join(c.Endpoints(), ","), "--rate", "300",
		"--duration", "10s", "--warmup", "1s", "--clients", "30", "-w", "json", "--run-file", runFile)
	<-done
	if r.code != ExitFail {
		t.Fatalf("exit %d, want %d (fail): %s", r.code, ExitFail, r.stderr)
	}
	checkRunFile(t, runFile, "bench-put-frozen-follower-3m")
	run, err := results.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if run.Client.Transport != "lean" {
		t.Fatalf("transport %q, want lean", run.Client.Transport)
	}
	ms := run.Ops[0].Members
	if len(ms) != 3 {
		t.Fatalf("members %+v, want 3", ms)
	}
	for _, m := range ms {
		t.Logf("%s: %d requests, response p99 %.1f ms, service p99 %.1f ms max %.1f ms", m.Endpoint, m.Requests, m.Latency.P99, m.Service.P99, m.Service.Max)
		if m.Requests == 0 || m.ResponseHist == "" {
			t.Errorf("%s: no requests of its own", m.Endpoint)
		}
		if strings.Contains(m.Endpoint, addr) && m.Service.Max < 2000 {
			t.Errorf("frozen %s: service max %.1f ms, want the ≈3 s freeze", m.Endpoint, m.Service.Max)
		}
	}
	if len(run.EndpointLoads) != 3 {
		t.Fatalf("endpoint loads %+v, want 3", run.EndpointLoads)
	}
	for _, e := range run.EndpointLoads {
		var ping results.Summary
		if e.PingMs != nil {
			ping = *e.PingMs
		}
		t.Logf("%s: stall %+v, %d PINGs (%d unanswered), p50 %.2f ms max %.1f ms", e.Endpoint, e.Stall, e.Pings, e.PingsUnanswered, ping.P50, ping.Max)
		if e.Pings == 0 || e.PingHist == "" {
			t.Errorf("%s: no PING round trips", e.Endpoint)
		}
		if strings.Contains(e.Endpoint, addr) && (e.Stall == nil || e.Stall.Seconds < 2) {
			t.Errorf("frozen %s: stall %+v, want most of 3 s", e.Endpoint, e.Stall)
		}
	}
	if !strings.Contains(r.stdout, addr+" had no reply") || !strings.Contains(r.stdout, "requests served by m") ||
		!strings.Contains(r.stdout, addr+" (its own requests had no reply for") {
		t.Errorf("the verdict does not name the frozen member %s: %s", addr, r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "requests sent to") || strings.Contains(l, "requests served by") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
