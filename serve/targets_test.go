package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/internal/promtest"
	"github.com/etcdperf/etcdperf/results"
)

// fastProfile is tiny's load cut to 20 req/s for 2 s, for the live tests.
const fastProfile = `name: fast
version: 1
description: "test probe"
source: "test"
rate: 20
clients: 2
connections: 1
duration: 2s
keys:
  size: 32
  space: 1
values:
  size: 256B
ops:
  - op: put
    ratio: 0.5
  - op: range
    ratio: 0.5
    width: 1
    consistency: l
`

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadConfig refuses what could not probe, in one line each, and fills a
// module's defaults.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	def := Identity{Prefix: "/etcdperf/serve/", Instance: "host"}
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "no modules"},
		{"unknown field", "modules:\n  a:\n    lod: s\n", "field lod not found"},
		{"bad load", "modules:\n  a:\n    load: xxl\n", "module a: --load \"xxl\": want tiny, s,"},
		{"both", "modules:\n  a:\n    load: s\n    profile: read-heavy\n", "not both"},
		{"writes others", "modules:\n  a:\n    profile: kubernetes\n", "serve probes with puts and gets"},
		{"cert alone", "modules:\n  a:\n    tls_config:\n      cert_file: /etc/hostname\n", "cert_file and key_file go together"},
		{"missing CA", "modules:\n  a:\n    tls_config:\n      ca_file: /nonexistent/ca.crt\n", "/nonexistent/ca.crt"},
		{"user alone", "modules:\n  a:\n    auth:\n      username: root\n", "needs a password"},
		{"slash", "modules:\n  a:\n    instance: a/b\n", "must not hold a /"},
		{"bad duration", "modules:\n  a:\n    timeout: soon\n", "soon"},
	} {
		_, err := LoadConfig(writeFile(t, dir, "c.yml", c.text), def)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.name, err, c.want)
		}
	}
	cfg, err := LoadConfig(writeFile(t, dir, "c.yml", "modules:\n  tiny:\n  s:\n    load: s\n    instance: mine\n"), def)
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Modules["tiny"]; m.Prefix != def.Prefix || m.Instance != "host" || time.Duration(m.LeaseTTL) != DefaultLeaseTTL || m.profile.Name != "serve-tiny" {
		t.Errorf("tiny: %+v", m)
	}
	if m := cfg.Modules["s"]; m.Instance != "mine" || m.profile.Rate <= 0 {
		t.Errorf("s: %+v", m)
	}
}

func TestScrapeTimeout(t *testing.T) {
	for _, c := range []struct {
		header string
		module time.Duration
		want   time.Duration
		bad    bool
	}{
		{"", 0, 120 * time.Second, false},
		{"10", 0, 9500 * time.Millisecond, false},
		{"10", 3 * time.Second, 3 * time.Second, false},
		{"2.5", 0, 2 * time.Second, false},
		{"0.2", 0, 0, false},
		{"x", 0, 0, true},
		{"-1", 0, 0, true},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/probe", nil)
		if c.header != "" {
			r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", c.header)
		}
		got, err := scrapeTimeout(r, c.module)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("header %q module %s: %s, %v; want %s (error %v)", c.header, c.module, got, err, c.want, c.bad)
		}
	}
}

// probeURL is base's /probe of target with module and, when set, cluster.
func probeURL(base, target, module, cluster string) string {
	q := url.Values{"target": {target}, "module": {module}}
	if cluster != "" {
		q.Set("cluster", cluster)
	}
	return base + "/probe?" + q.Encode()
}

// scrape gets u as Prometheus would, with its scrape timeout header.
func scrape(t *testing.T, u string, timeout string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// startTargets serves /probe on loopback with a module fast (fastProfile,
// identity <prefix>multi/) until t ends; it returns the base URL.
func startTargets(t *testing.T, ctx context.Context, dir, prefix string) (*Targets, string) {
	t.Helper()
	writeFile(t, dir, "fast.yaml", fastProfile)
	cfgFile := writeFile(t, dir, "canary.yml", fmt.Sprintf("modules:\n  fast:\n    profile: %s\n    lease_ttl: 1m\n", filepath.Join(dir, "fast.yaml")))
	tg := &Targets{ConfigFile: cfgFile, Default: Identity{Prefix: prefix, Instance: "multi"}, Build: BuildInfo{GoVersion: "go-test"},
		Base: conn.Config{DialTimeout: 5 * time.Second, CommandTimeout: 5 * time.Second, KeepaliveTime: 2 * time.Second, KeepaliveTimeout: 6 * time.Second,
			InsecureTransport: true, InsecureDiscovery: true, EmbeddedMembers: 1},
		NewRun: func(s *conn.Session) *results.Run {
			return &results.Run{Version: results.Version, Command: "serve", StartedAt: time.Now().UTC(), Valid: true, Flags: map[string]string{}, Target: s.Info}
		}}
	if err := tg.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cn := &Canary{Exporter: NewExporter(BuildInfo{}, ""), Page: &Page{}, Targets: tg}
	done := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	go func() { done <- cn.Run(rctx, l, nil) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		_ = tg.Close(context.Background())
	})
	return tg, "http://" + l.Addr().String()
}

// TestProbeTwoClusters runs one canary's /probe against two real etcd
// clusters: each scrape probes its target and answers with that cluster's
// series (cluster and member labels); two scrapes of one target at once run
// one after the other; each probe writes one revision under the canary's
// directory, a foreign key there stops the load and stays, and Close leaves no
// canary key in either cluster and every other key as it was. Reload swaps
// the modules; a bad file keeps them.
func TestProbeTwoClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two etcd clusters and probes them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c1 := clustertest.Start(t, cluster.Config{})
	c2 := clustertest.Start(t, cluster.Config{})
	cli1, cli2 := clustertest.Client(t, c1), clustertest.Client(t, c2)
	if _, err := cli1.Put(ctx, "/outside", "keep"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli2.Put(ctx, "/outside", "keep"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const prefix = "/etcdperf/probe-test/"
	tg, base := startTargets(t, ctx, dir, prefix)
	t1, t2 := strings.Join(c1.Endpoints(), ","), strings.Join(c2.Endpoints(), ",")
	revision := func(c *cluster.Cluster) int64 {
		cli := clustertest.Client(t, c)
		r, err := cli.Get(ctx, "/outside")
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.Revision
	}
	before1, before2 := revision(c1), revision(c2)

	// Two scrapes of cluster 1 at once, one of cluster 2 beside them.
	var wg sync.WaitGroup
	texts := make([]string, 3)
	codes := make([]int, 3)
	startAll := time.Now()
	for i, u := range []string{probeURL(base, t1, "fast", "one"), probeURL(base, t1, "fast", "one"), probeURL(base, t2, "fast", "")} {
		wg.Go(func() {
			codes[i], texts[i] = scrape(t, u, "15")
		})
	}
	wg.Wait()
	took1 := time.Since(startAll)
	for i, text := range texts {
		cl := "one"
		if i == 2 {
			cl = t2
		}
		if codes[i] != 200 {
			t.Fatalf("scrape %d: %d %s", i, codes[i], text)
		}
		if v, ok := sample(text, fmt.Sprintf(`etcdperf_probe_up{cluster=%q}`, cl)); !ok || v != 1 {
			t.Errorf("scrape %d: etcdperf_probe_up{cluster=%q} %v %v; want 1\n%s", i, cl, v, ok, text)
		}
		if v, ok := sample(text, fmt.Sprintf(`etcdperf_member_up{cluster=%q,member="m0"}`, cl)); !ok || v != 1 {
			t.Errorf("scrape %d: no member series of cluster %q\n%s", i, cl, text)
		}
		if strings.Contains(text, "go_goroutines") {
			t.Errorf("scrape %d: /probe carries the process's series", i)
		}
		// The rules' EtcdperfCanaryDown reads its absence as a canary gone.
		if !strings.Contains(text, fmt.Sprintf(`etcdperf_build_info{cluster=%q,goversion="go-test"`, cl)) {
			t.Errorf("scrape %d: no etcdperf_build_info of cluster %q\n%s", i, cl, text)
		}
	}
	// Two 2 s loads of one cluster one after the other: 4 s at least.
	if took1 < 4*time.Second {
		t.Errorf("two scrapes of one target took %s together: they overlapped", took1)
	}
	// One revision a probe: two on cluster 1, one on cluster 2.
	if d := revision(c1) - before1; d != 2 {
		t.Errorf("cluster 1: %d revisions for two probes, want 2", d)
	}
	if d := revision(c2) - before2; d != 1 {
		t.Errorf("cluster 2: %d revisions for one probe, want 1", d)
	}
	dirKey := prefix + "multi/"
	if n := keysUnder(t, cli1, dirKey); n != 1 {
		t.Errorf("cluster 1: %d keys under %s, want the canary's 1", n, dirKey)
	}

	// A scrape that waits out its timeout behind a running probe says busy.
	sem := tg.lock(t2)
	sem <- struct{}{}
	_, text := scrape(t, probeURL(base, t2, "fast", ""), "3.6")
	<-sem
	if v, ok := sample(text, fmt.Sprintf(`etcdperf_probe_reason_info{cluster=%q,reason="busy"}`, t2)); !ok || v != 1 {
		t.Errorf("held target: want reason busy\n%s", text)
	}
	// A scrape timeout shorter than the load sends none.
	before2 = revision(c2)
	_, text = scrape(t, probeURL(base, t2, "fast", ""), "2")
	if v, ok := sample(text, fmt.Sprintf(`etcdperf_probe_reason_info{cluster=%q,reason="timeout"}`, t2)); !ok || v != 1 {
		t.Errorf("short timeout: want reason timeout\n%s", text)
	}
	if d := revision(c2) - before2; d != 0 {
		t.Errorf("short timeout: %d revisions, want none", d)
	}

	// A foreign key in the canary's directory of cluster 2: no load, and it stays.
	if _, err := cli2.Put(ctx, dirKey+"theirs", "x"); err != nil {
		t.Fatal(err)
	}
	_, text = scrape(t, probeURL(base, t2, "fast", ""), "15")
	if v, ok := sample(text, fmt.Sprintf(`etcdperf_foreign_keys{cluster=%q}`, t2)); !ok || v != 1 {
		t.Errorf("foreign key: want etcdperf_foreign_keys 1\n%s", text)
	}

	for _, c := range []struct {
		u    string
		want int
	}{{base + "/probe?module=fast", 400}, {probeURL(base, t1, "nope", ""), 400}, {probeURL(base, ",", "fast", ""), 400}} {
		if code, _ := get(t, c.u); code != c.want {
			t.Errorf("%s: %d, want %d", c.u, code, c.want)
		}
	}

	// Reload: a bad file keeps the modules; a good one swaps them.
	post := func() int {
		resp, err := http.Post(base+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	writeFile(t, dir, "canary.yml", "modules:\n  fast:\n    lod: s\n")
	if code := post(); code != 500 {
		t.Errorf("reload of a bad file: %d, want 500", code)
	}
	if code, _ := get(t, probeURL(base, ",", "fast", "")); code != 400 {
		t.Errorf("after a bad reload: %d", code)
	}
	writeFile(t, dir, "canary.yml", fmt.Sprintf("modules:\n  other:\n    profile: %s\n", filepath.Join(dir, "fast.yaml")))
	if code := post(); code != 200 {
		t.Errorf("reload: %d, want 200", code)
	}
	if code, _ := get(t, probeURL(base, t1, "fast", "")); code != 400 {
		t.Errorf("module fast after the reload: %d, want 400 (gone)", code)
	}

	// The reload closed fast's probers: their leases revoked, so cluster 1
	// holds no canary key; cluster 2 keeps the foreign one.
	if err := tg.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n := keysUnder(t, cli1, prefix); n != 0 {
		t.Errorf("cluster 1: %d keys under %s after close, want 0", n, prefix)
	}
	if n := keysUnder(t, cli2, prefix); n != 1 {
		t.Errorf("cluster 2: %d keys under %s after close, want the foreign 1", n, prefix)
	}
	for _, cli := range []*clientv3.Client{cli1, cli2} {
		if r, err := cli.Get(ctx, "/outside"); err != nil || len(r.Kvs) != 1 {
			t.Errorf("/outside: %v %v", r, err)
		}
	}
}

// TestProbePrometheus: a real Prometheus scrapes one canary's /probe for two
// clusters with the relabelling of docs/canary.md (the target's endpoints to
// ?target=, a __param_cluster label to ?cluster=, the canary's address to
// __address__) and holds each cluster's series under its own cluster label,
// per member.
func TestProbePrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two etcd clusters and prometheus")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c1 := clustertest.Start(t, cluster.Config{})
	c2 := clustertest.Start(t, cluster.Config{})
	_, base := startTargets(t, ctx, t.TempDir(), "/etcdperf/probe-test/")
	jobs := fmt.Sprintf(`  - job_name: etcdperf
    metrics_path: /probe
    params:
      module: [fast]
    scrape_interval: 5s
    scrape_timeout: 5s
    static_configs:
      - targets: ['%s']
        labels:
          __param_cluster: one
      - targets: ['%s']
        labels:
          __param_cluster: two
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: %s
`, strings.Join(c1.Endpoints(), ","), strings.Join(c2.Endpoints(), ","), strings.TrimPrefix(base, "http://"))
	promURL := promtest.Start(t, promtest.Options{Target: strings.TrimPrefix(c1.Endpoints()[0], "http://"), ScrapeConfigs: jobs})
	pc, err := api.NewClient(api.Config{Address: promURL})
	if err != nil {
		t.Fatal(err)
	}
	prom := v1.NewAPI(pc)
	var last model.Value
	for ctx.Err() == nil {
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		v, _, err := prom.Query(qctx, `etcdperf_member_up{job="etcdperf"} * on(cluster) group_left etcdperf_probe_up{job="etcdperf"} == 1`, time.Now())
		qcancel()
		if vec, ok := v.(model.Vector); err == nil && ok {
			last = v
			seen := map[string]bool{}
			for _, s := range vec {
				seen[string(s.Metric["cluster"])+"/"+string(s.Metric["member"])] = true
			}
			if seen["one/m0"] && seen["two/m0"] {
				t.Logf("prometheus holds: %v", vec)
				return
			}
		}
		time.Sleep(time.Second)
	}
	tgs, _ := prom.Targets(context.Background())
	t.Fatalf("no up member of both clusters in prometheus before the deadline; last answer %v; targets %+v", last, tgs.Active)
}
