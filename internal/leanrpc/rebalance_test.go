package leanrpc

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestRestartedMemberRebalance runs a put load over the three endpoints of a
// three-member etcd, stops a follower and starts it again: while it is down
// the other two take all the puts, and once it is back its connection is
// dialled again (gRPC's backoff, whatever the other endpoints' state) and
// takes its round-robin share again. Each member's puts are counted from its
// own grpc_server_handled_total.
func TestRestartedMemberRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd processes and runs for about 20 s")
	}
	cl := clustertest.Start(t, cluster.Config{Members: 3, Processes: true})
	members := cl.Members()
	var addrs []string
	for _, m := range members {
		addrs = append(addrs, strings.TrimPrefix(m.ClientURL, "http://"))
	}
	c, err := Dial(context.Background(), addrs, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	down := follower(t, cl)

	// A paced load (200 puts/s from 20 workers), so the members and the
	// machine are not saturated and each endpoint's share is the picker's.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var errs atomic.Int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	due := make(chan struct{}, 100)
	wg.Go(func() {
		defer close(due)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				select {
				case due <- struct{}{}:
				default: // the workers are behind: drop, this is no latency test
				}
			}
		}
	})
	for w := range 20 {
		wg.Go(func() {
			req := &pb.PutRequest{Key: fmt.Appendf(nil, "/etcdperf/rebalance/%d", w), Value: []byte("v")}
			var resp pb.PutResponse
			for range due {
				rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := c.Invoke(rctx, "/etcdserverpb.KV/Put", req, &resp); err != nil {
					errs.Add(1)
				}
				cancel()
			}
		})
	}
	defer func() { stop(); wg.Wait() }()

	phase := func(name string, d time.Duration, up []int) []float64 {
		before := handled(t, members, up)
		time.Sleep(d)
		after := handled(t, members, up)
		var total float64
		for _, i := range up {
			total += after[i] - before[i]
		}
		shares := make([]float64, len(members))
		for _, i := range up {
			shares[i] = (after[i] - before[i]) / total
		}
		t.Logf("%s: %.0f puts, shares by member %.2f", name, total, shares)
		return shares
	}
	all := []int{0, 1, 2}
	var others []int
	for _, i := range all {
		if i != down {
			others = append(others, i)
		}
	}

	for i, s := range phase("before", 3*time.Second, all) {
		if s < 0.2 {
			t.Errorf("before the stop, member %d served %.0f%% of the puts, want about a third", i, 100*s)
		}
	}
	if err := members[down].StopGracefully(); err != nil {
		t.Fatal(err)
	}
	shares := phase("stopped", 3*time.Second, others)
	for _, i := range others {
		if s := shares[i]; s < 0.3 {
			t.Errorf("while member %d was down, member %d served %.0f%% of the puts, want about half", down, i, 100*s)
		}
	}
	if err := cl.Restart(members[down]); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitHealthy(context.Background(), members[down]); err != nil {
		t.Fatal(err)
	}
	// The next attempt comes within its backoff: at most 1 s × 1.6^n × 1.2
	// after the last failed one, n the failures so far (a few seconds here).
	deadline := time.Now().Add(30 * time.Second)
	for tr := c.eps[down].cur.Load(); tr == nil || !tr.ok.Load(); tr = c.eps[down].cur.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("member %d was not connected again within 30 s of its restart", down)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, s := range phase("restarted", 3*time.Second, all) {
		if s < 0.2 {
			t.Errorf("after the restart, member %d served %.0f%% of the puts, want about a third", i, 100*s)
		}
	}
	t.Logf("%d puts failed (a put in flight to the member as it stops may)", errs.Load())
}

// follower is the index of a member that is not the leader.
func follower(t *testing.T, cl *cluster.Cluster) int {
	t.Helper()
	cli := clustertest.Client(t, cl)
	for i, m := range cl.Members() {
		st, err := cli.Status(context.Background(), m.ClientURL)
		if err != nil {
			t.Fatal(err)
		}
		if st.Header.MemberId != st.Leader {
			return i
		}
	}
	t.Fatal("no follower found")
	return 0
}

// handled is the puts each member of up has handled so far, by its
// grpc_server_handled_total (every code).
func handled(t *testing.T, members []*cluster.Member, up []int) []float64 {
	t.Helper()
	out := make([]float64, len(members))
	for _, i := range up {
		resp, err := http.Get(members[i].ClientURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "grpc_server_handled_total{") || !strings.Contains(line, `grpc_method="Put"`) {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("member %d: %q: %v", i, line, err)
			}
			out[i] += v
		}
		resp.Body.Close()
	}
	return out
}

// TestBackoff: gRPC-go's connection backoff, 1 s after the first failure,
// then ×1.6 a failure with ±20% jitter, 120 s at most.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		retries  int
		min, max time.Duration
	}{
		{0, time.Second, time.Second},
		{1, 1280 * time.Millisecond, 1920 * time.Millisecond},
		{2, 2048 * time.Millisecond, 3072 * time.Millisecond},
		{50, 96 * time.Second, 144 * time.Second},
	} {
		for range 100 {
			if d := backoff(tc.retries); d < tc.min || d > tc.max {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", tc.retries, d, tc.min, tc.max)
			}
		}
	}
}

// TestRangesAcrossLeaderMoves: linearizable ranges over the three endpoints
// of a three-member etcd while the leader moves twice fail no more than a
// clientv3 application's Gets: those that meet "leader changed" or "no
// leader" (Unavailable) are made again, and counted as retried.
func TestRangesAcrossLeaderMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd processes")
	}
	cl := clustertest.Start(t, cluster.Config{Members: 3, Processes: true})
	var addrs []string
	for _, m := range cl.Members() {
		addrs = append(addrs, strings.TrimPrefix(m.ClientURL, "http://"))
	}
	c, err := Dial(context.Background(), addrs, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli := clustertest.Client(t, cl)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls, errs, retried atomic.Int64
	for range 10 {
		wg.Go(func() {
			var r Retries
			rctx := WithRetries(context.Background(), &r)
			var resp pb.RangeResponse
			for ctx.Err() == nil {
				before := r.Load()
				resp.Reset()
				if err := c.Invoke(rctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/etcdperf/moves")}, &resp); err != nil {
					errs.Add(1)
					t.Logf("range: %v", err)
				}
				calls.Add(1)
				if r.Load() > before {
					retried.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	for range 2 {
		time.Sleep(time.Second)
		var leader, to uint64
		for _, m := range cl.Members() {
			st, err := cli.Status(context.Background(), m.ClientURL)
			if err != nil {
				t.Fatal(err)
			}
			leader = st.Leader
			if st.Header.MemberId != st.Leader {
				to = st.Header.MemberId
			}
		}
		var leaderURL string
		for _, m := range cl.Members() {
			if st, err := cli.Status(context.Background(), m.ClientURL); err == nil && st.Header.MemberId == leader {
				leaderURL = m.ClientURL
			}
		}
		lc := clustertest.Client(t, cl)
		lc.SetEndpoints(leaderURL)
		if _, err := lc.MoveLeader(context.Background(), to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	t.Logf("%d ranges, %d retried, %d failed", calls.Load(), retried.Load(), errs.Load())
	if errs.Load() > 0 {
		t.Errorf("%d of %d ranges failed across two leader moves; clientv3 retries them", errs.Load(), calls.Load())
	}
}
