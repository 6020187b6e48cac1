package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Severity values of etcdperf_class_severity: an alert fires on >= 1 (warn) or
// >= 2 (fail); unknown (not measured) is -1, below ok, so it never reads as a pass
// of a threshold nor fires one.
var severityValue = map[finding.Severity]float64{finding.OK: 0, finding.Warn: 1, finding.Fail: 2, finding.Unknown: -1}

// WriteOpenMetrics renders the run's figures in the OpenMetrics text format, for
// CI systems and Pushgateway-style collection: per op the response and service
// time quantiles (summaries, in seconds), requests, errors, late starts,
// throughput and target rate; the disk probes' fdatasync quantiles; the run's
// validity and verdict; and one gauge per diagnosed class with its severity.
func (r *Document) WriteOpenMetrics(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.metricFamilies() {
		if _, err := expfmt.MetricFamilyToOpenMetrics(bw, f); err != nil {
			return fmt.Errorf("openmetrics %s: %w", f.GetName(), err)
		}
	}
	if _, err := expfmt.FinalizeOpenMetrics(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// metricFamilies are the report's figures as metric families, in a fixed order.
func (r *Document) metricFamilies() []*dto.MetricFamily {
	var fams []*dto.MetricFamily
	family := func(name, help string, t dto.MetricType) *dto.MetricFamily {
		f := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: t.Enum()}
		fams = append(fams, f)
		return f
	}
	gauge := func(f *dto.MetricFamily, v float64, labels ...string) {
		f.Metric = append(f.Metric, &dto.Metric{Label: pairs(labels), Gauge: &dto.Gauge{Value: proto.Float64(v)}})
	}
	counter := func(f *dto.MetricFamily, v float64, labels ...string) {
		f.Metric = append(f.Metric, &dto.Metric{Label: pairs(labels), Counter: &dto.Counter{Value: proto.Float64(v)}})
	}

	resp := family("etcdperf_response_time_seconds", "Response time from each request's intended start (open loop: no coordinated omission), by op.", dto.MetricType_SUMMARY)
	svc := family("etcdperf_service_time_seconds", "Service time from each request's actual send, by op.", dto.MetricType_SUMMARY)
	respMax := family("etcdperf_response_time_max_seconds", "Slowest response time of the run, by op.", dto.MetricType_GAUGE)
	reqs := family("etcdperf_requests_total", "Requests completed in the measured window, by op.", dto.MetricType_COUNTER)
	errs := family("etcdperf_errors_total", "Requests that failed, by op.", dto.MetricType_COUNTER)
	late := family("etcdperf_late_starts_total", "Requests the generator could not start on schedule, by op.", dto.MetricType_COUNTER)
	tput := family("etcdperf_throughput_requests_per_second", "Achieved throughput over the measured window, by op.", dto.MetricType_GAUGE)
	target := family("etcdperf_target_requests_per_second", "Target rate (0: closed loop, as fast as possible), by op.", dto.MetricType_GAUGE)
	for _, op := range r.Ops {
		resp.Metric = append(resp.Metric, summary(op.Latency, op.Requests, "op", op.Op))
		svc.Metric = append(svc.Metric, summary(op.Service, op.Requests, "op", op.Op))
		gauge(respMax, op.Latency.Max/1e3, "op", op.Op)
		counter(reqs, float64(op.Requests), "op", op.Op)
		counter(errs, float64(op.Errors), "op", op.Op)
		counter(late, float64(op.LateStarts), "op", op.Op)
		gauge(tput, op.ThroughputRPS, "op", op.Op)
		gauge(target, op.TargetRPS, "op", op.Op)
	}
	if len(r.Disk) > 0 {
		fsync := family("etcdperf_disk_fdatasync_seconds", "fdatasync latency of the disk probe, by pattern and quantile.", dto.MetricType_GAUGE)
		iops := family("etcdperf_disk_iops", "Write operations per second of the disk probe, by pattern.", dto.MetricType_GAUGE)
		for _, d := range r.Disk {
			for _, q := range quantiles(d.Fdatasync) {
				gauge(fsync, q.ms/1e3, "pattern", d.Pattern, "quantile", strconv.FormatFloat(q.q, 'g', -1, 64))
			}
			gauge(iops, d.IOPS, "pattern", d.Pattern)
		}
	}
	gauge(family("etcdperf_run_duration_seconds", "Measured window of the run, warm-up excluded.", dto.MetricType_GAUGE), r.DurationS)
	gauge(family("etcdperf_run_start_timestamp_seconds", "When the measured window started, unix seconds.", dto.MetricType_GAUGE), float64(r.StartedAt.UnixNano())/1e9)
	if t := r.Client.Transport; t != "" {
		gauge(family("etcdperf_client_info", "The load generator as labels (always 1): the transport that carried its requests (--transport).", dto.MetricType_GAUGE), 1,
			"transport", t)
	}
	gauge(family("etcdperf_run_valid", "1 when the run is valid (target rate reached, generator not saturated), else 0.", dto.MetricType_GAUGE), b2f(r.Valid))

	status, bottleneck := r.status(), ""
	if r.Diagnosis != nil && r.Verdict != nil {
		bottleneck = r.Verdict.Bottleneck
	}
	gauge(family("etcdperf_verdict_pass", "1 when the verdict is pass, else 0.", dto.MetricType_GAUGE), b2f(status == string(finding.StatusPass)))
	gauge(family("etcdperf_verdict", "The verdict as labels (always 1): status and primary bottleneck.", dto.MetricType_GAUGE), 1,
		"command", r.Command, "status", status, "bottleneck", bottleneck)
	if r.Diagnosis != nil && len(r.Findings) > 0 {
		sev := family("etcdperf_class_severity", "Severity of each diagnosed class: 0 ok, 1 warn, 2 fail, -1 unknown (not measured).", dto.MetricType_GAUGE)
		worst := map[finding.Class]finding.Severity{}
		var classes []finding.Class
		for _, f := range r.Findings {
			if _, seen := worst[f.Class]; !seen {
				classes = append(classes, f.Class)
				worst[f.Class] = f.Severity
			}
			worst[f.Class] = finding.Worst(worst[f.Class], f.Severity)
		}
		slices.Sort(classes)
		for _, c := range classes {
			v, ok := severityValue[worst[c]]
			if !ok {
				v = math.NaN()
			}
			gauge(sev, v, "class", string(c))
		}
	}
	// Families with no sample (a run without ops) are left out.
	return slices.DeleteFunc(fams, func(f *dto.MetricFamily) bool { return len(f.Metric) == 0 })
}

type quantile struct {
	q, ms float64
}

func quantiles(s results.Summary) []quantile {
	return []quantile{{0.5, s.P50}, {0.9, s.P90}, {0.99, s.P99}, {0.999, s.P999}}
}

// summary is one op's latency summary in seconds; the sum is mean × count.
func summary(s results.Summary, count int64, labels ...string) *dto.Metric {
	var qs []*dto.Quantile
	for _, q := range quantiles(s) {
		qs = append(qs, &dto.Quantile{Quantile: proto.Float64(q.q), Value: proto.Float64(q.ms / 1e3)})
	}
	return &dto.Metric{Label: pairs(labels), Summary: &dto.Summary{
		SampleCount: proto.Uint64(uint64(max(count, 0))),
		SampleSum:   proto.Float64(s.Mean / 1e3 * float64(count)),
		Quantile:    qs,
	}}
}

func pairs(kv []string) []*dto.LabelPair {
	var out []*dto.LabelPair
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, &dto.LabelPair{Name: proto.String(kv[i]), Value: proto.String(kv[i+1])})
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
