package livetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/etcdperf/etcdperf/internal/leanrpc"
	lrmeasure "github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/results"
)

// pingedPutLoad makes n puts of valueSize bytes from workers goroutines over
// one lean connection to addr (host:port), started every apart (as fast as
// the workers go when 0), and PINGs the connection every PingEvery through
// the load as bench's do; it returns the puts' latencies and the endpoint's
// PINGs as a run file keeps them, named endpoint.
func pingedPutLoad(t *testing.T, addr, endpoint, prefix string, n, valueSize, workers int, every time.Duration) ([]time.Duration, results.EndpointLoad) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := leanrpc.Dial(ctx, []string{addr}, leanrpc.Options{MaxSendMsgSize: 2 << 20, MaxRecvMsgSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := results.NewHist()
	var pinged sync.WaitGroup
	var answered int64
	pinged.Go(func() {
		conn.Ping(ctx, lrmeasure.PingEvery, func(_ int, rtt time.Duration, ok bool) {
			if ok {
				answered++
				_ = h.RecordValue(max(rtt.Microseconds(), results.HistMinUs))
			}
		})
	})
	val := []byte(strings.Repeat("v", valueSize))
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	var firstErr error
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				start := time.Now()
				rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
				err := conn.Invoke(rctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: fmt.Appendf(nil, "%s%08d", prefix, i), Value: val}, &pb.PutResponse{})
				rcancel()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		})
	}
	t0 := time.Now()
	for i := range n {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * every)))
		next <- i
	}
	close(next)
	wg.Wait()
	cancel()
	pinged.Wait()
	if firstErr != nil {
		t.Fatalf("put: %v", firstErr)
	}
	e := results.EndpointLoad{Endpoint: endpoint, Pings: answered}
	if h.TotalCount() > 0 {
		s := results.Summarize(h)
		if e.PingHist, err = results.EncodeHist(h); err != nil {
			t.Fatal(err)
		}
		e.PingMs = &s
	}
	return lat, e
}
