package conn

import (
	"context"
	"io"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/internal/bench"
)

// The transports that can carry the request loops' calls (--transport).
const (
	// TransportLean is internal/leanrpc (bench.DialDirect): the default.
	TransportLean = "lean"
	// TransportGRPC is clientv3's own connection, interceptors and all: what a
	// clientv3 application's requests go through.
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
// the transport the loops will really use: grpc, with no connection, when it
// is clientv3's or when the connection must stay clientv3's (a user's auth
// tokens, endpoints of mixed or other schemes: see bench.DialDirect).
func DialLoad(ctx context.Context, transport string, cfg clientv3.Config) (LoadConn, string, error) {
	switch transport {
	case TransportGRPCTuned:
		cc, err := bench.DialTuned(ctx, cfg)
		if err != nil || cc == nil {
			return nil, TransportGRPC, err
		}
		return cc, transport, nil
	case TransportGRPC:
		return nil, TransportGRPC, nil
	}
	cc, err := bench.DialDirect(ctx, cfg)
	if err != nil || cc == nil {
		return nil, TransportGRPC, err
	}
	return cc, TransportLean, nil
}
