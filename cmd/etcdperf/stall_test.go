package main

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
)

// TestOpenLoopSeesStall freezes a separate etcd process for 1 s in the middle of an
// open-loop run at 500 req/s. Latency is measured from each request's intended start,
// so every request scheduled during the stall carries its wait: the worst latency must
// be near 1 s and the p99 in the hundreds of milliseconds. A closed-loop tool would
// show only the few requests in flight when the stall began (coordinated omission).
func TestOpenLoopSeesStall(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: -short")
	}
	c, err := cluster.Start(context.Background(), cluster.Config{Processes: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := c.Members()[0]
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The first key of the load says the binary has started and its 1 s
		// warm-up begun, however long a loaded machine took to get there; 2 s
		// later the run is in its measured window, with 8 s of it to go.
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
		time.Sleep(2 * time.Second)
		if err := m.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(time.Second)
		if err := m.Signal(syscall.SIGCONT); err != nil {
			t.Error(err)
		}
	}()
	r := runBin(t, nil, "bench", "put", "--endpoints", c.Endpoints()[0], "--rate", "500",
		"--duration", "10s", "--warmup", "1s", "--clients", "50", "-w", "json")
	<-done
	// The verdict may fail or call the run invalid: a 1 s stall is a real fault.
	if r.code != ExitOK && r.code != ExitFail && r.code != ExitInvalid {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
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
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Ops) != 1 {
		t.Fatalf("bad JSON (%v): %s", err, r.stdout)
	}
	lat := out.Ops[0].Latency
	t.Logf("requests %d, response p99 %.1f ms max %.1f ms, service p99 %.1f ms max %.1f ms",
		out.Ops[0].Requests, lat.P99, lat.Max, out.Ops[0].Service.P99, out.Ops[0].Service.Max)
	if lat.Max < 800 {
		t.Errorf("worst latency %.1f ms: a 1 s stall must show as ≈1 s", lat.Max)
	}
	if lat.P99 < 100 {
		t.Errorf("p99 %.1f ms: ~500 requests were scheduled during the stall, p99 must be in the hundreds of ms", lat.P99)
	}
}
