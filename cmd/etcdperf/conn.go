package main

import (
	"context"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/conn"
)

// connFlags are etcdctl's connection flags, with the same names and ETCDCTL_* env vars.
type connFlags struct{ conn.Config }

// target is a connected cluster.
type target = conn.Session

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Endpoints, "endpoints", nil, "gRPC endpoints (default: start an embedded etcd)")
	fs.DurationVar(&c.DialTimeout, "dial-timeout", 2*time.Second, "dial timeout for client connections")
	fs.StringVar(&c.CACert, "cacert", "", "verify certificates of TLS-enabled secure servers using this CA bundle")
	fs.StringVar(&c.Cert, "cert", "", "identify secure client using this TLS certificate file")
	fs.StringVar(&c.Key, "key", "", "identify secure client using this TLS key file")
	fs.BoolVar(&c.InsecureSkipTLS, "insecure-skip-tls-verify", false, "skip server certificate verification (CAUTION: insecure)")
	fs.StringVar(&c.User, "user", "", "username[:password] for authentication (prompt if password is not supplied)")
	fs.StringVar(&c.Password, "password", "", "password for authentication (if this option is used, --user option shouldn't include password)")
	fs.StringVar(&c.DataDir, "data-dir", "", "data dir of the embedded etcd (default: a temp dir, removed afterwards)")
	fs.IntVar(&c.EmbeddedMembers, "embedded-members", 1, "members of the embedded cluster, 1 to 7 (odd numbers keep a majority; more than 1 runs them as separate processes)")
	fs.StringSliceVar(&c.MetricsURLs, "metrics-urls", nil, "URLs of the members' /metrics (default: each member's client URL + /metrics)")
	fs.DurationVar(&c.KeepaliveTime, "keepalive-time", 2*time.Second, "keepalive time for client connections")
	fs.DurationVar(&c.KeepaliveTimeout, "keepalive-timeout", 6*time.Second, "keepalive timeout for client connections")
	fs.IntVar(&c.MaxRequestBytes, "max-request-bytes", 0, "client-side request send limit in bytes (if 0, it defaults to 2.0 MiB (2 * 1024 * 1024).)")
	fs.DurationVar(&c.CommandTimeout, "command-timeout", bench.DefaultCommandTimeout, "timeout for short running command (excluding dial timeout): member list, status")
	fs.BoolVar(&c.InsecureTransport, "insecure-transport", true, "disable transport security for client connections (false: TLS with the system's roots even without --cacert)")
	fs.StringVarP(&c.DiscoverySrv, "discovery-srv", "d", "", "domain name to query for SRV records describing cluster endpoints (as etcdctl)")
	fs.StringVar(&c.DiscoverySrvName, "discovery-srv-name", "", "service name to query when using DNS discovery")
	fs.BoolVar(&c.InsecureDiscovery, "insecure-discovery", true, "accept insecure SRV records describing cluster endpoints")
	fs.IntVar(&c.MaxRecvBytes, "max-recv-bytes", 0, "client-side response receive limit in bytes (if 0, it defaults to \"math.MaxInt32\")")
	fs.StringVar(&c.Transport, "transport", conn.TransportLean, "what carries the load's requests: lean (etcdperf's own HTTP/2 client), grpc (clientv3's connection, as applications have it) or grpc-tuned (gRPC-go without clientv3's interceptors)")
}

// connect reaches the cluster named by the flags or starts an embedded one (conn.Connect).
func (a *app) connect(ctx context.Context) (*target, error) {
	return conn.Connect(ctx, &a.conn.Config, a.stdin, a.stderr)
}

// openLoad connects and opens conns load clients (conn.OpenLoad).
func (a *app) openLoad(ctx context.Context, conns int) (*target, []*clientv3.Client, func(), error) {
	return conn.OpenLoad(ctx, &a.conn.Config, a.stdin, a.stderr, conns)
}

// embeddedEtcdVersion is the etcd release linked into this binary.
func embeddedEtcdVersion() string { return version.Version }
