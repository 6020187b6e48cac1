package bench

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

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
		creds, addrs, ok := directTarget(tc.eps, tc.tls)
		if ok != tc.ok {
			t.Errorf("%v: ok %v, want %v", tc.eps, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if secure := creds.Info().SecurityProtocol == "tls"; secure != tc.secure {
			t.Errorf("%v: security %q, want TLS %v", tc.eps, creds.Info().SecurityProtocol, tc.secure)
		}
		if len(addrs) != len(tc.addrs) || addrs[0] != tc.addrs[0] || addrs[len(addrs)-1] != tc.addrs[len(tc.addrs)-1] {
			t.Errorf("%v: addresses %v, want %v", tc.eps, addrs, tc.addrs)
		}
	}
}

// TestGogoCodec checks that the codec writes and reads what gRPC's proto codec
// does, and hands other messages to it.
func TestGogoCodec(t *testing.T) {
	c, std := newGogoCodec(), encoding.GetCodecV2("proto")
	req := &pb.RangeRequest{Key: []byte("/etcdperf/00000001"), RangeEnd: []byte("/etcdperf/00000009"), Limit: 7, Serializable: true}
	ours, err := c.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back pb.RangeRequest
	if err := std.Unmarshal(ours, &back); err != nil || !proto.Equal(protoV2(req), protoV2(&back)) {
		t.Fatalf("proto codec read %+v (%v) from what gogoCodec wrote for %+v", &back, err, req)
	}
	ours.Free()

	resp := &pb.RangeResponse{Header: &pb.ResponseHeader{Revision: 42}, Count: 2, More: true,
		Kvs: []*mvccpb.KeyValue{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: []byte("2")}}}
	wire, err := std.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	// Split in two buffers, as gRPC may hand over a message read in pieces.
	whole := wire.Materialize()
	split := mem.BufferSlice{mem.SliceBuffer(whole[:5]), mem.SliceBuffer(whole[5:])}
	for name, data := range map[string]mem.BufferSlice{"one buffer": wire, "two buffers": split} {
		var got pb.RangeResponse
		if err := c.Unmarshal(data, &got); err != nil || !proto.Equal(protoV2(resp), protoV2(&got)) {
			t.Errorf("%s: gogoCodec read %+v (%v), want %+v", name, &got, err, resp)
		}
	}

	d := durationpb.New(3 * time.Second)
	other, err := c.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var dBack durationpb.Duration
	if err := c.Unmarshal(other, &dBack); err != nil || dBack.AsDuration() != 3*time.Second {
		t.Errorf("fallback round trip: %v, %v", dBack.AsDuration(), err)
	}
}

// protoV2 views a gogo message as protobuf-go's, for proto.Equal.
func protoV2(m protoadapt.MessageV1) proto.Message { return protoadapt.MessageV2Of(m) }

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

// BenchmarkCodecMarshal is the encoding of one put request of make compare's
// shape (8-byte key under the prefix, 256-byte value), by codec; the buffer is
// freed as gRPC frees it after the write.
func BenchmarkCodecMarshal(b *testing.B) {
	req := &pb.PutRequest{Key: []byte(DefaultPrefix + "00000001"), Value: make([]byte, 256)}
	for name, c := range map[string]encoding.CodecV2{"grpc-proto": encoding.GetCodecV2("proto"), "gogo": newGogoCodec()} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := c.Marshal(req)
				if err != nil {
					b.Fatal(err)
				}
				data.Free()
			}
		})
	}
}

// BenchmarkCodecUnmarshal is the decoding of a put response into a reused one.
func BenchmarkCodecUnmarshal(b *testing.B) {
	wire, err := encoding.GetCodecV2("proto").Marshal(&pb.PutResponse{Header: &pb.ResponseHeader{ClusterId: 1, MemberId: 2, Revision: 1 << 20, RaftTerm: 3}})
	if err != nil {
		b.Fatal(err)
	}
	for name, c := range map[string]encoding.CodecV2{"grpc-proto": encoding.GetCodecV2("proto"), "gogo": newGogoCodec()} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			resp := &pb.PutResponse{Header: &pb.ResponseHeader{}}
			for b.Loop() {
				h := resp.Header
				*h = pb.ResponseHeader{}
				*resp = pb.PutResponse{Header: h}
				if err := c.Unmarshal(wire, resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
