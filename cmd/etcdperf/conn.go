package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/term"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/etcdctl"
	"github.com/etcdperf/etcdperf/measure"
	"github.com/etcdperf/etcdperf/results"
)

// connFlags are etcdctl's connection flags, with the same names and ETCDCTL_* env vars.
type connFlags struct {
	endpoints        []string
	dialTimeout      time.Duration
	cacert           string
	cert             string
	key              string
	insecureSkipTLS  bool
	user             string
	password         string
	dataDir          string
	embeddedMembers  int
	metricsURLs      []string
	keepaliveTime    time.Duration
	keepaliveTimeout time.Duration
	maxRequestBytes  int
	maxRecvBytes     int
	// etcdctl's: a timeout for the short calls (member list, status), TLS without
	// files (--insecure-transport=false), endpoints from DNS SRV records.
	commandTimeout    time.Duration
	insecureTransport bool
	discoverySrv      string
	discoverySrvName  string
	insecureDiscovery bool
	// embeddedArgs are extra etcd flags for every member of an embedded cluster
	// (set by commands, not by a flag).
	embeddedArgs []string
}

// Client message limits as clientv3 (and so etcdctl) has them by default: 2 MiB
// sent, math.MaxInt32 received. gRPC's own receive default is 4 MiB, which a
// large range response exceeds.
const (
	defaultMaxRequestBytes = 2 * 1024 * 1024
	defaultMaxRecvBytes    = math.MaxInt32
)

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.endpoints, "endpoints", nil, "gRPC endpoints (default: start an embedded etcd)")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", 2*time.Second, "dial timeout for client connections")
	fs.StringVar(&c.cacert, "cacert", "", "verify certificates of TLS-enabled secure servers using this CA bundle")
	fs.StringVar(&c.cert, "cert", "", "identify secure client using this TLS certificate file")
	fs.StringVar(&c.key, "key", "", "identify secure client using this TLS key file")
	fs.BoolVar(&c.insecureSkipTLS, "insecure-skip-tls-verify", false, "skip server certificate verification (CAUTION: insecure)")
	fs.StringVar(&c.user, "user", "", "username[:password] for authentication (prompt if password is not supplied)")
	fs.StringVar(&c.password, "password", "", "password for authentication (if this option is used, --user option shouldn't include password)")
	fs.StringVar(&c.dataDir, "data-dir", "", "data dir of the embedded etcd (default: a temp dir, removed afterwards)")
	fs.IntVar(&c.embeddedMembers, "embedded-members", 1, "members of the embedded cluster, 1 to 7 (odd numbers keep a majority; more than 1 runs them as separate processes)")
	fs.StringSliceVar(&c.metricsURLs, "metrics-urls", nil, "URLs of the members' /metrics (default: each member's client URL + /metrics)")
	fs.DurationVar(&c.keepaliveTime, "keepalive-time", 2*time.Second, "keepalive time for client connections")
	fs.DurationVar(&c.keepaliveTimeout, "keepalive-timeout", 6*time.Second, "keepalive timeout for client connections")
	fs.IntVar(&c.maxRequestBytes, "max-request-bytes", 0, "client-side request send limit in bytes (if 0, it defaults to 2.0 MiB (2 * 1024 * 1024).)")
	fs.DurationVar(&c.commandTimeout, "command-timeout", 5*time.Second, "timeout for short running command (excluding dial timeout): member list, status")
	fs.BoolVar(&c.insecureTransport, "insecure-transport", true, "disable transport security for client connections (false: TLS with the system's roots even without --cacert)")
	fs.StringVarP(&c.discoverySrv, "discovery-srv", "d", "", "domain name to query for SRV records describing cluster endpoints (as etcdctl)")
	fs.StringVar(&c.discoverySrvName, "discovery-srv-name", "", "service name to query when using DNS discovery")
	fs.BoolVar(&c.insecureDiscovery, "insecure-discovery", true, "accept insecure SRV records describing cluster endpoints")
	fs.IntVar(&c.maxRecvBytes, "max-recv-bytes", 0, "client-side response receive limit in bytes (if 0, it defaults to \"math.MaxInt32\")")
}

// msgLimits are the send and receive limits of every call, etcdctl's defaults
// where the flags are 0.
func (c *connFlags) msgLimits() (send, recv int) {
	send, recv = c.maxRequestBytes, c.maxRecvBytes
	if send == 0 {
		send = defaultMaxRequestBytes
	}
	if recv == 0 {
		recv = defaultMaxRecvBytes
	}
	return send, recv
}

func (c *connFlags) validate() error {
	if c.dialTimeout <= 0 {
		return usageErr(fmt.Errorf("--dial-timeout must be positive, got %s", c.dialTimeout))
	}
	if c.maxRequestBytes < 0 || c.maxRecvBytes < 0 {
		return usageErr(fmt.Errorf("--max-request-bytes and --max-recv-bytes must not be negative, got %d and %d", c.maxRequestBytes, c.maxRecvBytes))
	}
	if c.embeddedMembers < 1 || c.embeddedMembers > 7 {
		return usageErr(fmt.Errorf("--embedded-members must be between 1 and 7, got %d", c.embeddedMembers))
	}
	if (c.cert == "") != (c.key == "") {
		return usageErr(errors.New("--cert and --key go together"))
	}
	if len(c.endpoints) > 0 && c.dataDir != "" {
		return usageErr(errors.New("--data-dir is for the embedded etcd; it cannot be used with --endpoints"))
	}
	for _, f := range []struct{ flag, path string }{{"--cacert", c.cacert}, {"--cert", c.cert}, {"--key", c.key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return usageErr(fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	return nil
}

// target is a connected cluster (see measure.Target) that cmd can close.
type target struct {
	measure.Target
	// Direct are the load connections of the put and range request loops
	// (bench.DialDirect), one per --conns; none when the clients' own are used.
	Direct []*grpc.ClientConn
}

// Close releases the client and stops the embedded cluster, if any.
func (t *target) Close() {
	if t.Client != nil {
		t.Client.Close()
	}
	if t.Cluster != nil {
		t.Cluster.Close()
	}
}

// connect reaches the cluster named by the flags or, when none is named, starts an
// embedded one. It fails within the dial timeout when no endpoint answers.
func (a *app) connect(ctx context.Context) (*target, error) {
	c := &a.conn
	t := &target{}
	eps := c.endpoints
	if c.discoverySrv != "" {
		// As etcdctl: discovered endpoints first, --endpoints when none are found.
		found, err := etcdctl.Lookup(c.discoverySrv, c.discoverySrvName, c.insecureDiscovery, a.stderr)
		if err != nil && len(eps) == 0 {
			return nil, usageErr(err)
		}
		if len(found) > 0 {
			eps = found
		}
	}
	if len(eps) == 0 {
		// A separate process, so the generator's own CPU and memory are measured
		// apart from the server's and the server's metrics are its own.
		cl, err := cluster.Start(ctx, cluster.Config{Dir: c.dataDir, Members: c.embeddedMembers, Processes: true, ExtraArgs: c.embeddedArgs})
		if err != nil {
			return nil, err
		}
		t.Cluster = cl
		eps = cl.Endpoints()
		fmt.Fprintf(a.stderr, "etcdperf: no --endpoints given; started an embedded etcd %s (%d member(s)) at %s, data in %s (removed afterwards)\n",
			embeddedEtcdVersion(), len(eps), strings.Join(eps, ","), cl.Dir())
		t.Info.Embedded = true
	}
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		t.Close()
		return nil, err
	}
	user, pass, err := c.credentials(a)
	if err != nil {
		t.Close()
		return nil, err
	}
	cfg := c.clientConfig(eps, tlsCfg, user, pass)
	// gRPC's blocking dial says only "context deadline exceeded" whatever went
	// wrong, and only once the dial timeout has passed; a probe names the cause
	// (refused, a certificate, a server that never answers) at once.
	if err := probeEndpoints(ctx, eps, tlsCfg, c.dialTimeout); err != nil {
		t.Close()
		return nil, err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("cannot reach etcd at %s: %w", strings.Join(eps, ","), err)
	}
	t.Client = cli
	if err := t.describe(ctx, eps, c.commandTimeout); err != nil {
		t.Close()
		return nil, err
	}
	t.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	t.MetricsURLs = c.metricsURLs
	if len(t.MetricsURLs) == 0 {
		for _, m := range t.Info.Members {
			if len(m.ClientURLs) > 0 {
				t.MetricsURLs = append(t.MetricsURLs, strings.TrimSuffix(m.ClientURLs[0], "/")+"/metrics")
			}
		}
	}
	return t, nil
}

// openLoad connects (or starts the embedded etcd) and opens conns clients to
// drive load with: the target's own and conns-1 more, each with its own gRPC
// connection. release closes them all and stops an embedded cluster.
func (a *app) openLoad(ctx context.Context, conns int) (t *target, clis []*clientv3.Client, release func(), err error) {
	t, err = a.connect(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	clis, err = a.benchClients(t, conns)
	if err != nil {
		t.Close()
		return nil, nil, nil, err
	}
	release = func() {
		for _, c := range t.Direct {
			c.Close()
		}
		for _, c := range clis[1:] {
			c.Close()
		}
		t.Close()
	}
	if t.Direct, err = a.directConns(ctx, t, conns); err != nil {
		release()
		return nil, nil, nil, err
	}
	return t, clis, release, nil
}

// directConns opens conns direct load connections (bench.DialDirect) with the
// configuration of the clients; none when they must stay clientv3's.
func (a *app) directConns(ctx context.Context, t *target, conns int) ([]*grpc.ClientConn, error) {
	tlsCfg, err := a.conn.tlsConfig()
	if err != nil {
		return nil, err
	}
	cfg := a.conn.clientConfig(t.Info.Endpoints, tlsCfg, t.Client.Username, t.Client.Password)
	var out []*grpc.ClientConn
	for range conns {
		c, err := bench.DialDirect(ctx, cfg)
		if err != nil || c == nil {
			for _, c := range out {
				c.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// describe fills t.Info from the member list and each endpoint's status.
func (t *target) describe(ctx context.Context, eps []string, timeout time.Duration) error {
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

// probeEndpoints connects to every endpoint as gRPC would, concurrently, and
// fails when none answers, with the first endpoint's cause. An endpoint it
// cannot judge (a unix socket) counts as answering.
func probeEndpoints(ctx context.Context, eps []string, tlsCfg *tls.Config, timeout time.Duration) error {
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { errs[i] = probeEndpoint(ctx, ep, tlsCfg, timeout) })
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("cannot reach etcd at %s: %w", eps[0], errs[0])
}

// http2Preface is a client's HTTP/2 connection preface and an empty SETTINGS
// frame: a gRPC server answers it with a SETTINGS frame of its own.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// probeEndpoint opens a TCP connection to ep, does the TLS handshake when tlsCfg
// is set and sends the HTTP/2 preface: a server that rejects the client's
// certificate says so only then (TLS 1.3 finishes the client's handshake before
// the server checks it), and a stalled server never answers.
func probeEndpoint(ctx context.Context, ep string, tlsCfg *tls.Config, timeout time.Duration) error {
	addr, ok := strings.CutPrefix(ep, "https://")
	if !ok {
		if addr, ok = strings.CutPrefix(ep, "http://"); ok {
			tlsCfg = nil // etcd's client drops TLS for http:// endpoints
		}
	}
	if !ok && strings.Contains(ep, "://") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no TCP connection within the dial timeout (%s)", timeout)
		}
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stalled := fmt.Errorf("connected, but no answer within the dial timeout (%s): is the server stalled, or not etcd?", timeout)
	if tlsCfg != nil {
		cfg := tlsCfg.Clone()
		cfg.NextProtos = []string{"h2"} // as gRPC: without it the server speaks HTTP/1.1
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return tlsCause(err, stalled)
		}
		conn = tc
	}
	if _, err := io.WriteString(conn, http2Preface); err != nil {
		return tlsCause(err, stalled)
	}
	head := make([]byte, 9)
	if _, err := io.ReadFull(conn, head); err != nil {
		if tlsCfg == nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			return errors.New("the server closed the connection: if it serves TLS, name it https:// (with --cacert)")
		}
		return tlsCause(err, stalled)
	}
	if head[3] != 0x4 { // not a SETTINGS frame
		return errors.New("the server does not speak gRPC (HTTP/2): is this etcd's client URL?")
	}
	return nil
}

// tlsCause turns what a probe saw into a cause a user can act on.
func tlsCause(err, stalled error) error {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	var opErr *net.OpError
	remote := errors.As(err, &opErr) && opErr.Op == "remote error" // a TLS alert from the server
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return stalled
	case errors.As(err, &unknownCA):
		return errors.New("x509: certificate signed by unknown authority: the server's certificate is not signed by the CA of --cacert (or the system's, without --cacert)")
	case errors.As(err, &hostErr):
		return fmt.Errorf("%w: name the endpoint as the certificate does", hostErr)
	case remote && strings.HasSuffix(err.Error(), "certificate required"):
		return errors.New("the server requires a client certificate: pass --cert and --key")
	case remote:
		return fmt.Errorf("the server rejected the client certificate of --cert: %w", err)
	case strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
		return errors.New("the server does not speak TLS: name it http://, or drop the TLS flags")
	}
	return err
}

// clientConfig is the client configuration of every connection to the cluster.
func (c *connFlags) clientConfig(eps []string, tlsCfg *tls.Config, user, pass string) clientv3.Config {
	send, recv := c.msgLimits()
	return clientv3.Config{
		Endpoints:            eps,
		DialTimeout:          c.dialTimeout,
		DialKeepAliveTime:    c.keepaliveTime,
		DialKeepAliveTimeout: c.keepaliveTimeout,
		TLS:                  tlsCfg,
		Username:             user,
		Password:             pass,
		Logger:               zap.NewNop(),
		//lint:ignore SA1019 fail fast on unreachable endpoints, as etcdctl does (grpc-go keeps WithBlock throughout 1.x)
		// The limits as default call options too: bench's request loops call the
		// raw KV stub on the connection, which clientv3's per-call options miss.
		DialOptions: []grpc.DialOption{grpc.WithBlock(),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(send), grpc.MaxCallRecvMsgSize(recv))},
		MaxCallSendMsgSize: send,
		MaxCallRecvMsgSize: recv,
	}
}

func (c *connFlags) tlsConfig() (*tls.Config, error) {
	if c.cacert == "" && c.cert == "" && !c.insecureSkipTLS && !anyHTTPS(c.endpoints) && c.insecureTransport {
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: c.cacert, CertFile: c.cert, KeyFile: c.key, InsecureSkipVerify: c.insecureSkipTLS}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, usageErr(fmt.Errorf("TLS files (--cacert, --cert, --key): %w", err))
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

// credentials splits --user name:password; a missing password comes from --password,
// ETCDCTL_PASSWORD (already mapped onto --password) or a prompt on a terminal.
func (c *connFlags) credentials(a *app) (string, string, error) {
	if c.user == "" {
		return "", "", nil
	}
	user, pass, hasPass := strings.Cut(c.user, ":")
	if hasPass && c.password != "" {
		return "", "", usageErr(errors.New("--password cannot be used when --user includes a password"))
	}
	if !hasPass {
		pass = c.password
	}
	if pass == "" && !hasPass {
		if a.stdin == nil || !term.IsTerminal(int(a.stdin.Fd())) {
			return "", "", usageErr(errors.New("--user needs a password: use user:password, --password, ETCDCTL_PASSWORD, or run on a terminal to be prompted"))
		}
		fmt.Fprint(a.stderr, "Password: ")
		b, err := term.ReadPassword(int(a.stdin.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", "", fmt.Errorf("read password: %w", err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	}
	return user, pass, nil
}

// embeddedEtcdVersion is the etcd release linked into this binary.
func embeddedEtcdVersion() string { return version.Version }
