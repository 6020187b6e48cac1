package conn

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/leanrpc"
	"github.com/etcdperf/etcdperf/internal/nullkv"
)

// TestDialLoad: each --transport opens its own kind of load connection, and
// names the transport the request loops then use.
func TestDialLoad(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	for _, tc := range []struct {
		transport string
		cfg       clientv3.Config
		conn      bool
		used      string
	}{
		{TransportLean, cfg, true, TransportLean},
		{"", cfg, true, TransportLean}, // a Config without the flag
		{TransportGRPCTuned, cfg, true, TransportGRPCTuned},
		{TransportGRPC, cfg, true, TransportGRPC},
	} {
		cc, used, err := DialLoad(context.Background(), tc.transport, tc.cfg)
		if err != nil || (cc != nil) != tc.conn || used != tc.used {
			t.Errorf("%q (user %q): connection %v, used %q, %v; want a connection %v, %q", tc.transport, tc.cfg.Username, cc != nil, used, err, tc.conn, tc.used)
		}
		if cc == nil {
			continue
		}
		cc.Close()
	}
}

// flakyKV fails the first call of each kind with Unavailable.
type flakyKV struct {
	pb.UnimplementedKVServer
	ranges, puts atomic.Int32
}

func (f *flakyKV) Range(context.Context, *pb.RangeRequest) (*pb.RangeResponse, error) {
	if f.ranges.Add(1) == 1 {
		return nil, rpctypes.ErrGRPCLeaderChanged
	}
	return &pb.RangeResponse{Count: 7}, nil
}

func (f *flakyKV) Put(context.Context, *pb.PutRequest) (*pb.PutResponse, error) {
	if f.puts.Add(1) == 1 {
		return nil, rpctypes.ErrGRPCLeaderChanged
	}
	return &pb.PutResponse{}, nil
}

// TestKVConnRetries: --transport grpc gets clientv3's retry policies: a
// Range that failed with Unavailable is made again (repeatable) and counted
// in the context's Retries, a Put is not (nonRepeatable).
func TestKVConnRetries(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	kv := &flakyKV{}
	pb.RegisterKVServer(srv, kv)
	go srv.Serve(ln)
	defer srv.Stop()
	var c Config
	c.DialTimeout = 5 * time.Second
	cc, used, err := DialLoad(context.Background(), TransportGRPC, c.ClientConfig([]string{ln.Addr().String()}, nil, "", ""))
	if err != nil || used != TransportGRPC {
		t.Fatalf("DialLoad: %v, %s", err, used)
	}
	defer cc.Close()
	var r leanrpc.Retries
	ctx := leanrpc.WithRetries(context.Background(), &r)
	var rr pb.RangeResponse
	if err := cc.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{}, &rr); err != nil || rr.Count != 7 || r.Load() != 1 {
		t.Errorf("range: %v, count %d, %d retries; want the answer after 1 retry", err, rr.Count, r.Load())
	}
	err = cc.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	if status.Code(err) != codes.Unavailable || r.Load() != 1 {
		t.Errorf("put: %v, %d retries in all; want Unavailable and no retry", err, r.Load())
	}
}

// TestDialLoadUser: with --user the lean transport carries the run itself
// (its own auth tokens); grpc-tuned, which has no interceptor for them,
// gives way to clientv3's client. Against an etcd with auth enabled.
func TestDialLoadUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx := context.Background()
	cl := clustertest.Start(t, cluster.Config{})
	cli := clustertest.Client(t, cl)
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	var c Config
	c.DialTimeout = 5 * time.Second
	cfg := c.ClientConfig(cl.Endpoints(), nil, "root", "rootpw")
	for _, tc := range []struct{ transport, used string }{
		{TransportLean, TransportLean},
		{TransportGRPC, TransportGRPC},
		{TransportGRPCTuned, TransportGRPC},
	} {
		cc, used, err := DialLoad(ctx, tc.transport, cfg)
		if err != nil || used != tc.used {
			t.Errorf("%s with a user: %s, %v; want %s", tc.transport, used, err, tc.used)
			continue
		}
		if err := cc.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/user"), Value: []byte("v")}, &pb.PutResponse{}); err != nil {
			t.Errorf("%s: a put with a user: %v", tc.transport, err)
		}
		cc.Close()
	}
}
