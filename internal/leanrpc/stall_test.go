package leanrpc

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestEtcdFrozen freezes a separate etcd process with SIGSTOP for 12 s in the
// middle of an open-loop run at 200 puts/s from 50 workers, with etcdctl's
// --keepalive-time 2s --keepalive-timeout 6s. gRPC-go raises the 2 s to 10 s
// and keeps its connection through such a freeze (a ping 10 s after the last
// read, answered within 6 s once etcd runs again); so must this client: the
// run goes on over the same connection, with no GOAWAY and no error of the
// connection's, and the freeze shows in the latencies, measured from each
// put's intended start. (A put etcd had taken before it froze may come back
// as etcd's own "request timed out", its request timeout having passed by
// its clock: that is etcd's answer, which any client gets, and is counted
// apart.)
func TestEtcdFrozen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and runs for 25 s")
	}
	cl := clustertest.Start(t, cluster.Config{Processes: true})
	o := opts()
	o.KeepaliveTime, o.KeepaliveTimeout = 2*time.Second, 6*time.Second
	c, err := Dial(context.Background(), []string{strings.TrimPrefix(cl.Endpoints()[0], "http://")}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr := c.eps[0].cur.Load()

	const (
		rate    = 200
		workers = 50
		freeze  = 12 * time.Second
		before  = 5 * time.Second
		after   = 8 * time.Second
	)
	total := int((before + freeze + after).Seconds() * rate)
	due := make(chan time.Time, total)
	var (
		errs    atomic.Int64 // the connection's
		etcds   atomic.Int64 // etcd's answers
		worst   atomic.Int64
		mu      sync.Mutex
		samples []string
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var resp pb.PutResponse
			for at := range due {
				resp.Reset()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := c.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/frozen"), Value: []byte("v")}, &resp)
				cancel()
				lat := time.Since(at)
				for w := worst.Load(); int64(lat) > w && !worst.CompareAndSwap(w, int64(lat)); w = worst.Load() {
				}
				if st, _ := status.FromError(err); err != nil && strings.HasPrefix(st.Message(), "etcdserver: ") {
					etcds.Add(1)
				} else if err != nil {
					errs.Add(1)
					mu.Lock()
					if len(samples) < 5 {
						samples = append(samples, err.Error())
					}
					mu.Unlock()
				}
			}
		})
	}
	m := cl.Members()[0]
	start := time.Now()
	stopped := false
	for i := range total {
		at := start.Add(time.Duration(i) * time.Second / rate)
		time.Sleep(time.Until(at))
		if !stopped && time.Since(start) >= before {
			if err := m.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped = true
			time.AfterFunc(freeze, func() {
				if err := m.Signal(syscall.SIGCONT); err != nil {
					t.Error(err)
				}
			})
		}
		due <- at
	}
	close(due)
	wg.Wait()
	max := time.Duration(worst.Load())
	t.Logf("%d puts, %d errors of the connection, %d answered by etcd with an error, worst latency %s",
		total, errs.Load(), etcds.Load(), max.Round(time.Millisecond))
	if n := errs.Load(); n > 0 {
		t.Errorf("%d puts failed across the freeze, e.g. %s", n, strings.Join(samples, "; "))
	}
	if now := c.eps[0].cur.Load(); now != tr || !now.ok.Load() {
		t.Error("the connection did not survive the freeze (closed, or a GOAWAY)")
	}
	if max < freeze/2 {
		t.Errorf("worst latency %s: a freeze of %s must show in it", max, freeze)
	}
}
