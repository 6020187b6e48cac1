package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/results"
)

// TestClusterLost: requests that wait for a connection forever (as etcd's client
// does when every endpoint is down) end once Connected has said false for the
// dial timeout; the partial run is invalid and Run says the cluster was lost.
func TestClusterLost(t *testing.T) {
	before := runtime.NumGoroutine()
	var down atomic.Bool
	var served atomic.Int64
	waitForReady := func(ctx context.Context, _ uint64) Outcome {
		if !down.Load() {
			if served.Add(1) == 100 {
				down.Store(true)
			}
			return Outcome{}
		}
		<-ctx.Done()
		return Outcome{Err: ctx.Err()}
	}
	cfg := Config{Workers: 4, Rate: 200, Duration: time.Minute, Prefix: DefaultPrefix, KV: fakeKV{},
		Connected: func() bool { return !down.Load() }, DialTimeout: 300 * time.Millisecond}
	var run results.Run
	start := time.Now()
	err := Run(context.Background(), cfg, fakeWorkload{waitForReady}, &run)
	took := time.Since(start)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	// 100 requests at 200/s, then the dial timeout; a loaded machine may add some.
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if run.Valid || run.Interrupted || len(run.Ops) != 1 || run.Ops[0].Requests < 100 || run.Ops[0].Errors != 0 {
		t.Errorf("valid %v (%q) interrupted %v ops %+v", run.Valid, run.InvalidReason, run.Interrupted, run.Ops)
	}
	settleGoroutines(t, before)
}

// TestConnectedNeedsDialTimeout: a connection check without a timeout is a bug of the caller.
func TestConnectedNeedsDialTimeout(t *testing.T) {
	cfg := Config{Workers: 1, Total: 1, Prefix: DefaultPrefix, KV: fakeKV{}, Connected: func() bool { return true }}
	if err := Run(context.Background(), cfg, fakeWorkload{}, &results.Run{}); err == nil {
		t.Error("accepted")
	}
}

// openConnections opens, before a goroutine count, every connection to the
// embedded server that would otherwise open during the run, each with goroutines
// on both sides: the clients' (they dial lazily) and the server's own gRPC
// gateway, which dials the server from a goroutine of its own once it is up (on
// a loaded machine that connection was seen landing mid-run, three goroutines
// over the count). An HTTP request through the gateway returns only once its
// connection serves.
func openConnections(t *testing.T, c *cluster.Cluster, clis []*clientv3.Client) {
	t.Helper()
	for _, cli := range clis {
		prefixCount(t, cli, DefaultPrefix)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, ep := range c.Endpoints() {
		resp, err := hc.Post(ep+"/v3/kv/range", "application/json", strings.NewReader(`{"key":"AA=="}`))
		if err != nil {
			t.Fatalf("range through the gateway: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("range through the gateway: %s: %s", resp.Status, body)
		}
	}
	hc.CloseIdleConnections()
}

// settleGoroutines waits up to 10 s for the goroutine count to fall back to
// before, and fails with every stack when it does not.
func settleGoroutines(t *testing.T, before int) {
	t.Helper()
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
