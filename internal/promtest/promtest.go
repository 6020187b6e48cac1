// Package promtest starts Debian's prometheus for tests: on 127.0.0.1, in a temp
// dir, scraping one target every second as job "etcd", stopped when the test ends.
package promtest

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Options say what the server scrapes and how it is reached.
type Options struct {
	// Target is the host:port whose /metrics (plain HTTP) it scrapes as job "etcd".
	Target string
	// Jobs are more plain-HTTP targets by job name (e.g. "node": a node_exporter),
	// scraped at the same interval.
	Jobs map[string]string
	// ScrapeConfigs are more scrape_configs entries, as YAML list items
	// indented by two spaces ("  - job_name: …"), for what static targets
	// cannot say (a /probe with params and relabel_configs).
	ScrapeConfigs string
	// RuleFiles are rule files it loads and evaluates every second.
	RuleFiles []string
	// WebConfig is the text of its --web.config.file (basic_auth_users,
	// tls_server_config); empty serves plain HTTP without auth.
	WebConfig string
	// Client is how the readiness check reaches it: the credentials and CA the
	// web config asks for.
	Client *config.HTTPClientConfig
}

// Start starts prometheus and returns its base URL (https when WebConfig holds a
// tls_server_config) once it holds a sample of the target's etcd_server_has_leader.
// It skips, saying why, when prometheus is not installed.
func Start(t testing.TB, o Options) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("prometheus not installed (apt-get install -y prometheus): %v", err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	if len(o.RuleFiles) > 0 {
		conf += "rule_files:\n"
		for _, f := range o.RuleFiles {
			conf += fmt.Sprintf("  - '%s'\n", f)
		}
	}
	conf += fmt.Sprintf("scrape_configs:\n  - job_name: etcd\n    static_configs:\n      - targets: ['%s']\n", o.Target)
	for _, job := range slices.Sorted(maps.Keys(o.Jobs)) {
		conf += fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", job, o.Jobs[job])
	}
	conf += o.ScrapeConfigs
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := []string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}
	scheme := "http"
	if o.WebConfig != "" {
		web := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(web, []byte(o.WebConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--web.config.file="+web)
		if o.Client != nil && o.Client.TLSConfig.CAFile != "" {
			scheme = "https"
		}
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	base := scheme + "://" + addr
	ccfg := config.DefaultHTTPClientConfig
	if o.Client != nil {
		ccfg = *o.Client
	}
	rt, err := config.NewRoundTripperFromConfig(ccfg, "promtest")
	if err != nil {
		t.Fatal(err)
	}
	c, err := api.NewClient(api.Config{Address: base, RoundTripper: rt})
	if err != nil {
		t.Fatal(err)
	}
	prom := v1.NewAPI(c)
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, _, err := prom.Query(ctx, metrics.HasLeader+`{job="etcd"}`, time.Now())
		cancel()
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) > 0 {
			return base
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(log.Name())
	t.Fatalf("prometheus at %s has no etcd sample after 30s (last error %v); log:\n%s", base, last, b)
	return ""
}
