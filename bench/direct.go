package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	"github.com/etcdperf/etcdperf/internal/leanrpc"
)

// DialDirect opens one load connection to the endpoints of cfg, balanced over
// them round-robin as etcd's client does, for the request loops of the put and
// range workloads: a lean unary gRPC transport (internal/leanrpc) in place of
// gRPC-go's stream machinery, whose per-call cost (stream set-up, its reader
// and writer goroutines) was most of the generator's CPU. It has none of
// clientv3's interceptors but makes failed calls again as their retry policies
// do (reads on Unavailable, not writes), counted in the request loop's
// leanrpc.Retries and included in the latency. It keeps what the measurement
// needs from clientv3's connection: requests wait for a ready connection (as
// clientv3's WaitForReady; Config.Connected ends a run that lost its cluster),
// a lost connection is dialled again with gRPC's backoff, keepalives, TLS, and
// the message size limits of cfg. It returns once a connection is ready, so no
// request of the run pays for the connection set-up, or with an error after
// cfg.DialTimeout.
//
// With a user it authenticates and sends the token as clientv3 does. It
// returns (nil, nil) when the connection must stay clientv3's: endpoints with
// both http:// and https://, or any other scheme (unix sockets).
func DialDirect(ctx context.Context, cfg clientv3.Config) (*leanrpc.Conn, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, nil
	}
	tlsCfg, addrs, ok := directTarget(cfg.Endpoints, cfg.TLS)
	if !ok {
		return nil, nil
	}
	send, recv := msgLimits(cfg)
	conn, err := leanrpc.Dial(ctx, addrs, leanrpc.Options{
		TLS: tlsCfg, DialTimeout: cfg.DialTimeout, MaxSendMsgSize: send, MaxRecvMsgSize: recv,
		KeepaliveTime: cfg.DialKeepAliveTime, KeepaliveTimeout: cfg.DialKeepAliveTimeout, PermitWithoutStream: cfg.PermitWithoutStream,
		Username: cfg.Username, Password: cfg.Password,
	})
	if err != nil {
		return nil, fmt.Errorf("load connection to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return conn, nil
}

// directTarget is the TLS configuration (nil for plain TCP) and host:port
// addresses of eps, as etcd's client reads them: http:// drops TLS, https://
// needs it, a bare host:port uses TLS when tlsCfg is set. ok is false for a
// mix of http:// and https:// and for other schemes.
func directTarget(eps []string, tlsCfg *tls.Config) (secureCfg *tls.Config, addrs []string, ok bool) {
	var plain, secure bool
	for _, ep := range eps {
		addr, isHTTP := strings.CutPrefix(ep, "http://")
		isHTTPS := false
		if !isHTTP {
			addr, isHTTPS = strings.CutPrefix(ep, "https://")
		}
		switch {
		case isHTTP:
			plain = true
		case isHTTPS:
			secure = true
		case strings.Contains(ep, "://"):
			return nil, nil, false
		case tlsCfg != nil:
			secure = true
		default:
			plain = true
		}
		addrs = append(addrs, strings.TrimSuffix(addr, "/"))
	}
	switch {
	case plain && secure:
		return nil, nil, false
	case secure && tlsCfg == nil:
		return &tls.Config{MinVersion: tls.VersionTLS12}, addrs, true
	case secure:
		return tlsCfg, addrs, true
	}
	return nil, addrs, true
}

// msgLimits are cfg's send and receive limits, clientv3's defaults where unset.
func msgLimits(cfg clientv3.Config) (send, recv int) {
	send, recv = cfg.MaxCallSendMsgSize, cfg.MaxCallRecvMsgSize
	if send == 0 {
		send = 2 * 1024 * 1024 // clientv3's default: etcd's --max-request-bytes plus gRPC overhead
	}
	if recv == 0 {
		recv = math.MaxInt32 // clientv3's default
	}
	return send, recv
}

// DialTuned opens one load connection as DialDirect does, but over gRPC-go
// itself instead of the lean transport: a grpc.ClientConn without clientv3
// (none of its interceptors: no retries, no auth tokens), balanced round-robin
// over the endpoints as clientv3's is, with the settings clientv3 gives its
// connection (keepalive, TLS, message limits) and requests that wait for a
// ready connection. Its write buffer is shared by the connection's streams
// without asking: that is gRPC-go's default in the release this module uses
// (1.83, where grpc.WithSharedWriteBuffer is deprecated for it). It is the cheapest gRPC-go the request loops can have, weighed
// against the lean transport by `make compare`. It declines (nil, nil) where
// DialDirect does, and with a user (auth tokens would need clientv3's
// interceptors).
func DialTuned(ctx context.Context, cfg clientv3.Config) (*grpc.ClientConn, error) {
	if cfg.Username != "" || len(cfg.Endpoints) == 0 {
		return nil, nil
	}
	tlsCfg, addrs, ok := directTarget(cfg.Endpoints, cfg.TLS)
	if !ok {
		return nil, nil
	}
	send, recv := msgLimits(cfg)
	creds := insecure.NewCredentials()
	if tlsCfg != nil {
		creds = credentials.NewTLS(tlsCfg)
	}
	res := manual.NewBuilderWithScheme("etcdperf-tuned")
	state := resolver.State{}
	for _, a := range addrs {
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
	}
	res.InitialState(state)
	opts := []grpc.DialOption{
		grpc.WithResolvers(res),
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true), grpc.MaxCallSendMsgSize(send), grpc.MaxCallRecvMsgSize(recv)),
	}
	if cfg.DialKeepAliveTime > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: cfg.DialKeepAliveTime, Timeout: cfg.DialKeepAliveTimeout, PermitWithoutStream: cfg.PermitWithoutStream,
		}))
	}
	cc, err := grpc.NewClient(res.Scheme()+":///"+addrs[0], opts...)
	if err != nil {
		return nil, fmt.Errorf("load connection to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	// Ready before the run, as DialDirect's: no request pays for the set-up.
	dctx := ctx
	if cfg.DialTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, cfg.DialTimeout)
		defer cancel()
	}
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(dctx, s) {
			cc.Close()
			return nil, fmt.Errorf("load connection to %s: not ready within the dial timeout (%s), last state %s", strings.Join(cfg.Endpoints, ","), cfg.DialTimeout, s)
		}
	}
	return cc, nil
}
