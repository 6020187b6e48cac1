package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestOpenLoopSeesStall freezes a separate etcd process for 2 s in the middle of an
// open-loop run at 500 req/s. Latency is measured from each request's intended start,
// so every request scheduled during the stall carries its wait: the worst latency must
// be near 2 s and the p99 in the hundreds of milliseconds. A closed-loop tool would
// show only the few requests in flight when the stall began (coordinated omission).
// The verdict names the stall: it fails, class stall, with how long and which member.
func TestOpenLoopSeesStall(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: -short")
	}
	c := clustertest.Start(t, cluster.Config{Processes: true})
	m := c.Members()[0]
	cli := clustertest.Client(t, c)
	// The first key of the load says the binary has started and its 1 s
	// warm-up begun, however long a loaded machine took to get there; 2 s
	// later the run is in its measured window, with 8 s of it to go.
	done := freezeDuringLoad(t, cli, m, 2*time.Second, 2*time.Second)
	r := runBin(t, nil, "bench", "put", "--endpoints", c.Endpoints()[0], "--rate", "500",
		"--duration", "10s", "--warmup", "1s", "--clients", "50", "-w", "json")
	<-done
	// A 2 s stall fails the run; the requests due during it are the server's
	// shortfall, so the run stays valid.
	if r.code != ExitFail {
		t.Fatalf("exit %d, want %d (fail): %s", r.code, ExitFail, r.stderr)
	}
	var out struct {
		Ops []struct {
			Requests int64 `json:"requests"`
			Latency  struct {
				P99, Max float64
			} `json:"latency_ms"`
			Service struct {
				P99, Max float64
			} `json:"service_ms"`
		} `json:"ops"`
		Valid    bool `json:"valid"`
		Findings []struct {
			Class, Severity, Summary string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Ops) != 1 {
		t.Fatalf("bad JSON (%v): %s", err, r.stdout)
	}
	lat := out.Ops[0].Latency
	t.Logf("requests %d, response p99 %.1f ms max %.1f ms, service p99 %.1f ms max %.1f ms",
		out.Ops[0].Requests, lat.P99, lat.Max, out.Ops[0].Service.P99, out.Ops[0].Service.Max)
	if lat.Max < 1800 {
		t.Errorf("worst latency %.1f ms: a 2 s stall must show as ≈2 s", lat.Max)
	}
	if !out.Valid {
		t.Error("run invalid: requests due while every client waited on the server are the server's shortfall")
	}
	named := false
	for _, f := range out.Findings {
		if f.Class == "stall" {
			t.Logf("stall: %s: %s", f.Severity, f.Summary)
			named = f.Severity == "fail" && strings.Contains(f.Summary, "no reply for") && strings.Contains(f.Summary, strings.TrimPrefix(m.ClientURL, "http://"))
		}
	}
	if !named {
		t.Errorf("no failing stall finding naming %s: %+v", m.ClientURL, out.Findings)
	}
	if lat.P99 < 100 {
		t.Errorf("p99 %.1f ms: ~500 requests were scheduled during the stall, p99 must be in the hundreds of ms", lat.P99)
	}
}

// TestFreezeIsAStall freezes a separate etcd process for 15 s in the middle of
// an open-loop run (etcd's 10 s keepalive gives up on some connections meanwhile,
// so requests fail Unavailable): the verdict names a stall of most of the 15 s
// on that member, not errors alone, and the run stays valid.
func TestFreezeIsAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: -short")
	}
	c := clustertest.Start(t, cluster.Config{Processes: true})
	m := c.Members()[0]
	cli := clustertest.Client(t, c)
	done := freezeDuringLoad(t, cli, m, 3*time.Second, 15*time.Second)
	r := runBin(t, nil, "bench", "put", "--endpoints", c.Endpoints()[0], "--rate", "100",
		"--duration", "25s", "--warmup", "1s", "--clients", "50", "-w", "json")
	<-done
	if r.code != ExitFail {
		t.Fatalf("exit %d, want %d (fail): %s", r.code, ExitFail, r.stderr)
	}
	var out struct {
		Valid   bool `json:"valid"`
		Verdict struct {
			Summary string `json:"summary"`
		} `json:"verdict"`
		Findings []struct {
			Class, Severity, Summary string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("bad JSON (%v): %s", err, r.stdout)
	}
	t.Logf("verdict: %s", out.Verdict.Summary)
	if !out.Valid {
		t.Error("run invalid: requests due while every client waited on the server are the server's shortfall")
	}
	for _, f := range out.Findings {
		if f.Class != "stall" {
			continue
		}
		// "no reply for 15 s": at least 10 s of the 15 whatever the machine's load.
		var secs float64
		if _, err := fmt.Sscanf(f.Summary[strings.Index(f.Summary, "no reply for ")+len("no reply for "):], "%g s", &secs); err != nil || secs < 10 {
			t.Errorf("stall %q: want a stall of most of 15 s (%v)", f.Summary, err)
		}
		if f.Severity != "fail" || !strings.Contains(f.Summary, strings.TrimPrefix(m.ClientURL, "http://")) || !strings.Contains(out.Verdict.Summary, "stall") {
			t.Errorf("stall %s %q, verdict %q: want a failing stall on %s named in the verdict", f.Severity, f.Summary, out.Verdict.Summary, m.ClientURL)
		}
		return
	}
	t.Errorf("no stall finding: %+v", out.Findings)
}

// freezeDuringLoad stops member m with SIGSTOP for freeze, after seeing the
// first key of the load and waiting after more; the channel closes once m runs
// again.
func freezeDuringLoad(t *testing.T, cli *clientv3.Client, m *cluster.Member, after, freeze time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			resp, err := cli.Get(context.Background(), "/etcdperf/", clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err == nil && resp.Count > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Error("no key of the load after 30 s")
				return
			}
		}
		time.Sleep(after)
		if err := m.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(freeze)
		if err := m.Signal(syscall.SIGCONT); err != nil {
			t.Error(err)
		}
	}()
	return done
}
