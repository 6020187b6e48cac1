package report

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/etcdperf/etcdperf/finding"
)

// parseOpenMetrics decodes an OpenMetrics text with expfmt's own parser.
func parseOpenMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	fams := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return fams
		}
		if err != nil {
			t.Fatalf("expfmt: %v\n%s", err, text)
		}
		fams[f.GetName()] = &f
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestOpenMetrics: the report's figures parse as OpenMetrics with expfmt, and
// carry the same numbers: per-op quantiles in seconds, throughput, the verdict and
// every diagnosed class's severity.
func TestOpenMetrics(t *testing.T) {
	run, diag := fixtureRun(t), fixtureDiagnosis()
	r, err := NewDocument(run, diag)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Write(&b, "openmetrics"); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.HasSuffix(text, "# EOF\n") {
		t.Errorf("no # EOF at the end")
	}
	fams := parseOpenMetrics(t, text)
	resp := fams["etcdperf_response_time_seconds"]
	if resp.GetType() != dto.MetricType_SUMMARY || len(resp.GetMetric()) != len(r.Ops) {
		t.Fatalf("response time: %v", resp)
	}
	for i, m := range resp.GetMetric() {
		op := r.Ops[i]
		if label(m, "op") != op.Op || m.GetSummary().GetSampleCount() != uint64(op.Requests) {
			t.Errorf("op %s: labels %v count %d", op.Op, m.GetLabel(), m.GetSummary().GetSampleCount())
		}
		for _, q := range m.GetSummary().GetQuantile() {
			if q.GetQuantile() == 0.99 && math.Abs(q.GetValue()-op.Latency.P99/1e3) > 1e-9 {
				t.Errorf("op %s p99 %g s, want %g ms", op.Op, q.GetValue(), op.Latency.P99)
			}
		}
	}
	tput := fams["etcdperf_throughput_requests_per_second"]
	if tput.GetMetric()[0].GetGauge().GetValue() != r.Ops[0].ThroughputRPS {
		t.Errorf("throughput %v, want %g", tput.GetMetric()[0], r.Ops[0].ThroughputRPS)
	}
	if c := fams["etcdperf_requests_total"]; c == nil || c.GetType() != dto.MetricType_COUNTER || c.GetMetric()[0].GetCounter().GetValue() != float64(r.Ops[0].Requests) {
		var names []string
		for n := range fams {
			names = append(names, n)
		}
		t.Errorf("requests %v (families %v)", c, names)
	}
	pass := fams["etcdperf_verdict_pass"].GetMetric()[0].GetGauge().GetValue()
	if want := b2f(diag.Verdict.Status == finding.StatusPass); pass != want {
		t.Errorf("verdict_pass %g, want %g (%s)", pass, want, diag.Verdict.Status)
	}
	v := fams["etcdperf_verdict"].GetMetric()[0]
	if label(v, "status") != string(diag.Verdict.Status) || label(v, "bottleneck") != diag.Verdict.Bottleneck {
		t.Errorf("verdict labels %v, want %s/%s", v.GetLabel(), diag.Verdict.Status, diag.Verdict.Bottleneck)
	}
	want := map[string]finding.Severity{}
	for _, f := range diag.Findings {
		if w, seen := want[string(f.Class)]; seen {
			want[string(f.Class)] = finding.Worst(w, f.Severity)
		} else {
			want[string(f.Class)] = f.Severity
		}
	}
	sev := fams["etcdperf_class_severity"]
	if len(sev.GetMetric()) != len(want) {
		t.Errorf("%d class gauges, want %d", len(sev.GetMetric()), len(want))
	}
	for _, m := range sev.GetMetric() {
		c := label(m, "class")
		if m.GetGauge().GetValue() != severityValue[want[c]] {
			t.Errorf("class %s: %g, want %s", c, m.GetGauge().GetValue(), want[c])
		}
	}
	if len(run.Disk) > 0 && fams["etcdperf_disk_fdatasync_seconds"] == nil {
		t.Error("disk probe missing")
	}
}
