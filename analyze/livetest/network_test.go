package livetest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// delayProxy forwards TCP connections from a loopback port to target, holding every
// chunk for delay in each direction: added latency without a bandwidth limit, which
// `tc netem` would give if these kernels had it.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); delayCopy(out, in, delay) }()
			go func() { defer wg.Done(); delayCopy(in, out, delay) }()
		}
	}()
	return l.Addr().String()
}

// delayCopy copies src to dst, writing each chunk delay after it was read.
func delayCopy(dst io.WriteCloser, src io.Reader, delay time.Duration) {
	type chunk struct {
		due  time.Time
		data []byte
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(delay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	dst.Close()
	for range q { // let the reader finish
	}
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
