package leanrpc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestPingNoGoAway: against a real etcd with its default keepalive policy
// (--grpc-keepalive-min-time 5 s), PINGs sent back to back with no response
// between them draw a GOAWAY too_many_pings within a few (the control: the
// test sees one), while paced PINGs at a 1 ms tick beside calls, and through
// a second with no calls, draw none: as many PINGs as a 60 s run at 10 a
// second sends, all answered, on the one connection they started on.
func TestPingNoGoAway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	cl := clustertest.Start(t, cluster.Config{})
	addr := strings.TrimPrefix(cl.Endpoints()[0], "http://")

	// The control.
	c := dial(t, addr)
	first := c.eps[0].cur.Load()
	for range 10 {
		first.queuePing(false, [8]byte{})
		time.Sleep(10 * time.Millisecond)
	}
	if !replaced(c, first, 10*time.Second) {
		t.Fatal("10 PINGs with no response between them drew no GOAWAY: the test cannot see one")
	}
	first.mu.Lock()
	why := first.err
	first.mu.Unlock()
	t.Logf("control: the server went away: %v", why)

	c = dial(t, addr)
	first = c.eps[0].cur.Load()
	// Until 600 PINGs were answered (a 60 s run at 10/s) and the idle second
	// is over, or a minute: at a 1 ms tick it takes seconds.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	var answered, lost atomic.Int64
	var rtts sync.Map
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		c.Ping(ctx, time.Millisecond, func(ep int, rtt time.Duration, ok bool) {
			if ep != 0 {
				t.Errorf("a PING of endpoint %d; there is one", ep)
			}
			if ok {
				if answered.Add(1) >= 600 && time.Since(start) > 4*time.Second {
					cancel()
				}
				rtts.Store(answered.Load()%16, rtt)
			} else {
				lost.Add(1)
			}
		})
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			req := &pb.RangeRequest{Key: []byte("/etcdperf/ping"), Serializable: true}
			for ctx.Err() == nil {
				// A second with no calls, 2 s in: no response, so no PING either.
				if d := time.Since(start); d > 2*time.Second && d < 3*time.Second {
					time.Sleep(3*time.Second - d)
				}
				// A call of its own deadline: one near the run's end would reach the
				// server with the time left, and the server's DeadlineExceeded come first.
				var resp pb.RangeResponse
				cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := c.InvokeAt(cctx, "/etcdserverpb.KV/Range", req, &resp)
				ccancel()
				if err != nil {
					t.Errorf("range: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	<-pinged
	t.Logf("%d PINGs answered, %d unanswered at the end, in %s", answered.Load(), lost.Load(), time.Since(start).Round(time.Millisecond))
	if got := c.eps[0].cur.Load(); got != first || !first.ok.Load() {
		first.mu.Lock()
		defer first.mu.Unlock()
		t.Fatalf("the connection was replaced or lost: %v", first.err)
	}
	if answered.Load() < 600 || lost.Load() > 1 {
		t.Errorf("%d PINGs answered, %d not; want ≥ 600 (a 60 s run at 10/s) and at most the last one unanswered", answered.Load(), lost.Load())
	}
	rtts.Range(func(_, v any) bool {
		if d := v.(time.Duration); d <= 0 || d > 10*time.Second {
			t.Errorf("round trip %s", d)
		}
		return true
	})
}

// replaced waits up to d for the endpoint's connection to be other than t.
func replaced(c *Conn, t *transport, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if c.eps[0].cur.Load() != t || !t.ok.Load() {
			return true
		}
	}
	return false
}

// BenchmarkPing is the cost of the paced PINGs to the calls beside them: puts
// on one connection (as BenchmarkPut) with the connection PINGed every 100 µs,
// a thousand times the rate a run uses (10 a second), and without.
func BenchmarkPing(b *testing.B) {
	addr := echoServer(b)
	for _, every := range []time.Duration{0, 100 * time.Microsecond} {
		b.Run(fmt.Sprintf("puts/ping-every=%s", every), func(b *testing.B) {
			c, err := Dial(context.Background(), []string{addr}, opts())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			var n atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				if every > 0 {
					c.Ping(ctx, every, func(int, time.Duration, bool) { n.Add(1) })
				}
			}()
			benchPut(b, c)
			cancel()
			<-done
			b.ReportMetric(float64(n.Load())/float64(b.N), "pings/op")
		})
	}
}
