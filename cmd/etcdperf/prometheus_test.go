package main

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/promtest"
	"github.com/etcdperf/etcdperf/results"
)

// TestPrometheusMatchesScrapes analyzes one bench run twice: with the scrapes the
// run file holds, taken from the member directly, and with the member's samples
// read back from a real Prometheus that scraped it every second. The findings
// must agree class by class.
func TestPrometheusMatchesScrapes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and prometheus")
	}
	// The member keeps its data in memory: its disk signals then sit far from
	// their thresholds, where the two sources' windows (the run's, and
	// Prometheus's whole seconds) cannot grade them apart; on a disk another
	// job writes to, a count of slow fsyncs could differ by one across a line.
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100, Dir: faults.MemDir(t)})
	ep := c.Endpoints()[0]
	u, err := url.Parse(ep)
	if err != nil {
		t.Fatal(err)
	}
	prom := promtest.Start(t, promtest.Options{Target: u.Host})
	// Some history before the run, as a real Prometheus has.
	time.Sleep(2 * time.Second)

	path := filepath.Join(t.TempDir(), "run.json")
	r := runBin(t, nil, "bench", "put", "--endpoints", ep, "--rate", "300", "--duration", "6s", "--val-size", "1024",
		"--run-file", path, "-w", "json")
	if r.code != ExitOK && r.code != ExitFail && r.code != ExitInvalid {
		t.Fatalf("bench: exit %d: %s", r.code, r.stderr)
	}
	run, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Let Prometheus scrape the member once more after the run.
	time.Sleep(2500 * time.Millisecond)

	direct, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pf := &promFlags{url: prom, selector: `job="etcd"`}
	ctx := context.Background()
	fromProm, err := analyzePrometheus(ctx, pf, []string{path}, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	promRun, err := pf.run(ctx, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, sc := range promRun.Scrapes {
		at, _ := time.Parse(time.RFC3339Nano, sc.Time) // RFC3339Nano trims trailing zeros: no fixed width
		phases = append(phases, sc.Phase+"@"+at.Format("15:04:05.000"))
	}
	t.Logf("run %s .. %s; Prometheus scrapes: %v", run.StartedAt.Format("15:04:05.000"), run.EndedAt.Format("15:04:05.000"), phases)
	t.Logf("direct:     %s", direct.Verdict.Summary)
	t.Logf("prometheus: %s", fromProm.Verdict.Summary)

	byClass := map[finding.Class]finding.Finding{}
	for _, f := range fromProm.Findings {
		byClass[f.Class] = f
	}
	if len(fromProm.Findings) != len(direct.Findings) {
		t.Errorf("%d findings from Prometheus, %d from scrapes", len(fromProm.Findings), len(direct.Findings))
	}
	for _, d := range direct.Findings {
		p, ok := byClass[d.Class]
		t.Logf("%-10s direct %-7s | prometheus %-7s | %s | %s", d.Class, d.Severity, p.Severity, d.Summary, p.Summary)
		if !ok || p.Severity != d.Severity {
			t.Errorf("%s: %s from Prometheus, %s from scrapes", d.Class, p.Severity, d.Severity)
		}
		for i, e := range d.Evidence {
			if i < len(p.Evidence) && e.Observed != p.Evidence[i].Observed {
				t.Logf("           %s: %s | %s", e.Signal, e.Observed, p.Evidence[i].Observed)
			}
		}
	}
	if fromProm.Verdict.Status != direct.Verdict.Status || fromProm.Verdict.Bottleneck != direct.Verdict.Bottleneck {
		t.Errorf("verdict %s/%s from Prometheus, %s/%s from scrapes", fromProm.Verdict.Status, fromProm.Verdict.Bottleneck,
			direct.Verdict.Status, direct.Verdict.Bottleneck)
	}

	// The selector matches nothing; the URL refuses: one clear line, exit 2.
	for _, p := range []*promFlags{
		{url: prom, selector: `job="not-etcd"`},
		{url: "http://127.0.0.1:1"},
	} {
		_, err := analyzePrometheus(ctx, p, []string{path}, analyze.Options{})
		if err == nil || cli.Code(err) != ExitError || strings.Contains(cli.OneLine(err), "\n") {
			t.Errorf("%+v: %v (exit %d)", p, err, cli.Code(err))
		}
		t.Logf("%s %s: %s", p.url, p.selector, cli.OneLine(err))
	}
	if _, err := analyzePrometheus(ctx, &promFlags{url: prom, selector: `job="not-etcd"`}, []string{path}, analyze.Options{}); !errors.Is(err, analyze.ErrNoSeries) {
		t.Errorf("no matching series: %v", err)
	}
}

// TestPrometheusFlags: the window needs a start, and must not be empty.
func TestPrometheusFlags(t *testing.T) {
	ctx := context.Background()
	at := time.Unix(1800000000, 0)
	for _, c := range []struct {
		p    promFlags
		want string
	}{
		{promFlags{url: "http://127.0.0.1:1"}, "needs --from"},
		{promFlags{url: "http://127.0.0.1:1", from: at, to: at}, "is not after"},
		{promFlags{url: "http://127.0.0.1:1", from: at, to: at.Add(time.Minute), httpConfig: "/nonexistent.yml"}, "no such file"},
		{promFlags{url: "http://127.0.0.1:1", from: at, to: at.Add(time.Minute), httpConfig: "prometheus_test.go"}, "prometheus http config"},
	} {
		_, err := analyzePrometheus(ctx, &c.p, nil, analyze.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || cli.Code(err) != ExitError {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
