package analyze

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"
	"golang.org/x/crypto/bcrypt"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/promtest"
	"github.com/etcdperf/etcdperf/internal/testcerts"
)

// serveFixture serves a recorded etcd 3.6 /metrics as a target Prometheus scrapes.
func serveFixture(t *testing.T) (host, text string) {
	t.Helper()
	b, err := os.ReadFile("testdata/etcd-3.6-after.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), string(b)
}

// httpConfig writes a --prometheus-http-config file and loads it as etcdperf does.
func httpConfig(t *testing.T, dir, name, text string) *config.HTTPClientConfig {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadHTTPConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// readAll reads the member's scrapes from since (when Prometheus held a sample
// already) to now, and checks that the rebuilt text has each family's own type,
// from the metadata API.
func readAll(t *testing.T, p *Prometheus, since time.Time, want string) error {
	t.Helper()
	to := time.Now()
	if !to.After(since.Add(time.Second)) {
		to = since.Add(time.Second)
	}
	scrapes, err := p.Scrapes(context.Background(), since, to)
	if err != nil {
		return err
	}
	if len(scrapes) == 0 {
		t.Fatal("no scrapes")
	}
	sameTypes(t, Filter(want), scrapes[len(scrapes)-1].Text)
	return nil
}

// TestPrometheusBasicAuth reads a real Prometheus whose --web.config.file asks
// for basic auth: credentials from a promtool-format http config file are let in,
// none or wrong ones are one line naming the 401.
func TestPrometheusBasicAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts prometheus")
	}
	target, text := serveFixture(t)
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := httpConfig(t, dir, "good.yml", "basic_auth:\n  username: etcdperf\n  password_file: password\n")
	bad := httpConfig(t, dir, "bad.yml", "basic_auth:\n  username: etcdperf\n  password: wrong\n")
	url := promtest.Start(t, promtest.Options{
		Target:    target,
		WebConfig: fmt.Sprintf("basic_auth_users:\n  etcdperf: %s\n", hash),
		Client:    good,
	})
	since := time.Now()
	if err := readAll(t, &Prometheus{URL: url, HTTPConfig: good}, since, text); err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	for name, cfg := range map[string]*config.HTTPClientConfig{"none": nil, "wrong password": bad} {
		err := readAll(t, &Prometheus{URL: url, HTTPConfig: cfg}, since, text)
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming HTTP 401", name, err)
		}
	}
}

// TestPrometheusTLS reads a real Prometheus serving HTTPS with the test CA's
// certificate: tls_config's ca_file trusts it; without it the error is one line.
func TestPrometheusTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts prometheus")
	}
	target, text := serveFixture(t)
	dir := t.TempDir()
	certs, err := testcerts.Write(dir, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	trusted := httpConfig(t, dir, "tls.yml", fmt.Sprintf("tls_config:\n  ca_file: %s\n", filepath.Base(certs.CA)))
	url := promtest.Start(t, promtest.Options{
		Target:    target,
		WebConfig: fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n", certs.ServerCert, certs.ServerKey),
		Client:    trusted,
	})
	since := time.Now()
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("url %s", url)
	}
	if err := readAll(t, &Prometheus{URL: url, HTTPConfig: trusted}, since, text); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	err = readAll(t, &Prometheus{URL: url}, since, text)
	t.Logf("without the CA: %v", err)
	if err == nil || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "\n") {
		t.Errorf("without the CA: %v, want one line about the certificate", err)
	}
}

// TestPrometheusHostSeries reads, next to a member's series, the node_exporter
// and cAdvisor series of its host (targets on the member's host name) from a real
// Prometheus: the member's scrape then holds them, in their exporters' names.
func TestPrometheusHostSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts prometheus")
	}
	target, _ := serveFixture(t)
	exporters := nodeText(3, 1, 2) + strings.ReplaceAll(cadvisorText(100, 40, 30000, 500<<20, 300<<20), `name="k8s_etcd_etcd-node1"`, `name="k8s_etcd_etcd-node1",container="etcd"`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(exporters))
	}))
	t.Cleanup(srv.Close)
	url := promtest.Start(t, promtest.Options{Target: target, Jobs: map[string]string{"node": strings.TrimPrefix(srv.URL, "http://")}})
	since := time.Now()
	p := &Prometheus{URL: url, Selector: `job="etcd"`}
	var text string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		scrapes, err := p.Scrapes(context.Background(), since, time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if text = scrapes[len(scrapes)-1].Text; strings.Contains(text, metrics.ContainerThrottled) && strings.Contains(text, metrics.NodePressureCPU) {
			break
		}
	}
	s, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Value(metrics.ContainerCPUQuota, nil); !ok || v != 30000 {
		t.Errorf("%s = %v (%v), want 30000:\n%s", metrics.ContainerCPUQuota, v, ok, text)
	}
	if n := len(s.LabelValues(metrics.NodeCPUSeconds, "cpu")); n != 4 {
		t.Errorf("%d CPUs in %s, want 4 (idle mode only):\n%s", n, metrics.NodeCPUSeconds, text)
	}
	if v, ok := s.Value(metrics.NodePressureCPU, nil); !ok || v != 3 {
		t.Errorf("%s = %v (%v), want 3", metrics.NodePressureCPU, v, ok)
	}
}
