// Package conn reaches the cluster as etcdctl does from its connection flags:
// the client configuration and TLS they describe, the credentials (prompted on a
// terminal), endpoints from DNS SRV records, an embedded etcd when no endpoint
// is named, a probe that names why an endpoint cannot be reached, and the extra
// connections a load is spread over.
package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/term"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/etcdctl"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/results"
)

// Config is etcdctl's connection flags (same names, same ETCDCTL_* variables),
// plus what an embedded cluster is started with.
type Config struct {
	Endpoints        []string
	DialTimeout      time.Duration
	CACert           string
	Cert             string
	Key              string
	InsecureSkipTLS  bool
	User             string
	Password         string
	DataDir          string
	EmbeddedMembers  int
	MetricsURLs      []string
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration
	MaxRequestBytes  int
	MaxRecvBytes     int
	// etcdctl's: a timeout for the short calls (member list, status), TLS without
	// files (InsecureTransport false), endpoints from DNS SRV records.
	CommandTimeout    time.Duration
	InsecureTransport bool
	DiscoverySrv      string
	DiscoverySrvName  string
	InsecureDiscovery bool
	// Transport carries the request loops' calls: TransportLean (the default
	// when empty), TransportGRPC or TransportGRPCTuned.
	Transport string
	// EmbeddedArgs are extra etcd flags for every member of an embedded cluster
	// (set by commands, not by a flag).
	EmbeddedArgs []string
}

// Client message limits as clientv3 (and so etcdctl) has them by default: 2 MiB
// sent, math.MaxInt32 received. gRPC's own receive default is 4 MiB, which a
// large range response exceeds.
const (
	DefaultMaxRequestBytes = 2 * 1024 * 1024
	DefaultMaxRecvBytes    = math.MaxInt32
)

// msgLimits are the send and receive limits of every call, etcdctl's defaults
// where the flags are 0.
func (c *Config) msgLimits() (send, recv int) {
	send, recv = c.MaxRequestBytes, c.MaxRecvBytes
	if send == 0 {
		send = DefaultMaxRequestBytes
	}
	if recv == 0 {
		recv = DefaultMaxRecvBytes
	}
	return send, recv
}

// Validate refuses flags that cannot work together or name missing files.
func (c *Config) Validate() error {
	if c.DialTimeout <= 0 {
		return fmt.Errorf("--dial-timeout must be positive, got %s", c.DialTimeout)
	}
	if c.MaxRequestBytes < 0 || c.MaxRecvBytes < 0 {
		return fmt.Errorf("--max-request-bytes and --max-recv-bytes must not be negative, got %d and %d", c.MaxRequestBytes, c.MaxRecvBytes)
	}
	if c.EmbeddedMembers < 1 || c.EmbeddedMembers > 7 {
		return fmt.Errorf("--embedded-members must be between 1 and 7, got %d", c.EmbeddedMembers)
	}
	if (c.Cert == "") != (c.Key == "") {
		return errors.New("--cert and --key go together")
	}
	if len(c.Endpoints) > 0 && c.DataDir != "" {
		return errors.New("--data-dir is for the embedded etcd; it cannot be used with --endpoints")
	}
	for _, f := range []struct{ flag, path string }{{"--cacert", c.CACert}, {"--cert", c.Cert}, {"--key", c.Key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

// ClientConfig is the client configuration of every connection to the cluster.
func (c *Config) ClientConfig(eps []string, tlsCfg *tls.Config, user, pass string) clientv3.Config {
	send, recv := c.msgLimits()
	return clientv3.Config{
		Endpoints:            eps,
		DialTimeout:          c.DialTimeout,
		DialKeepAliveTime:    c.KeepaliveTime,
		DialKeepAliveTimeout: c.KeepaliveTimeout,
		TLS:                  tlsCfg,
		Username:             user,
		Password:             pass,
		Logger:               zap.NewNop(),
		//lint:ignore SA1019 fail fast on unreachable endpoints, as etcdctl does (grpc-go keeps WithBlock throughout 1.x)
		// The limits as default call options too: bench's request loops call the
		// raw KV stub on the connection, which clientv3's per-call options miss.
		DialOptions: []grpc.DialOption{grpc.WithBlock(),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(send), grpc.MaxCallRecvMsgSize(recv)),
			grpc.WithChainUnaryInterceptor(countAttempts)},
		MaxCallSendMsgSize: send,
		MaxCallRecvMsgSize: recv,
	}
}

// TLSConfig is the client's TLS: nil for plain connections (no TLS flag, no
// https:// endpoint, the default --insecure-transport).
func (c *Config) TLSConfig() (*tls.Config, error) {
	if c.CACert == "" && c.Cert == "" && !c.InsecureSkipTLS && !anyHTTPS(c.Endpoints) && c.InsecureTransport {
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: c.CACert, CertFile: c.Cert, KeyFile: c.Key, InsecureSkipVerify: c.InsecureSkipTLS}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("TLS files (--cacert, --cert, --key): %w", err)
	}
	return cfg, nil
}

func anyHTTPS(eps []string) bool {
	for _, e := range eps {
		if strings.HasPrefix(e, "https://") {
			return true
		}
	}
	return false
}

// Credentials splits --user name:password; a missing password comes from
// --password, ETCDCTL_PASSWORD (already mapped onto --password) or a prompt on
// stderr when stdin is a terminal.
func (c *Config) Credentials(stdin *os.File, stderr io.Writer) (string, string, error) {
	if c.User == "" {
		return "", "", nil
	}
	user, pass, hasPass := strings.Cut(c.User, ":")
	if hasPass && c.Password != "" {
		return "", "", errors.New("--password cannot be used when --user includes a password")
	}
	if !hasPass {
		pass = c.Password
	}
	if pass == "" && !hasPass {
		if stdin == nil || !term.IsTerminal(int(stdin.Fd())) {
			return "", "", errors.New("--user needs a password: use user:password, --password, ETCDCTL_PASSWORD, or run on a terminal to be prompted")
		}
		fmt.Fprint(stderr, "Password: ")
		b, err := term.ReadPassword(int(stdin.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", "", fmt.Errorf("read password: %w", err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	}
	return user, pass, nil
}

// Session is a connected cluster (see measure.ClusterConn) that can be closed.
type Session struct {
	measure.ClusterConn
	// Direct are the load connections of the request loops (bench.DialDirect
	// or bench.DialTuned, as Config.Transport says), one per load connection;
	// none when the clients' own are used.
	Direct []LoadConn
	// Transport is what carries the request loops' calls (TransportLean,
	// TransportGRPC or TransportGRPCTuned); empty when no load was opened.
	Transport string
}

// Close releases the client and stops the embedded cluster, if any.
func (t *Session) Close() {
	if t.Client != nil {
		t.Client.Close()
	}
	if t.Cluster != nil {
		t.Cluster.Close()
	}
}

// Connect reaches the cluster c names or, when it names none, starts an embedded
// one (saying so on stderr). It fails within the dial timeout when no endpoint
// answers. stdin is where a password is prompted for.
func Connect(ctx context.Context, c *Config, stdin *os.File, stderr io.Writer) (*Session, error) {
	t := &Session{}
	eps := c.Endpoints
	if c.DiscoverySrv != "" {
		// As etcdctl: discovered endpoints first, --endpoints when none are found.
		found, err := etcdctl.Lookup(c.DiscoverySrv, c.DiscoverySrvName, c.InsecureDiscovery, stderr)
		if err != nil && len(eps) == 0 {
			return nil, err
		}
		if len(found) > 0 {
			eps = found
		}
	}
	if len(eps) == 0 {
		// A separate process, so the generator's own CPU and memory are measured
		// apart from the server's and the server's metrics are its own.
		cl, err := cluster.Start(ctx, cluster.Config{Dir: c.DataDir, Members: c.EmbeddedMembers, Processes: true, ExtraArgs: c.EmbeddedArgs})
		if err != nil {
			return nil, err
		}
		t.Cluster = cl
		eps = cl.Endpoints()
		fmt.Fprintf(stderr, "etcdperf: no --endpoints given; started an embedded etcd %s (%d member(s)) at %s, data in %s (removed afterwards)\n",
			version.Version, len(eps), strings.Join(eps, ","), cl.Dir())
		t.Info.Embedded = true
	}
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		t.Close()
		return nil, err
	}
	user, pass, err := c.Credentials(stdin, stderr)
	if err != nil {
		t.Close()
		return nil, err
	}
	cfg := c.ClientConfig(eps, tlsCfg, user, pass)
	// gRPC's blocking dial says only "context deadline exceeded" whatever went
	// wrong, and only once the dial timeout has passed; a probe names the cause
	// (refused, a certificate, a server that never answers) at once.
	if err := Probe(ctx, eps, tlsCfg, c.DialTimeout); err != nil {
		t.Close()
		return nil, err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("cannot reach etcd at %s: %w", strings.Join(eps, ","), err)
	}
	t.Client = cli
	if err := t.describe(ctx, eps, c.CommandTimeout); err != nil {
		t.Close()
		return nil, err
	}
	t.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	t.TLS = tlsCfg
	t.MetricsURLs = c.MetricsURLs
	if len(t.MetricsURLs) == 0 {
		for _, m := range t.Info.Members {
			if len(m.ClientURLs) > 0 {
				t.MetricsURLs = append(t.MetricsURLs, strings.TrimSuffix(m.ClientURLs[0], "/")+"/metrics")
			}
		}
	}
	return t, nil
}

// describe fills t.Info from the member list and each endpoint's status.
func (t *Session) describe(ctx context.Context, eps []string, timeout time.Duration) error {
	t.Info.Endpoints = eps
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ml, err := t.Client.MemberList(cctx)
	if err != nil {
		return fmt.Errorf("cannot list members at %s: %w", strings.Join(eps, ","), err)
	}
	t.Info.ClusterID = fmt.Sprintf("%x", ml.Header.ClusterId)
	var leader uint64
	for _, ep := range eps {
		st, err := t.Client.Status(cctx, ep)
		if err != nil {
			return fmt.Errorf("cannot reach etcd at %s: %w", ep, err)
		}
		t.Info.ServerVersion = st.Version
		leader = st.Leader
	}
	for _, m := range ml.Members {
		t.Info.Members = append(t.Info.Members, results.Member{
			ID: fmt.Sprintf("%x", m.ID), Name: m.Name, ClientURLs: m.ClientURLs, PeerURLs: m.PeerURLs,
			IsLeader: m.ID == leader, IsLearner: m.IsLearner,
		})
	}
	return nil
}
