package truth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/promtest"
)

// remote is one etcd member in a network namespace of its own, reached over a
// veth pair: its client URL is no listener of this host's namespace, so etcdperf
// cannot find its process, PID or cgroup and must grade it from what it exposes,
// as for a member on another machine. The test still holds its PID.
type remote struct {
	ns  *faults.NetNS
	cmd *exec.Cmd
	url string
}

// startRemote starts a one-member cluster in a new namespace; env adds to its
// environment (GOMAXPROCS, GOMEMLIMIT: what a container runtime sets).
func (e *runEnv) startRemote(env []string, etcdArgs ...string) (*remote, error) {
	ns := faults.NewNetNS(e.t)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r := &remote{ns: ns, url: "http://" + ns.NSIP + ":2379"}
	peer := "http://" + ns.NSIP + ":2380"
	dir := filepath.Join(e.dataDir, "remote")
	args := append([]string{
		"--name=r0", "--data-dir=" + filepath.Join(dir, "r0.etcd"),
		"--listen-client-urls=" + r.url, "--advertise-client-urls=" + r.url,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=r0=" + peer, "--initial-cluster-state=new",
		"--log-level=warn", "--log-outputs=" + filepath.Join(dir, "r0.log"),
	}, etcdArgs...)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r.cmd = ns.Command(self, args...)
	r.cmd.Env = append(append(os.Environ(), "ETCDPERF_EXEC_ETCD=1"), env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the remote member: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(exited) }()
	e.t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGCONT)
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-exited
		}
	})
	if err := waitHealthy(r.url, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "r0.log"))
		return nil, fmt.Errorf("remote member at %s: %w; log: %s", r.url, err, lastLine(string(log)))
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	e.cli, e.eps, e.graded = cli, []string{r.url}, hostOf(r.url)
	return r, nil
}

func (r *remote) pid() int { return r.cmd.Process.Pid }

// waitHealthy waits up to 30 s for /health to say true.
func waitHealthy(base string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("process exited")
		default:
		}
		if resp, err := hc.Get(base + "/health"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"true"`) {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("not healthy after 30 s")
}

// nodeExporter starts Debian's prometheus-node-exporter inside the member's
// namespace, so its instance is the member's host as a Prometheus elsewhere
// would label it. It returns its host:port, or why it cannot run here.
func (r *remote) nodeExporter(e *runEnv) (string, error) {
	bin, err := exec.LookPath("prometheus-node-exporter")
	if err != nil {
		return "", fmt.Errorf("prometheus-node-exporter not installed (apt-get install prometheus-node-exporter): %w", err)
	}
	addr := r.ns.NSIP + ":9100"
	cmd := r.ns.Command(bin, "--web.listen-address="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return addr, nil
}

// prometheus starts Debian's prometheus scraping the member (job etcd) and its
// host's node_exporter (job node) every second, and waits until it holds a
// sample of both.
func (r *remote) prometheus(e *runEnv) (string, error) {
	node, err := r.nodeExporter(e)
	if err != nil {
		return "", err
	}
	base := promtest.Start(e.t, promtest.Options{Target: hostOf(r.url), Jobs: map[string]string{"node": node}})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n, err := promCount(base, `up{job="node"} == 1`); err == nil && n > 0 {
			return base, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Errorf("prometheus at %s never scraped node_exporter at %s", base, node)
}

// promCount is how many series an instant query returns.
func promCount(base, q string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	return len(out.Data.Result), nil
}
