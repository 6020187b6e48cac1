package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// probeResult is a probe of put latencies lat (ms) and the given class grades.
func probeResult(t *testing.T, end time.Time, status finding.Status, bottleneck string, grades map[finding.Class]finding.Severity, lat ...float64) Result {
	t.Helper()
	h := results.NewHist()
	for _, ms := range lat {
		if err := h.RecordValue(int64(ms * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	x, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	r := Result{Start: end.Add(-5 * time.Second), End: end, HasLeader: true, LeaderKnown: true,
		Verdict: finding.Verdict{Status: status, Bottleneck: bottleneck},
		Run: &results.Run{Ops: []results.Op{{Op: "put", Requests: int64(len(lat)), TargetRPS: 10, ResponseHist: x,
			Latency: results.Summarize(h), ErrorsByCode: map[string]int64{}}}}}
	for c, s := range grades {
		r.Analysis.Findings = append(r.Analysis.Findings, finding.Finding{Class: c, Severity: s})
	}
	return r
}

func gather(t *testing.T, e *Exporter, names ...string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		mfs, err := e.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != n {
				continue
			}
			for _, m := range mf.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
				fmt.Fprintf(&b, "%s{%s} %g\n", n, strings.Join(labels, ","), v)
			}
		}
	}
	return b.String()
}

// TestExporterRecord: each series follows the probes as its HELP says.
func TestExporterRecord(t *testing.T) {
	e := NewExporter(BuildInfo{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26"}, "")
	if got := value(t, e.class.WithLabelValues("disk")); got != ClassUnknown {
		t.Errorf("disk before any probe: %g, want unknown", got)
	}
	t0 := time.Unix(1800000000, 0)
	e.Record(probeResult(t, t0, finding.StatusFail, "disk",
		map[finding.Class]finding.Severity{finding.ClassDisk: finding.Fail, finding.ClassCPU: finding.Warn, finding.ClassNetwork: finding.OK},
		1, 2, 3, 40, 200))
	want := map[string]float64{"disk": ClassFail, "cpu": ClassWarn, "network": ClassOK, "memory": ClassUnknown}
	for c, v := range want {
		if got := value(t, e.class.WithLabelValues(c)); got != v {
			t.Errorf("class %s = %g, want %g", c, got, v)
		}
	}
	if got := gather(t, e, MetricBottleneck, MetricStatus, MetricLastProbe, MetricLastSuccess, MetricHasLeader); got != strings.Join([]string{
		"etcdperf_bottleneck_info{bottleneck=disk,status=fail} 1",
		"etcdperf_verdict_status{} 1",
		"etcdperf_last_probe_timestamp_seconds{} 1.8e+09",
		"etcdperf_last_success_timestamp_seconds{} 1.8e+09",
		"etcdperf_cluster_has_leader{} 1", ""}, "\n") {
		t.Errorf("series:\n%s", got)
	}
	// The histogram: 5 puts, on etcd's bounds (1, 2 and 3 ms in 1, 2, 4; 40 ms in 64; 200 ms in 256).
	for le, n := range map[string]string{"0.001": "1", "0.002": "2", "0.004": "3", "0.032": "3", "0.064": "4", "0.256": "5", "+Inf": "5"} {
		text := expose(t, e)
		line := fmt.Sprintf(`%s_bucket{op="put",le="%s"} %s`, MetricLatency, le, n)
		if !strings.Contains(text, line+"\n") {
			t.Errorf("no %q in\n%s", line, grepLines(text, MetricLatency))
		}
	}

	// A probe of a cluster without a leader: no load, classes unknown, the leader series 0.
	e.Record(Result{End: t0.Add(time.Minute), Skipped: SkipNoLeader, LeaderKnown: true})
	if got := gather(t, e, MetricHasLeader, MetricStatus, MetricBottleneck, MetricLastProbe); got != strings.Join([]string{
		"etcdperf_cluster_has_leader{} 0", "etcdperf_verdict_status{} 2", "etcdperf_last_probe_timestamp_seconds{} 1.8e+09", ""}, "\n") {
		t.Errorf("after a skipped probe:\n%s", got)
	}
	if got := value(t, e.class.WithLabelValues("disk")); got != ClassUnknown {
		t.Errorf("disk after a skipped probe: %g, want unknown", got)
	}
	if got := value(t, e.skipped.WithLabelValues(SkipNoLeader)); got != 1 {
		t.Errorf("skipped{no_leader} = %g", got)
	}

	// Request errors count by code, and the probe is no success.
	r := probeResult(t, t0.Add(2*time.Minute), finding.StatusFail, "none", nil, 1)
	r.Run.Ops[0].Errors, r.Run.Ops[0].ErrorsByCode = 2, map[string]int64{"Unavailable": 2}
	e.Record(r)
	if got := value(t, e.errors.WithLabelValues("Unavailable")); got != 2 {
		t.Errorf("errors{Unavailable} = %g, want 2", got)
	}
	if got := value(t, e.lastSuccess); got != 1.8e9 {
		t.Errorf("last success %g moved on a probe with errors", got)
	}
	if got := value(t, e.probes.WithLabelValues("fail")); got != 2 {
		t.Errorf("probes{fail} = %g, want 2", got)
	}
	// A probe that failed as a whole.
	e.Record(Result{End: t0.Add(3 * time.Minute), Skipped: SkipUnreachable, Err: status.Error(codes.DeadlineExceeded, "x"), Code: "DeadlineExceeded"})
	if got := value(t, e.errors.WithLabelValues("DeadlineExceeded")); got != 1 {
		t.Errorf("errors{DeadlineExceeded} = %g, want 1", got)
	}
	if text := expose(t, e); !strings.Contains(text, `etcdperf_build_info{goversion="go1.26",revision="abc",version="v1.2.3"} 1`) {
		t.Errorf("no build info in\n%s", grepLines(text, "build_info"))
	}
}

// value is one gauge's or counter's value.
func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue() + m.GetCounter().GetValue()
}

// expose is the /metrics text as Prometheus scrapes it.
func expose(t *testing.T, e *Exporter) string {
	t.Helper()
	c := &Canary{Exporter: e, Page: &Page{}, Schedule: Schedule{Every: time.Minute}}
	rec := httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestHelpDocumentsValues(t *testing.T) {
	text := expose(t, NewExporter(BuildInfo{}, ""))
	for _, want := range []string{"0 ok, 1 warn, 2 fail, -1 unknown", "0 pass, 1 fail, 2 invalid"} {
		if !strings.Contains(text, want) {
			t.Errorf("HELP texts do not say %q", want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{status.Error(codes.Unavailable, "down"), "Unavailable"},
		{fmt.Errorf("status of x: %w", status.Error(codes.PermissionDenied, "no")), "PermissionDenied"},
		{context.DeadlineExceeded, "DeadlineExceeded"},
		{fmt.Errorf("wrapped: %w", context.Canceled), "Canceled"},
		{errors.New("plain"), "Unknown"},
	} {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

func TestHealthz(t *testing.T) {
	c := &Canary{Exporter: NewExporter(BuildInfo{}, ""), Page: &Page{}, Schedule: Schedule{Every: time.Millisecond}}
	c.started = time.Now()
	get := func() int {
		rec := httptest.NewRecorder()
		c.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code
	}
	if code := get(); code != 200 {
		t.Errorf("fresh: %d", code)
	}
	c.started = time.Now().Add(-time.Hour) // no tick for an hour at a 1 ms period
	if code := get(); code != 503 {
		t.Errorf("stale: %d, want 503", code)
	}
	c.Record(Result{Skipped: SkipNoLeader})
	if code := get(); code != 200 {
		t.Errorf("after a tick: %d", code)
	}
}

func TestKeeper(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "bench-put-20260101T000000Z.json")
	if err := os.WriteFile(other, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := &Keeper{Dir: dir, N: 3}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 5 {
		start := t0.Add(time.Duration(i) * time.Minute)
		run := &results.Run{Version: results.Version, Command: "serve", StartedAt: start, EndedAt: start.Add(5 * time.Second), Valid: true}
		p, err := k.Save(run)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "serve-*.json"))
	if len(left) != 3 || left[0] != paths[2] || left[2] != paths[4] {
		t.Errorf("kept %v, want the newest 3 of %v", left, paths)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another command's run file was removed: %v", err)
	}
	if _, err := results.ReadFile(paths[4]); err != nil {
		t.Errorf("kept run file does not read: %v", err)
	}
	// A restarted canary's page starts from the kept files, oldest first.
	pts := k.History()
	if len(pts) != 3 || !pts[0].T.Equal(t0.Add(2*time.Minute+5*time.Second)) || pts[2].Status != "error" {
		t.Errorf("history %+v, want the 3 kept probes from %s", pts, t0.Add(2*time.Minute))
	}
	p := &Page{}
	p.Restore(pts)
	if code, body := render(t, p, "/"); code != 200 || !strings.Contains(body, "last 3 probes") {
		t.Errorf("restored page: %d, %q", code, body)
	}
}

// TestExporterCluster: with a cluster name every etcdperf_ series carries it
// as its cluster label (the rules select by it); the process' own do not.
func TestExporterCluster(t *testing.T) {
	text := expose(t, NewExporter(BuildInfo{}, "prod"))
	for _, want := range []string{`etcdperf_probe_up{cluster="prod"} 0`, `etcdperf_probe_reason_info{cluster="prod",reason="starting"} 1`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(text, "etcdperf_"))
		}
	}
	if strings.Contains(text, `go_goroutines{cluster=`) || strings.Contains(text, MetricHasLeader+"{") {
		t.Errorf("go_ series labelled, or the leader series present before a probe:\n%s", text)
	}
}
