// Package cluster starts the etcd that etcdperf measures when the user names no
// endpoints, and that the tests measure: a real etcd on 127.0.0.1 in a temp dir,
// either in this process (go.etcd.io/etcd/server/v3/embed) or as separate
// processes of the very same etcd release (this binary re-executed as etcd), so
// that members have their own metrics and can be stopped, killed or limited by
// cgroups one by one.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdmain"
)

// execEnv marks a re-executed copy of this binary that must run etcd instead.
const execEnv = "ETCDPERF_EXEC_ETCD"

// MaybeRunEtcd turns this process into an etcd server when it was started by
// Start in process mode. Call it first thing in main and in TestMain.
func MaybeRunEtcd() {
	if os.Getenv(execEnv) != "1" {
		return
	}
	etcdmain.Main(append([]string{"etcd"}, os.Args[1:]...))
	os.Exit(0)
}

// Config says what cluster to start.
type Config struct {
	// Dir holds the members' data dirs; empty means a new temp dir, removed by Close.
	Dir string
	// Members is the cluster size (1 when zero).
	Members int
	// Processes runs each member as a separate process (always so for more than one member,
	// since in-process members would share one metrics registry).
	Processes bool
	// Bin is the etcd binary for process mode; empty re-executes this binary (see MaybeRunEtcd).
	Bin string
	// TickMs and ElectionMs override etcd's 100/1000 ms defaults (tests shorten them).
	TickMs, ElectionMs uint
	// ExtraArgs are passed to every member in process mode (etcd flag syntax).
	ExtraArgs []string
	// StartTimeout bounds how long members may take to become healthy (default 30 s).
	StartTimeout time.Duration
	// TLS, when set, serves clients over https with these files.
	TLS *TLS
}

// TLS names the server's certificate files for client connections.
type TLS struct {
	CertFile, KeyFile, TrustedCAFile string
	// ClientCertAuth requires clients to present a certificate signed by TrustedCAFile.
	ClientCertAuth bool
}

// Member is one running etcd.
type Member struct {
	Name      string
	ClientURL string
	PeerURL   string
	DataDir   string
	LogFile   string
	// MetricsURL is a member's own /metrics listener, set for members that join
	// later (Prepare): it serves before the member serves clients, which a new
	// member does only once it has caught up and published itself.
	MetricsURL string

	cmd    *exec.Cmd
	exited chan struct{}
	etcd   *embed.Etcd
	// argv is the member's etcd command line in process mode, kept for Restart.
	argv []string
}

// Cluster is a running set of members.
type Cluster struct {
	cfg     Config
	members []*Member
	dir     string
	ownDir  bool
	// next numbers the members Prepare names, after the initial ones.
	next int
}

// Start starts the cluster and waits until every member answers /health.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Members <= 0 {
		cfg.Members = 1
	}
	if cfg.Members > 1 {
		cfg.Processes = true
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	c := &Cluster{cfg: cfg, dir: cfg.Dir, next: cfg.Members}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "etcdperf-etcd-")
		if err != nil {
			return nil, fmt.Errorf("embedded etcd: temp dir: %w", err)
		}
		c.dir, c.ownDir = d, true
	} else if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: data dir: %w", err)
	}
	var initial []string
	for i := 0; i < cfg.Members; i++ {
		m, err := c.newMember(fmt.Sprintf("m%d", i))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.members = append(c.members, m)
		initial = append(initial, m.Name+"="+m.PeerURL)
	}
	for _, m := range c.members {
		var err error
		if cfg.Processes {
			err = m.startProcess(cfg, m.args(cfg, strings.Join(initial, ","), "new"))
		} else {
			err = m.startEmbedded(cfg, strings.Join(initial, ","))
		}
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	hc, err := healthClient(cfg.TLS)
	if err != nil {
		c.Close()
		return nil, err
	}
	for _, m := range c.members {
		if err := m.waitHealthy(wctx, hc); err != nil {
			c.Close()
			return nil, fmt.Errorf("embedded etcd member %s did not become healthy (log: %s): %w", m.Name, m.LogFile, err)
		}
	}
	return c, nil
}

// newMember names a member and reserves its URLs and data dir, without starting it.
func (c *Cluster) newMember(name string) (*Member, error) {
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if c.cfg.TLS != nil {
		scheme = "https"
	}
	return &Member{
		Name:      name,
		ClientURL: fmt.Sprintf("%s://127.0.0.1:%d", scheme, cport),
		PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", pport),
		DataDir:   filepath.Join(c.dir, name+".etcd"),
		LogFile:   filepath.Join(c.dir, name+".log"),
	}, nil
}

// args is the member's etcd command line; state is etcd's --initial-cluster-state
// ("new" for the first members, "existing" for one that joins later).
func (m *Member) args(cfg Config, initial, state string) []string {
	a := []string{
		"--name=" + m.Name,
		"--data-dir=" + m.DataDir,
		"--listen-client-urls=" + m.ClientURL,
		"--advertise-client-urls=" + m.ClientURL,
		"--listen-peer-urls=" + m.PeerURL,
		"--initial-advertise-peer-urls=" + m.PeerURL,
		"--initial-cluster=" + initial,
		"--initial-cluster-state=" + state,
		"--log-level=warn",
		"--log-outputs=" + m.LogFile,
	}
	if cfg.TickMs > 0 {
		a = append(a, fmt.Sprintf("--heartbeat-interval=%d", cfg.TickMs))
	}
	if cfg.ElectionMs > 0 {
		a = append(a, fmt.Sprintf("--election-timeout=%d", cfg.ElectionMs))
	}
	if t := cfg.TLS; t != nil {
		a = append(a, "--cert-file="+t.CertFile, "--key-file="+t.KeyFile, "--trusted-ca-file="+t.TrustedCAFile,
			fmt.Sprintf("--client-cert-auth=%v", t.ClientCertAuth))
	}
	return append(a, cfg.ExtraArgs...)
}

func (m *Member) startProcess(cfg Config, argv []string) error {
	bin, env := cfg.Bin, os.Environ()
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("embedded etcd: find own binary: %w", err)
		}
		bin, env = self, append(env, execEnv+"=1")
	}
	cmd := exec.Command(bin, argv...)
	cmd.Env = env
	// Members get their own process group so a Ctrl-C aimed at etcdperf reaches
	// etcdperf alone, which then stops them in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("embedded etcd: start %s: %w", m.Name, err)
	}
	m.cmd, m.exited, m.argv = cmd, make(chan struct{}), argv
	go func() { _ = cmd.Wait(); close(m.exited) }()
	return nil
}

func (m *Member) startEmbedded(cfg Config, initial string) error {
	ec := embed.NewConfig()
	ec.Name, ec.Dir = m.Name, m.DataDir
	cu, _ := url.Parse(m.ClientURL)
	pu, _ := url.Parse(m.PeerURL)
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	ec.InitialCluster = initial
	ec.LogLevel = "warn"
	ec.LogOutputs = []string{m.LogFile}
	if cfg.TickMs > 0 {
		ec.TickMs = cfg.TickMs
	}
	if cfg.ElectionMs > 0 {
		ec.ElectionMs = cfg.ElectionMs
	}
	if t := cfg.TLS; t != nil {
		ec.ClientTLSInfo = transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile, ClientCertAuth: t.ClientCertAuth}
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return fmt.Errorf("embedded etcd: start %s: %w", m.Name, err)
	}
	m.etcd = e
	return nil
}

// healthClient speaks to members over TLS when they serve it; the server's own
// certificate doubles as a client certificate, as etcd's does.
func healthClient(t *TLS) (*http.Client, error) {
	hc := &http.Client{Timeout: time.Second}
	if t == nil {
		return hc, nil
	}
	info := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}
	tc, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: TLS: %w", err)
	}
	hc.Transport = &http.Transport{TLSClientConfig: tc}
	return hc, nil
}

func (m *Member) waitHealthy(ctx context.Context, hc *http.Client) error {
	for {
		if m.exited != nil {
			select {
			case <-m.exited:
				return errors.New("process exited")
			default:
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.ClientURL+"/health", nil)
		if resp, err := hc.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"true"`) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

// Members are the running members, in start order.
func (c *Cluster) Members() []*Member { return c.members }

// Dir is the folder that holds the members' data.
func (c *Cluster) Dir() string { return c.dir }

// Pid is the member's process id in process mode, else 0.
func (m *Member) Pid() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Signal sends sig to a member running as a process (SIGSTOP/SIGCONT for stalls, SIGKILL to kill it).
func (m *Member) Signal(sig os.Signal) error {
	if m.cmd == nil {
		return errors.New("member runs in-process; start the cluster with Processes")
	}
	return m.cmd.Process.Signal(sig)
}

// Stop stops the member and waits for it to exit.
func (m *Member) Stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot handle SIGTERM
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	}
}

// Close stops every member and removes the data when Start made the temp dir.
func (c *Cluster) Close() error {
	for _, m := range c.members {
		m.Stop()
	}
	if c.ownDir {
		return os.RemoveAll(c.dir)
	}
	return nil
}

// handedOut are the ports freePort has returned in this process. The port is
// free only until its probe listener closes, and the kernel may offer it again
// at the next bind: two members of one cluster (or the client and peer URL of
// one) would then collide when etcd binds them.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort is a loopback port no listener holds now and that this process has
// not handed out before.
func freePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("embedded etcd: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("embedded etcd: find a free port: the kernel offered only ports already handed out")
}
