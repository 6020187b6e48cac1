package bench

import (
	"context"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/internal/nullkv"
	"github.com/etcdperf/etcdperf/results"
)

func TestDirectTarget(t *testing.T) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, tc := range []struct {
		eps    []string
		tls    *tls.Config
		ok     bool
		secure bool
		addrs  []string
	}{
		{eps: []string{"127.0.0.1:2379"}, ok: true, addrs: []string{"127.0.0.1:2379"}},
		{eps: []string{"http://a:1", "http://b:2/"}, tls: tlsCfg, ok: true, addrs: []string{"a:1", "b:2"}},
		{eps: []string{"https://a:1"}, ok: true, secure: true, addrs: []string{"a:1"}},
		{eps: []string{"a:1"}, tls: tlsCfg, ok: true, secure: true, addrs: []string{"a:1"}},
		{eps: []string{"http://a:1", "https://b:2"}, tls: tlsCfg},
		{eps: []string{"unix://sock"}},
	} {
		secureCfg, addrs, ok := directTarget(tc.eps, tc.tls)
		if ok != tc.ok {
			t.Errorf("%v: ok %v, want %v", tc.eps, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if secure := secureCfg != nil; secure != tc.secure {
			t.Errorf("%v: TLS %v, want %v", tc.eps, secure, tc.secure)
		}
		if len(addrs) != len(tc.addrs) || addrs[0] != tc.addrs[0] || addrs[len(addrs)-1] != tc.addrs[len(tc.addrs)-1] {
			t.Errorf("%v: addresses %v, want %v", tc.eps, addrs, tc.addrs)
		}
	}
}

// closingConn is a direct load connection of either kind.
type closingConn interface {
	grpc.ClientConnInterface
	Close() error
}

// dialers are the two direct load connections: lean (DialDirect) and gRPC-go
// tuned (DialTuned); nil when they decline.
var dialers = map[string]func(context.Context, clientv3.Config) (closingConn, error){
	"lean": func(ctx context.Context, cfg clientv3.Config) (closingConn, error) {
		c, err := DialDirect(ctx, cfg)
		if c == nil {
			return nil, err
		}
		return c, err
	},
	"tuned": func(ctx context.Context, cfg clientv3.Config) (closingConn, error) {
		c, err := DialTuned(ctx, cfg)
		if c == nil {
			return nil, err
		}
		return c, err
	},
}

// TestDirectWorkers runs the put and range request loops over direct load
// connections of each kind to the null KV server, and checks when they decline.
func TestDirectWorkers(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cfg := clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	for kind, dial := range dialers {
		t.Run(kind, func(t *testing.T) {
			conn, err := dial(ctx, cfg)
			if err != nil || conn == nil {
				t.Fatalf("dial: %v, %v", conn, err)
			}
			defer conn.Close()
			direct := []grpc.ClientConnInterface{conn}
			put, err := NewPut([]*clientv3.Client{nil}, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 16, KeySpace: 100})
			if err != nil {
				t.Fatal(err)
			}
			put.SetDirect(direct)
			rng, err := NewRange([]*clientv3.Client{nil}, RangeConfig{Prefix: DefaultPrefix, KeySize: 8, Keys: 100, Width: 10})
			if err != nil {
				t.Fatal(err)
			}
			rng.SetDirect(direct)
			p, r := put.Worker(0), rng.Worker(0)
			for i := range uint64(3) {
				if out := p(ctx, i); out.Err != nil || out.Sent != int64(len(DefaultPrefix)+8+16) {
					t.Fatalf("put %d: %+v", i, out)
				}
				if out := r(ctx, i); out.Err != nil || out.Keys != 0 {
					t.Fatalf("range %d: %+v", i, out)
				}
			}

			for name, c := range map[string]clientv3.Config{
				"user":  {Endpoints: cfg.Endpoints, Username: "u", Password: "p"},
				"mixed": {Endpoints: []string{"http://a:1", "https://b:2"}},
				"unix":  {Endpoints: []string{"unix://sock"}},
			} {
				if name == "user" && kind == "lean" {
					continue // lean carries a user's tokens (leanrpc's TestEtcdAuth)
				}
				if conn, err := dial(ctx, c); conn != nil || err != nil {
					t.Errorf("%s: gave %v, %v; want clientv3's connection (nil, nil)", name, conn, err)
				}
			}
			short := clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: 200 * time.Millisecond}
			if conn, err := dial(ctx, short); err == nil {
				conn.Close()
				t.Error("dial to a closed port succeeded")
			}
		})
	}
}

// BenchmarkPutNull is the cost of one put request through the request loop to
// an in-process null KV server, by connection: clientv3's (its interceptors and
// gRPC's proto codec) or a direct one. 100 concurrent workers over 10
// connections, as make compare runs. Server-side allocations count too.
func BenchmarkPutNull(b *testing.B) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cfg := clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	clients := make([]*clientv3.Client, 10)
	direct := make([]grpc.ClientConnInterface, 10)
	for i := range clients {
		if clients[i], err = clientv3.New(cfg); err != nil {
			b.Fatal(err)
		}
		defer clients[i].Close()
		conn, err := DialDirect(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		direct[i] = conn
	}
	for _, name := range []string{"clientv3", "direct"} {
		b.Run(name, func(b *testing.B) {
			put, err := NewPut(clients, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 256, KeySpace: 1})
			if err != nil {
				b.Fatal(err)
			}
			if name == "direct" {
				put.SetDirect(direct)
			}
			var ids atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(50) // per GOMAXPROCS: 100 workers on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				op := put.Worker(int(ids.Add(1) - 1))
				var seq uint64
				for pb.Next() {
					if out := op(ctx, seq); out.Err != nil {
						b.Error(out.Err)
						return
					}
					seq++
				}
			})
		})
	}
}

// countingConn counts the calls made on a load connection, by method.
type countingConn struct {
	grpc.ClientConnInterface
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// TestDirectKubeOps runs every workload of the Kubernetes-shaped load over
// direct load connections of each kind to etcd: each unary call its request
// loop makes (txn, list pages, lease grant, keep-alive and revoke, the puts
// beside watchers) goes over the direct connection, and succeeds.
func TestDirectKubeOps(t *testing.T) {
	c, clis := startEtcd(t, 1)
	ctx := context.Background()
	cfg := clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	p := DefaultPrefix
	for _, tc := range []struct {
		name    string
		make    func() (Workload, error)
		methods []string
	}{
		{"txn", func() (Workload, error) {
			return NewTxn(clis, TxnConfig{Prefix: p, KeySize: 4, ValSize: 64, KeySpace: 20, Ops: 1, CreateRatio: 0.2, DeleteRatio: 0.2})
		}, []string{methodTxn}},
		{"list", func() (Workload, error) {
			return NewList(clis, ListConfig{Prefix: p, KeySize: 8, ValSize: 16, Keys: 30, PageSize: 10})
		}, []string{methodRange}},
		{"lease", func() (Workload, error) {
			return NewLease(clis, LeaseConfig{Prefix: p, ValSize: 16, TTL: 60 * time.Second, KeysPerLease: 1, KeepAlives: 1})
		}, []string{methodLeaseGrant, methodPut, methodLeaseRevoke}},
		{"lease-keepalive", func() (Workload, error) { return NewLeaseKeepAlive(clis, 3, 60*time.Second) }, []string{methodLeaseKeepAlive}},
		{"mixed-watched", func() (Workload, error) {
			return NewMixed(clis, MixedConfig{Prefix: p, KeySize: 8, ValSize: 16, KeySpace: 20, ReadRatio: 0.5, Width: 1, Watchers: 2, Streams: 1, WatchedKeys: 5})
		}, []string{methodRange, methodPut}},
		{"watch", func() (Workload, error) {
			return NewWatch(clis, WatchConfig{Prefix: p, KeySize: 8, ValSize: 16, Watchers: 2, Streams: 1, WatchedKeys: 5})
		}, []string{methodPut}},
	} {
		for kind, dial := range dialers {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				cc, err := dial(ctx, cfg)
				if err != nil || cc == nil {
					t.Fatalf("dial: %v, %v", cc, err)
				}
				defer cc.Close()
				w, err := tc.make()
				if err != nil {
					t.Fatal(err)
				}
				counted := &countingConn{ClientConnInterface: cc, calls: map[string]int{}}
				if _, ok := w.(Directed); !ok {
					t.Fatalf("%T takes no direct load connections", w)
				}
				UseDirect(w, []*countingConn{counted})
				var run results.Run
				if err := Run(ctx, Config{Workers: 2, Total: 40, Prefix: p, KV: clis[0]}, w, &run); err != nil {
					t.Fatal(err)
				}
				for _, op := range run.Ops {
					if op.Errors != 0 {
						t.Errorf("%s: %d errors of %d (%v)", op.Op, op.Errors, op.Requests, op.ErrorsByCode)
					}
				}
				for _, m := range tc.methods {
					if counted.calls[m] == 0 {
						t.Errorf("no %s call over the direct connection; calls %v", m, counted.calls)
					}
				}
				if n := prefixCount(t, clis[0], p); n != 0 {
					t.Errorf("%d keys left under %s", n, p)
				}
			})
		}
	}
}
