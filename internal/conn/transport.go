package conn

import (
	"context"
	"fmt"
	"io"
	"strings"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/leanrpc"
)

// The transports that can carry the request loops' calls (--transport).
const (
	// TransportLean is internal/leanrpc (bench.DialDirect): the default.
	TransportLean = "lean"
	// TransportGRPC is clientv3's own client, interceptors and all (kvConn):
	// what a clientv3 application's requests go through.
	TransportGRPC = "grpc"
	// TransportGRPCTuned is gRPC-go without clientv3 (bench.DialTuned): none of
	// its interceptors; what make compare weighs the lean transport against.
	TransportGRPCTuned = "grpc-tuned"
)

// Transports are the values --transport takes.
var Transports = []string{TransportLean, TransportGRPC, TransportGRPCTuned}

// LoadConn is a direct load connection (see Session.Direct).
type LoadConn interface {
	grpc.ClientConnInterface
	io.Closer
}

// DialLoad opens one direct load connection of transport with cfg, and names
// the transport the loops will really use: grpc, a clientv3 client of its own
// (see kvConn), when it is clientv3's or when the connection must stay
// clientv3's (endpoints of mixed or other schemes, see bench.DialDirect;
// grpc-tuned with a user).
func DialLoad(ctx context.Context, transport string, cfg clientv3.Config) (LoadConn, string, error) {
	switch transport {
	case TransportGRPCTuned:
		cc, err := bench.DialTuned(ctx, cfg)
		if err != nil {
			return nil, TransportGRPC, err
		}
		if cc != nil {
			return cc, transport, nil
		}
	case TransportLean, "":
		cc, err := bench.DialDirect(ctx, cfg)
		if err != nil {
			return nil, TransportGRPC, err
		}
		if cc != nil {
			return cc, TransportLean, nil
		}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, TransportGRPC, fmt.Errorf("load connection to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return newKVConn(cli), TransportGRPC, nil
}

// kvConn carries the request loops' calls through clientv3's KV and Lease
// clients (clientv3.RetryKVClient, RetryLeaseClient: what clientv3.KV and
// Lease call), with the call options clientv3's KV gives them (WaitForReady),
// so that they get what an application's get: its interceptor's retry
// policies (repeatable for Range and the lease calls, nonRepeatable for
// writes), its auth tokens, its backoff. Only the building of a clientv3.Op
// per call is skipped. The attempts its retry interceptor makes count in the
// context's leanrpc.Retries.
type kvConn struct {
	cli   *clientv3.Client
	kv    pb.KVClient
	lease pb.LeaseClient
	opts  []grpc.CallOption
}

func newKVConn(cli *clientv3.Client) *kvConn {
	return &kvConn{cli: cli, kv: clientv3.RetryKVClient(cli), lease: clientv3.RetryLeaseClient(cli),
		opts: []grpc.CallOption{grpc.WaitForReady(true)}}
}

// Invoke makes the call through clientv3's client of its method; a method
// it has none for goes over the client's connection as it is.
func (k *kvConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if len(opts) == 0 {
		opts = k.opts
	}
	var n int
	cctx := context.WithValue(ctx, attemptsKey{}, &n)
	var err error
	switch method {
	case "/etcdserverpb.KV/Range":
		err = unary(cctx, k.kv.Range, args, reply, opts)
	case "/etcdserverpb.KV/Put":
		err = unary(cctx, k.kv.Put, args, reply, opts)
	case "/etcdserverpb.KV/Txn":
		err = unary(cctx, k.kv.Txn, args, reply, opts)
	case "/etcdserverpb.KV/DeleteRange":
		err = unary(cctx, k.kv.DeleteRange, args, reply, opts)
	case "/etcdserverpb.Lease/LeaseGrant":
		err = unary(cctx, k.lease.LeaseGrant, args, reply, opts)
	case "/etcdserverpb.Lease/LeaseRevoke":
		err = unary(cctx, k.lease.LeaseRevoke, args, reply, opts)
	default:
		err = k.cli.ActiveConnection().Invoke(cctx, method, args, reply, opts...)
	}
	if r := leanrpc.RetriesFrom(ctx); r != nil && n > 1 {
		r.Add(int64(n - 1))
	}
	return err
}

// unary calls f with args and copies its response into reply.
func unary[Req, Resp any](ctx context.Context, f func(context.Context, *Req, ...grpc.CallOption) (*Resp, error), args, reply any, opts []grpc.CallOption) error {
	req, ok := args.(*Req)
	out, ok2 := reply.(*Resp)
	if !ok || !ok2 {
		return status.Errorf(codes.Internal, "kvConn: %T and %T are not the method's messages", args, reply)
	}
	resp, err := f(ctx, req, opts...)
	if err != nil {
		return err
	}
	*out = *resp
	return nil
}

// NewStream fails: the request loops make unary calls only.
func (k *kvConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "kvConn: unary calls only")
}

// Close closes the connection's client.
func (k *kvConn) Close() error { return k.cli.Close() }

type attemptsKey struct{}

// countAttempts is a unary interceptor inside clientv3's (which gRPC-go runs
// first, being WithUnaryInterceptor's): it counts each attempt of a kvConn
// call.
func countAttempts(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if n, ok := ctx.Value(attemptsKey{}).(*int); ok {
		*n++
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}
