package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/testcerts"
	"github.com/etcdperf/etcdperf/results"
)

// testPassword is the bench user's password; no output of etcdperf may contain it.
const testPassword = "s3cret-Pa55word-7f1c"

// writeCerts writes a CA and certificates valid now, or expired a day ago.
func writeCerts(t *testing.T, valid bool) testcerts.Files {
	t.Helper()
	from, to := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if !valid {
		from, to = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	}
	files, err := testcerts.Write(t.TempDir(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// secureEtcd starts an etcd that requires client certificates and has auth
// enabled: a root user and user "u" whose role may read and write the prefix
// /etcdperf/ only. It trusts the CA of files and that of expired, whose client
// certificate has expired. It returns the https endpoint and a client
// authenticated as root.
func secureEtcd(t *testing.T, files, expired testcerts.Files) (string, *clientv3.Client) {
	t.Helper()
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	oldCA, err := os.ReadFile(expired.CA)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "trusted.pem")
	if err := os.WriteFile(bundle, append(ca, oldCA...), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100,
		TLS: &cluster.TLS{CertFile: files.ServerCert, KeyFile: files.ServerKey, TrustedCAFile: bundle, ClientCertAuth: true}})
	ep := c.Endpoints()[0]
	tc := tlsClientConfig(t, files)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, TLS: tc, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "u", testPassword); return err },
		func() error { _, err := cli.RoleAdd(ctx, "bench"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "bench", "/etcdperf/", clientv3.GetPrefixRangeEnd("/etcdperf/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserGrantRole(ctx, "u", "bench"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	cli.Close()
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, TLS: tc, DialTimeout: 5 * time.Second,
		Username: "root", Password: "rootpw", Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return ep, root
}

func tlsClientConfig(t *testing.T, files testcerts.Files) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(files.ClientCert, files.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}
}

// assertNoSecret fails when the password shows in any output or file of a run.
func assertNoSecret(t *testing.T, r result, dir string) {
	t.Helper()
	if strings.Contains(r.stdout, testPassword) || strings.Contains(r.stderr, testPassword) {
		t.Errorf("the password is in the output:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
		} else if strings.Contains(string(b), testPassword) {
			t.Errorf("the password is in %s", path)
		}
		return nil
	})
}

// TestTLSAuthBench runs bench put over TLS with client certificates as user u,
// the password given each way etcdctl takes it, and with verification skipped.
func TestTLSAuthBench(t *testing.T) {
	files := writeCerts(t, true)
	ep, root := secureEtcd(t, files, writeCerts(t, false))
	certs := []string{"--cacert", files.CA, "--cert", files.ClientCert, "--key", files.ClientKey}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--password", nil, append([]string{"--user", "u", "--password", testPassword}, certs...)},
		{"ETCDCTL_PASSWORD", []string{"ETCDCTL_PASSWORD=" + testPassword}, append([]string{"--user", "u"}, certs...)},
		{"--user u:p", nil, append([]string{"--user", "u:" + testPassword}, certs...)},
		{"ETCDCTL_USER u:p", []string{"ETCDCTL_USER=u:" + testPassword}, certs},
		{"insecure-skip-tls-verify", nil, []string{"--insecure-skip-tls-verify", "--cert", files.ClientCert, "--key", files.ClientKey, "--user", "u", "--password", testPassword}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"bench", "put", "--endpoints", ep, "--total", "200", "--clients", "4", "--conns", "2",
				"-w", "json", "--results-dir", dir}, tc.args...)
			r := runBin(t, tc.env, args...)
			// This tests the connection, not the cluster: a verdict of fail (exit 1, a
			// noisy machine's slow fsync) still ran every request over TLS with auth.
			if r.code != ExitOK && r.code != ExitFail {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var out struct {
				RunFile string `json:"run_file"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout: %v\n%s", err, r.stdout)
			}
			run, err := results.ReadFile(out.RunFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Ops) != 1 || run.Ops[0].Requests != 200 || run.Ops[0].Errors != 0 {
				t.Errorf("ops %+v", run.Ops)
			}
			if run.Tool.EmbeddedEtcd == "" || run.Tool.GoVersion == "" {
				t.Errorf("run file's tool %+v", run.Tool)
			}
			// The default lean transport carries a user's auth tokens itself, as
			// clientv3 does: the run stays on it.
			if run.Client.Transport != "lean" {
				t.Errorf("transport %q; want lean (its own auth tokens)", run.Client.Transport)
			}
			// The members' /metrics are scraped over the same TLS, with the client certificate.
			phases := map[string]bool{}
			for _, sc := range run.Scrapes {
				if sc.Error != "" || !strings.Contains(sc.Text, "etcd_disk_wal_fsync_duration_seconds") {
					t.Errorf("scrape %s %s: error %q, %d bytes", sc.Phase, sc.URL, sc.Error, len(sc.Text))
				}
				if !strings.HasPrefix(sc.URL, "https://") {
					t.Errorf("scrape over %s", sc.URL)
				}
				phases[sc.Phase] = true
			}
			if !phases[results.PhaseBefore] || !phases[results.PhaseAfter] {
				t.Errorf("scrape phases %v, want before and after", phases)
			}
			if run.Flags["user"] != "u" {
				t.Errorf("run file records user %q, want the name alone", run.Flags["user"])
			}
			assertNoSecret(t, r, dir)
			if n := prefixKeys(t, root, "/etcdperf/"); n != 0 {
				t.Errorf("%d keys left under /etcdperf/", n)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		dir := t.TempDir()
		r := runBin(t, nil, append([]string{"bench", "put", "--endpoints", ep, "--total", "10", "--results-dir", dir, "--user", "u", "--password", "not-" + testPassword}, certs...)...)
		assertCleanError(t, r)
		if !strings.Contains(r.stderr, "authentication failed") {
			t.Errorf("stderr %q does not say authentication failed", r.stderr)
		}
		assertNoSecret(t, r, dir)
	})
	t.Run("no permission outside the role", func(t *testing.T) {
		// --transport grpc: the default (lean) cannot carry auth and says so on
		// stderr, which would be a second line beside the error.
		r := runBin(t, nil, append([]string{"bench", "put", "--endpoints", ep, "--total", "10", "--prefix", "/other/", "--user", "u", "--password", testPassword, "--transport", "grpc"}, certs...)...)
		assertCleanError(t, r)
		if !strings.Contains(r.stderr, "permission denied") {
			t.Errorf("stderr %q does not say permission denied", r.stderr)
		}
	})
}

func prefixKeys(t *testing.T, cli *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// TestTLSFailures: a certificate etcdperf or the server cannot accept ends the run
// within the dial timeout with one line that names the cause.
func TestTLSFailures(t *testing.T) {
	files, other, expired := writeCerts(t, true), writeCerts(t, true), writeCerts(t, false)
	ep, _ := secureEtcd(t, files, expired)
	expiredSrv := tlsServer(t, expired)
	hang := hangServer(t)
	const dial = 2 * time.Second
	for _, tc := range []struct {
		name     string
		endpoint string
		args     []string
		want     string
	}{
		{"server cert from another CA", ep, []string{"--cacert", other.CA, "--cert", files.ClientCert, "--key", files.ClientKey}, "certificate signed by unknown authority"},
		{"client cert from another CA", ep, []string{"--cacert", files.CA, "--cert", other.ClientCert, "--key", other.ClientKey}, "certificate"},
		{"no client cert", ep, []string{"--cacert", files.CA}, "requires a client certificate"},
		{"expired server cert", expiredSrv, []string{"--cacert", expired.CA}, "expired"},
		{"expired client cert", ep, []string{"--cacert", files.CA, "--cert", expired.ClientCert, "--key", expired.ClientKey}, "expired certificate"},
		{"plain http to a TLS server", strings.Replace(ep, "https://", "http://", 1), nil, "name it https://"},
		{"TLS to a server that never answers", "https://" + hang, []string{"--cacert", files.CA}, "no answer within the dial timeout"},
		{"server that never answers", hang, nil, "no answer within the dial timeout"},
		{"refused", "127.0.0.1:1", nil, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runBin(t, nil, append([]string{"bench", "put", "--endpoints", tc.endpoint, "--dial-timeout", dial.String(), "--total", "10"}, tc.args...)...)
			took := time.Since(start)
			t.Logf("%.2fs: %s", took.Seconds(), strings.TrimSpace(r.stderr))
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "cannot reach etcd at "+tc.endpoint+": ") {
				t.Errorf("stderr %q does not name %q and the endpoint", r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "context deadline exceeded") {
				t.Errorf("stderr %q: say why, not that a deadline passed", r.stderr)
			}
			// A generous margin over the dial timeout for process start on a busy machine.
			if took > dial+3*time.Second {
				t.Errorf("took %v with a %v dial timeout", took, dial)
			}
		})
	}
}

// tlsServer serves TLS with files' server certificate on 127.0.0.1 and answers
// nothing after the handshake; it returns its https endpoint.
func tlsServer(t *testing.T, files testcerts.Files) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Read(make([]byte, 1))
			}()
		}
	}()
	return "https://" + l.Addr().String()
}

// hangServer accepts connections and never answers; it returns its address.
func hangServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}
