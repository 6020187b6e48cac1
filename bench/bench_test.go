package bench

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}

// startEtcd starts an in-process etcd with a short tick and returns conns clients to it.
func startEtcd(t *testing.T, conns int) (*cluster.Cluster, []*clientv3.Client) {
	t.Helper()
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100})
	var clis []*clientv3.Client
	for range conns {
		cli := clustertest.Client(t, c)
		clis = append(clis, cli)
	}
	return c, clis
}

func prefixCount(t *testing.T, cli *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func newPut(t *testing.T, clis []*clientv3.Client, sequential bool) *Put {
	t.Helper()
	p, err := NewPut(clis, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 256, KeySpace: 1000, Sequential: sequential})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPutClosedAndOpenLoop(t *testing.T) {
	_, clis := startEtcd(t, 2)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"closed total", Config{Workers: 8, Total: 500}},
		{"closed duration+warmup", Config{Workers: 8, Duration: time.Second, Warmup: 300 * time.Millisecond}},
		{"open total", Config{Workers: 8, Rate: 400, Total: 400}},
		{"open duration+warmup", Config{Workers: 8, Rate: 200, Duration: 2 * time.Second, Warmup: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Prefix, cfg.KV = DefaultPrefix, clis[0]
			var progressed bool
			cfg.Progress = func(Progress) { progressed = true }
			var run results.Run
			if err := Run(context.Background(), cfg, newPut(t, clis, tc.name == "closed total"), &run); err != nil {
				t.Fatal(err)
			}
			if len(run.Ops) != 1 || run.Ops[0].Op != "put" {
				t.Fatalf("ops = %+v", run.Ops)
			}
			op := run.Ops[0]
			if cfg.Total > 0 && op.Requests != int64(cfg.Total) {
				t.Errorf("requests = %d, want exactly the total %d (warm-up excluded)", op.Requests, cfg.Total)
			}
			if op.Requests == 0 || op.Errors != 0 || op.ThroughputRPS <= 0 {
				t.Errorf("requests %d errors %d throughput %g", op.Requests, op.Errors, op.ThroughputRPS)
			}
			if op.Latency.P99 <= 0 || op.Latency.Max < op.Latency.P50 || op.Service.P50 <= 0 {
				t.Errorf("latency %+v service %+v", op.Latency, op.Service)
			}
			if op.BytesSent != op.Requests*int64(len(DefaultPrefix)+8+256) {
				t.Errorf("bytes sent = %d for %d requests", op.BytesSent, op.Requests)
			}
			var inIntervals int64
			for _, iv := range op.Intervals {
				inIntervals += iv.Requests
				if iv.Start.Nanosecond() != 0 {
					t.Errorf("interval start %v is not on a second", iv.Start)
				}
			}
			if inIntervals != op.Requests {
				t.Errorf("intervals hold %d requests of %d", inIntervals, op.Requests)
			}
			if h, err := op.ResponseHist.Decode(); err != nil || h.TotalCount() != op.Requests {
				t.Errorf("response hist count %d, err %v", h.TotalCount(), err)
			}
			if run.DurationS <= 0 || run.WarmupS != cfg.Warmup.Seconds() || !run.EndedAt.After(run.StartedAt) {
				t.Errorf("window %gs warm-up %gs, %v..%v", run.DurationS, run.WarmupS, run.StartedAt, run.EndedAt)
			}
			if run.Client.CPUSeconds <= 0 || run.Client.MaxRSSBytes <= 0 || run.Client.Cores <= 0 {
				t.Errorf("client = %+v", run.Client)
			}
			if cfg.Rate > 0 {
				if op.TargetRPS != cfg.Rate || run.Client.PacingLagP99Ms <= 0 {
					t.Errorf("target %g, pacing lag p99 %g ms", op.TargetRPS, run.Client.PacingLagP99Ms)
				}
				// Rate accuracy, when the generator kept its schedule (a loaded test
				// machine may not): every send within the tolerance of its due time
				// puts the last one at the end of the schedule.
				if op.LateStarts > 0 {
					t.Logf("%d late starts on a busy machine: rate accuracy not checked", op.LateStarts)
				} else if op.ThroughputRPS < 0.98*cfg.Rate || op.ThroughputRPS > 1.02*cfg.Rate || !run.Valid {
					t.Errorf("throughput %g for a target of %g, valid %v", op.ThroughputRPS, cfg.Rate, run.Valid)
				}
				if op.Latency.P50 < op.Service.P50 {
					t.Errorf("response p50 %g < service p50 %g: response counts from the earlier intended time", op.Latency.P50, op.Service.P50)
				}
			}
			if cfg.Rate == 0 && !run.Valid || run.Interrupted {
				t.Errorf("valid %v (%s), interrupted %v", run.Valid, run.InvalidReason, run.Interrupted)
			}
			if !progressed && run.DurationS > 0.5 {
				t.Error("no progress reported")
			}
			if n := prefixCount(t, clis[0], DefaultPrefix); n != 0 {
				t.Errorf("%d keys left under the prefix", n)
			}
		})
	}
}

func TestRange(t *testing.T) {
	_, clis := startEtcd(t, 1)
	for _, tc := range []struct {
		name     string
		cfg      RangeConfig
		wantKeys int64 // per request
	}{
		{"single key", RangeConfig{Width: 1, Consistency: "l"}, 1},
		{"width 10 serializable", RangeConfig{Width: 10, Consistency: "s"}, 10},
		{"width 10 limit 3", RangeConfig{Width: 10, Limit: 3}, 3},
		{"keys only", RangeConfig{Width: 5, KeysOnly: true}, 5},
		{"count only", RangeConfig{Width: 5, CountOnly: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := tc.cfg
			rc.Prefix, rc.KeySize, rc.ValSize, rc.Keys = DefaultPrefix, 6, 100, 300
			w, err := NewRange(clis, rc)
			if err != nil {
				t.Fatal(err)
			}
			var run results.Run
			if err := Run(context.Background(), Config{Workers: 4, Total: 200, Prefix: DefaultPrefix, KV: clis[0]}, w, &run); err != nil {
				t.Fatal(err)
			}
			op := run.Ops[0]
			if op.Op != "range" || op.Requests != 200 || op.Errors != 0 {
				t.Fatalf("op %s: %d requests, %d errors %v", op.Op, op.Requests, op.Errors, op.ErrorsByCode)
			}
			if op.KeysReceived != tc.wantKeys*op.Requests {
				t.Errorf("keys received = %d, want %d per request", op.KeysReceived, tc.wantKeys)
			}
			perKey := int64(len(DefaultPrefix) + 6 + 100)
			if rc.KeysOnly {
				perKey -= 100
			}
			if op.BytesReceived != op.KeysReceived*perKey {
				t.Errorf("bytes received = %d for %d keys", op.BytesReceived, op.KeysReceived)
			}
			if n := prefixCount(t, clis[0], DefaultPrefix); n != 0 {
				t.Errorf("%d keys left under the prefix", n)
			}
		})
	}
}

func TestMixed(t *testing.T) {
	_, clis := startEtcd(t, 2)
	w, err := NewMixed(clis, MixedConfig{
		Prefix: DefaultPrefix, KeySize: 6, ValSize: 64, KeySpace: 100, ReadRatio: 0.8, Width: 1,
		Watchers: 4, Streams: 2, WatchedKeys: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	var run results.Run
	if err := Run(context.Background(), Config{Workers: 8, Rate: 500, Total: 500, Prefix: DefaultPrefix, KV: clis[0]}, w, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Ops) != 3 || run.Ops[0].Op != "range" || run.Ops[1].Op != "put" || run.Ops[2].Op != "watch" {
		t.Fatalf("ops = %v", run.Ops)
	}
	rg, put, watch := run.Ops[0], run.Ops[1], run.Ops[2]
	if rg.Requests+put.Requests != 500 || rg.Requests < put.Requests {
		t.Errorf("%d ranges and %d puts for a read ratio of 0.8", rg.Requests, put.Requests)
	}
	if rg.TargetRPS != 400 || put.TargetRPS != 100 || watch.TargetRPS != 0 {
		t.Errorf("targets %g %g %g", rg.TargetRPS, put.TargetRPS, watch.TargetRPS)
	}
	if watch.Watchers != 4 || watch.MissedEvents != 0 {
		t.Errorf("watch: %d watchers, %d missed", watch.Watchers, watch.MissedEvents)
	}
}

func TestRejectsOversizedValues(t *testing.T) {
	_, err := NewPut([]*clientv3.Client{{}}, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 2 << 20, KeySpace: 1})
	if err == nil || !strings.Contains(err.Error(), "1.5 MiB") {
		t.Errorf("err = %v, want the 1.5 MiB request limit named", err)
	}
	if _, err := NewPut([]*clientv3.Client{{}}, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 1 << 20, KeySpace: 1}); err != nil {
		t.Errorf("1 MiB value: %v", err)
	}
	if _, err := NewPut([]*clientv3.Client{{}}, PutConfig{Prefix: DefaultPrefix, KeySize: 3, ValSize: 8, KeySpace: 1000}); err == nil {
		t.Error("3-byte keys for 1000 keys accepted")
	}
}

func TestPrefixRefusalAndCleanup(t *testing.T) {
	_, clis := startEtcd(t, 1)
	cli, ctx := clis[0], context.Background()
	// Keys next to the prefix, and one that shares its first bytes.
	outside := []string{"/other/key", "/etcdperf", "/etcdperg/x"}
	for _, k := range outside {
		if _, err := cli.Put(ctx, k, "keep"); err != nil {
			t.Fatal(err)
		}
	}
	revs := map[string]int64{}
	for _, k := range outside {
		r, _ := cli.Get(ctx, k)
		revs[k] = r.Kvs[0].ModRevision
	}
	if _, err := cli.Put(ctx, DefaultPrefix+"theirs", "v"); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Workers: 2, Total: 50, Prefix: DefaultPrefix, KV: cli}
	var run results.Run
	err := Run(ctx, cfg, newPut(t, clis, false), &run)
	if !errors.Is(err, ErrPrefixInUse) {
		t.Fatalf("err = %v, want ErrPrefixInUse", err)
	}
	if n := prefixCount(t, cli, DefaultPrefix); n != 1 {
		t.Fatalf("refused run changed the prefix: %d keys", n)
	}
	cfg.Force = true
	if err := Run(ctx, cfg, newPut(t, clis, false), &run); err != nil {
		t.Fatal(err)
	}
	if n := prefixCount(t, cli, DefaultPrefix); n != 0 {
		t.Errorf("%d keys left under the prefix", n)
	}
	for _, k := range outside {
		r, err := cli.Get(ctx, k)
		if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "keep" || r.Kvs[0].ModRevision != revs[k] {
			t.Errorf("key %s outside the prefix was touched: %v %v", k, r.Kvs, err)
		}
	}
	if err := Run(ctx, Config{Workers: 1, Total: 1, Prefix: "", KV: cli}, newPut(t, clis, false), &run); err == nil {
		t.Error("empty prefix accepted")
	}
}

// TestCancelMidRun stops runs halfway: partial results, clean prefix, no goroutine left.
func TestCancelMidRun(t *testing.T) {
	c, clis := startEtcd(t, 2)
	openConnections(t, c, clis)
	for _, tc := range []struct {
		name string
		rate float64
		w    func() Workload
	}{
		{"put closed", 0, func() Workload { return newPut(t, clis, false) }},
		{"put open", 300, func() Workload { return newPut(t, clis, false) }},
		{"mixed with watchers", 300, func() Workload {
			w, err := NewMixed(clis, MixedConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 16, KeySpace: 100, ReadRatio: 0.5,
				Width: 1, Consistency: "l", Watchers: 6, Streams: 3, WatchedKeys: 3})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}},
		{"watch", 200, func() Workload {
			w, err := NewWatch(clis, WatchConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 16, Watchers: 6, Streams: 3, WatchedKeys: 3})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			var n int64
			cfg := Config{Workers: 16, Rate: tc.rate, Duration: time.Minute, Prefix: DefaultPrefix, KV: clis[0],
				Progress: func(p Progress) {
					if p.Requests > 0 && n == 0 {
						n = p.Requests
						cancel()
					}
				}}
			var run results.Run
			start := time.Now()
			err := Run(ctx, cfg, tc.w(), &run)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("cancelled run took %v", took)
			}
			if !run.Interrupted || len(run.Ops) == 0 || run.DurationS <= 0 || run.DurationS > 30 {
				t.Errorf("interrupted %v, %d ops, window %gs", run.Interrupted, len(run.Ops), run.DurationS)
			}
			var reqs int64
			for _, op := range run.Ops {
				reqs += op.Requests
				if op.Errors != 0 {
					t.Errorf("%s: %d errors %v: requests cut short by the stop are no errors", op.Op, op.Errors, op.ErrorsByCode)
				}
			}
			if reqs == 0 {
				t.Error("no partial results")
			}
			if n := prefixCount(t, clis[0], DefaultPrefix); n != 0 {
				t.Errorf("%d keys left under the prefix", n)
			}
			settleGoroutines(t, before)
		})
	}
}

var (
	_ Workload = (*Composite)(nil)
	_ Workload = (*LeaseKeepAlive)(nil)
)
