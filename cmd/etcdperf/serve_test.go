package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSIGTERM runs the binary as a canary: -w json prints one startup
// object with the address, /metrics answers, and SIGTERM mid-probe stops it
// with exit 0, its keys deleted and nothing outside its prefix touched.
func TestServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	s := startBin(t, t.TempDir(), "serve", "--endpoints", ep, "--every", "20s", "--listen", "127.0.0.1:0", "-w", "json", "--results-dir", t.TempDir())
	var start struct {
		Listen string `json:"listen"`
		Prefix string `json:"prefix"`
	}
	s.waitFor(t, "the startup line", func() bool { return json.Unmarshal(s.stdout.Bytes(), &start) == nil })
	s.waitFor(t, "keys under "+start.Prefix, func() bool { return prefixKeys(t, cli, start.Prefix) > 0 })
	resp, err := http.Get("http://" + start.Listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "etcdperf_build_info{") {
		t.Errorf("/metrics of the binary lacks etcdperf_build_info:\n%.2000s", b)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !s.wait(45 * time.Second) {
		t.Fatal("still running 45 s after SIGTERM")
	}
	if s.code != ExitOK {
		t.Errorf("exit %d after SIGTERM, want 0: %s", s.code, s.stderr.String())
	}
	if n := prefixKeys(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left under /etcdperf/", n)
	}
	checkUntouched(t, cli)
}

// TestServeRefuses: bad flags (a period too short for the probe's load, a
// profile serve does not probe with, an instance that is no directory name) are
// refused with one line and exit 2; a key of someone else's under the prefix is
// left alone.
func TestServeRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	if _, err := cli.Put(context.Background(), "/etcdperf/serve/theirs", "x"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "kubernetes", "--every", "1h"}, "serve probes with puts and gets"},
		{[]string{"--instance", "a/b"}, "must not hold a /"},
		{[]string{"--web.config.file", "/nonexistent/web.yml"}, "--web.config.file"},
		{[]string{"--every", "5s"}, "--every 5s is too short"},
		{[]string{"--load", "xxl"}, "want tiny, s, m, l or xl"},
		{[]string{"--load", "s", "--profile", "read-heavy"}, "not both"},
	} {
		r := runBin(t, nil, append([]string{"serve", "--endpoints", ep, "--listen", "127.0.0.1:0"}, c.args...)...)
		if r.code != ExitError || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := prefixKeys(t, cli, "/etcdperf/serve/"); n != 1 {
		t.Errorf("%d keys under the prefix after the refusal, want the 1 that was there", n)
	}
}

// TestServeAlwaysReports: an unreachable cluster, a TLS handshake that fails
// and a foreign key in the canary's directory keep the process running, with
// /metrics saying why and /healthz up; SIGTERM then exits 0. A results dir
// that cannot be written is a bad flag: exit 2, one line.
func TestServeAlwaysReports(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	if _, err := cli.Put(context.Background(), "/etcdperf/serve/held/theirs", "x"); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, selfSignedPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		reason string
	}{
		{"unreachable", []string{"--endpoints", closed}, "unreachable"},
		{"tls", []string{"--endpoints", "https://" + strings.TrimPrefix(ep, "http://"), "--cacert", ca}, "tls"},
		{"foreign", []string{"--endpoints", ep, "--instance", "held"}, "foreign_keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"serve", "--every", "10s", "--listen", "127.0.0.1:0", "-w", "json", "--results-dir", t.TempDir(), "--dial-timeout", "1s"}, c.args...)
			s := startBin(t, t.TempDir(), args...)
			var start struct {
				Listen string `json:"listen"`
			}
			s.waitFor(t, "the startup line", func() bool { return json.Unmarshal(s.stdout.Bytes(), &start) == nil })
			var metrics string
			s.waitFor(t, "reason "+c.reason, func() bool {
				metrics = httpBody(t, "http://"+start.Listen+"/metrics")
				return strings.Contains(metrics, `etcdperf_probe_reason_info{reason="`+c.reason+`"} 1`)
			})
			if !strings.Contains(metrics, "\netcdperf_probe_up 0\n") {
				t.Errorf("/metrics lacks etcdperf_probe_up 0")
			}
			if c.reason == "tls" && !strings.Contains(metrics, `etcdperf_tls_certificate_expiry_timestamp_seconds{file="`+ca+`"}`) {
				t.Errorf("/metrics lacks the CA's expiry")
			}
			if body := httpBody(t, "http://"+start.Listen+"/healthz"); body != "ok\n" {
				t.Errorf("/healthz: %q", body)
			}
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if !s.wait(45*time.Second) || s.code != ExitOK {
				t.Errorf("exit %d after SIGTERM, want 0: %s", s.code, s.stderr.String())
			}
		})
	}
	if n := prefixKeys(t, cli, "/etcdperf/serve/held/"); n != 1 {
		t.Errorf("%d keys in the held directory, want the foreign one", n)
	}
	r := runBin(t, nil, "serve", "--endpoints", ep, "--listen", "127.0.0.1:0", "--results-dir", "/proc/1")
	if r.code != ExitError || !strings.Contains(r.stderr, "/proc/1") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("--results-dir /proc/1: exit %d, stderr %q; want 2 and one line", r.code, r.stderr)
	}
}

// httpBody GETs url; "" when it does not answer.
func httpBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// selfSignedPEM is a CA certificate of its own, valid for a day.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestServeConfigFile runs the binary's multi-target form: a bad --config.file
// (or one beside --endpoints) is exit 2 with one line; a good one serves
// /probe of the cluster a scrape names, SIGHUP rereads the file (a module it
// adds answers) and SIGTERM revokes the canary's lease: no key left.
func TestServeConfigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "canary.yml")
	write := func(text string) {
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		text string
		args []string
		want string
	}{
		{"modules:\n  tiny:\n    lod: s\n", nil, "--config.file " + cfg + ": yaml: unmarshal errors: line 3: field lod not found"},
		{"modules:\n  big:\n    load: xxl\n", nil, "module big: --load \"xxl\""},
		{"modules:\n  tiny:\n", []string{"--endpoints", ep}, "give no --endpoints"},
	} {
		write(c.text)
		r := runBin(t, nil, append([]string{"serve", "--config.file", cfg, "--listen", "127.0.0.1:0"}, c.args...)...)
		if r.code != ExitError || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%q %v: exit %d, stderr %q; want 2 and one line with %q", c.text, c.args, r.code, r.stderr, c.want)
		}
	}
	write("modules:\n  tiny:\n")
	s := startBin(t, dir, "serve", "--config.file", cfg, "--listen", "127.0.0.1:0", "--instance", "multi", "-w", "json", "--results-dir", t.TempDir())
	var start struct {
		Listen  string   `json:"listen"`
		Modules []string `json:"modules"`
	}
	s.waitFor(t, "the startup line", func() bool { return json.Unmarshal(s.stdout.Bytes(), &start) == nil })
	probe := func(module string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+start.Listen+"/probe?module="+module+"&target="+ep, nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "15")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, text := probe("tiny"); code != 200 || !strings.Contains(text, `etcdperf_probe_up{cluster="`+ep+`"} 1`) {
		t.Errorf("/probe tiny: %d\n%.3000s", code, text)
	}
	if n := prefixKeys(t, cli, "/etcdperf/serve/multi/"); n != 1 {
		t.Errorf("%d keys under the canary's directory after a probe, want 1", n)
	}
	if code, _ := probe("other"); code != 400 {
		t.Errorf("/probe of a module not in the file: %d, want 400", code)
	}
	write("modules:\n  tiny:\n  other:\n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "module other after SIGHUP", func() bool { code, _ := probe("other"); return code == 200 })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !s.wait(45 * time.Second) {
		t.Fatal("still running 45 s after SIGTERM")
	}
	if s.code != ExitOK {
		t.Errorf("exit %d after SIGTERM, want 0: %s", s.code, s.stderr.String())
	}
	if n := prefixKeys(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left under /etcdperf/", n)
	}
	checkUntouched(t, cli)
}
