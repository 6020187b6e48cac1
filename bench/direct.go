package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/leanrpc"
)

// DialDirect opens one load connection to the endpoints of cfg, balanced over
// them round-robin as etcd's client does, for the request loops of the put and
// range workloads: a lean unary gRPC transport (internal/leanrpc) in place of
// gRPC-go's stream machinery, whose per-call cost (stream set-up, its reader
// and writer goroutines) was most of the generator's CPU. It has none of
// clientv3's interceptors: a request that fails is an error of that request,
// never retried behind the measurement's back. It keeps what the measurement
// needs from clientv3's connection: requests wait for a ready connection (as
// clientv3's WaitForReady; Config.Connected ends a run that lost its cluster),
// a lost connection is dialled again with gRPC's backoff, keepalives, TLS, and
// the message size limits of cfg. It returns once a connection is ready, so no
// request of the run pays for the connection set-up, or with an error after
// cfg.DialTimeout.
//
// It returns (nil, nil) when the connection must stay clientv3's: with a user
// (auth tokens come from clientv3's interceptors), endpoints with both http://
// and https://, or any other scheme (unix sockets).
func DialDirect(ctx context.Context, cfg clientv3.Config) (*leanrpc.Conn, error) {
	if cfg.Username != "" || len(cfg.Endpoints) == 0 {
		return nil, nil
	}
	tlsCfg, addrs, ok := directTarget(cfg.Endpoints, cfg.TLS)
	if !ok {
		return nil, nil
	}
	send, recv := cfg.MaxCallSendMsgSize, cfg.MaxCallRecvMsgSize
	if send == 0 {
		send = 2 * 1024 * 1024 // clientv3's default: etcd's --max-request-bytes plus gRPC overhead
	}
	if recv == 0 {
		recv = math.MaxInt32 // clientv3's default
	}
	conn, err := leanrpc.Dial(ctx, addrs, leanrpc.Options{
		TLS: tlsCfg, DialTimeout: cfg.DialTimeout, MaxSendMsgSize: send, MaxRecvMsgSize: recv,
		KeepaliveTime: cfg.DialKeepAliveTime, KeepaliveTimeout: cfg.DialKeepAliveTimeout, PermitWithoutStream: cfg.PermitWithoutStream,
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
