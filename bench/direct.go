package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// The direct connections keep gRPC's transport defaults (32 KiB write and read
// buffers, dynamic flow-control windows): each alternative was measured on its
// own, whole-process client CPU per put (bench put --conns 10 --clients 100
// against the null KV server, 5 alternating runs of 30,000 on a busy 2-core
// host): no write buffer cost ~50% more (a write syscall per frame); 128 KiB
// write or read buffers, a 4 KiB read buffer and static 1 MiB windows were all
// within the noise of the defaults (±15%).

// DialDirect opens one load connection to the endpoints of cfg, balanced over
// them round-robin as etcd's client does, for the request loops of the put and
// range workloads. It has none of clientv3's interceptors: a request that fails
// is an error of that request, never retried behind the measurement's back. It
// keeps what the measurement needs from clientv3's connection: requests wait
// for a ready connection (as clientv3's WaitForReady; Config.Connected ends a
// run that lost its cluster), keepalives, TLS, and the message size limits of
// cfg. It returns once the connection is ready, so no request of the run pays
// for the connection set-up, or with an error after cfg.DialTimeout.
//
// It returns (nil, nil) when the connection must stay clientv3's: with a user
// (auth tokens come from clientv3's interceptors), endpoints with both http://
// and https://, or any other scheme (unix sockets).
func DialDirect(ctx context.Context, cfg clientv3.Config) (*grpc.ClientConn, error) {
	if cfg.Username != "" || len(cfg.Endpoints) == 0 {
		return nil, nil
	}
	creds, addrs, ok := directTarget(cfg.Endpoints, cfg.TLS)
	if !ok {
		return nil, nil
	}
	// A manual resolver gives the connection every endpoint at once; names are
	// resolved when the subconnections dial, as clientv3's own resolver does.
	r := manual.NewBuilderWithScheme("etcdperf-direct")
	state := resolver.State{}
	for _, a := range addrs {
		state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	r.InitialState(state)
	send, recv := cfg.MaxCallSendMsgSize, cfg.MaxCallRecvMsgSize
	if send == 0 {
		send = 2 * 1024 * 1024 // clientv3's default: etcd's --max-request-bytes plus gRPC overhead
	}
	if recv == 0 {
		recv = math.MaxInt32 // clientv3's default
	}
	opts := []grpc.DialOption{
		grpc.WithResolvers(r),
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(balancing(len(addrs))),
		// gRPC's own retry buffers every request for a possible replay; the
		// measurement wants none.
		grpc.WithDisableRetry(),
		grpc.WithDefaultCallOptions(
			grpc.WaitForReady(true),
			grpc.MaxCallSendMsgSize(send),
			grpc.MaxCallRecvMsgSize(recv),
			grpc.ForceCodecV2(newGogoCodec()),
		),
	}
	if cfg.DialKeepAliveTime > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: cfg.DialKeepAliveTime, Timeout: cfg.DialKeepAliveTimeout, PermitWithoutStream: cfg.PermitWithoutStream,
		}))
	}
	conn, err := grpc.NewClient(r.Scheme()+":///"+strings.Join(addrs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("load connection to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	timeout := cfg.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if err := awaitReady(ctx, conn, timeout); err != nil {
		conn.Close()
		return nil, fmt.Errorf("load connection to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return conn, nil
}

// balancing is the service config of a connection to n endpoints: round-robin
// over several, as etcd's client; pick_first for one, whose picker is a
// constant where round_robin's picks through a child balancer per endpoint.
func balancing(n int) string {
	if n == 1 {
		return `{"loadBalancingConfig":[{"pick_first":{}}]}`
	}
	return `{"loadBalancingConfig":[{"round_robin":{}}]}`
}

// directTarget is the credentials and host:port addresses of eps, as etcd's
// client reads them: http:// drops TLS, https:// needs it, a bare host:port
// uses TLS when tlsCfg is set. ok is false for a mix of http:// and https://
// and for other schemes.
func directTarget(eps []string, tlsCfg *tls.Config) (creds credentials.TransportCredentials, addrs []string, ok bool) {
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
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		fallthrough
	case secure:
		return credentials.NewTLS(tlsCfg), addrs, true
	}
	return insecure.NewCredentials(), addrs, true
}

// awaitReady connects conn and waits until it is ready, for at most timeout.
func awaitReady(ctx context.Context, conn *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			return fmt.Errorf("not ready within the dial timeout (%s): %s", timeout, s)
		}
	}
}
