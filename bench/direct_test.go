package bench

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/internal/nullkv"
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

// TestDirectWorkers runs the put and range request loops over direct load
// connections to the null KV server, and checks when DialDirect declines.
func TestDirectWorkers(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cfg := clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	conn, err := DialDirect(ctx, cfg)
	if err != nil || conn == nil {
		t.Fatalf("DialDirect: %v, %v", conn, err)
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
		if conn, err := DialDirect(ctx, c); conn != nil || err != nil {
			t.Errorf("%s: DialDirect gave %v, %v; want clientv3's connection (nil, nil)", name, conn, err)
		}
	}
	short := clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: 200 * time.Millisecond}
	if conn, err := DialDirect(ctx, short); err == nil {
		conn.Close()
		t.Error("DialDirect to a closed port succeeded")
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
