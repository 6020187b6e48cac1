// Package livetest holds the analyzer's tests against live etcd servers: the live
// scenarios and the fixture recorder. They live apart from package analyze so its
// test binary does not link the etcd server, which keeps `go test -fuzz` on the
// metrics path fast (coverage instrumentation of all of etcd slows fuzzing to a crawl).
package livetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Test servers: an embedded etcd of the release this module builds against, and
// Debian's etcd 3.4 as a separate process. Both listen on 127.0.0.1 only and are
// stopped by the test that started them.

// freePort reserves a loopback port and releases it for the server to take.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEmbedded starts a single-member embedded etcd and returns its client URL.
// Every embedded server of a test binary shares one Prometheus registry, so tests
// using it must run one at a time (no t.Parallel).
func startEmbedded(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("embedded etcd not ready after 30s")
	}
	return cu.String()
}

// startEtcd34 starts Debian's /usr/bin/etcd (3.4) in a temp dir, with args
// after its own; it skips, saying why, when the binary is missing.
func startEtcd34(t *testing.T, args ...string) string {
	t.Helper()
	bin := "/usr/bin/etcd"
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s missing (apt-get install -y etcd-server): %v", bin, err)
	}
	cu := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	pu := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--name", "fixture", "--data-dir", t.TempDir(),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "fixture="+pu, "--log-level", "error")
	cmd.Args = append(cmd.Args, args...)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(cu + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cu
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("etcd 3.4 at %s not healthy after 30s", cu)
	return ""
}

func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// putLoad writes n keys of valueSize bytes under prefix from workers goroutines and
// returns the per-request latencies.
func putLoad(t *testing.T, c *clientv3.Client, prefix string, n, valueSize, workers int) []time.Duration {
	t.Helper()
	val := strings.Repeat("v", valueSize)
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	var wg sync.WaitGroup
	var firstErr error
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := c.Put(ctx, fmt.Sprintf("%s%08d", prefix, i), val)
				cancel()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("put: %v", firstErr)
	}
	return lat
}
