package serve

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Metric names; dashboards and the shipped alert rules (package k8s) use them.
const (
	MetricLatency     = "etcdperf_probe_latency_seconds"
	MetricClass       = "etcdperf_verdict_class"
	MetricStatus      = "etcdperf_verdict_status"
	MetricBottleneck  = "etcdperf_bottleneck_info"
	MetricLastProbe   = "etcdperf_last_probe_timestamp_seconds"
	MetricLastSuccess = "etcdperf_last_success_timestamp_seconds"
	MetricErrors      = "etcdperf_probe_errors_total"
	MetricProbes      = "etcdperf_probes_total"
	MetricHasLeader   = "etcdperf_cluster_has_leader"
	MetricSkipped     = "etcdperf_probe_skipped_total"
	MetricBuildInfo   = "etcdperf_build_info"

	MetricDBSize          = "etcdperf_cluster_db_size_bytes"
	MetricDBSizeInUse     = "etcdperf_cluster_db_size_in_use_bytes"
	MetricRevision        = "etcdperf_cluster_revision"
	MetricCompactRevision = "etcdperf_cluster_compact_revision"
	MetricUncompacted     = "etcdperf_cluster_uncompacted_revisions"
	MetricOwnRevisions    = "etcdperf_canary_revisions_total"
	MetricOwnBytes        = "etcdperf_canary_written_bytes_total"
	MetricForeignKeys     = "etcdperf_foreign_keys"

	MetricUp         = "etcdperf_probe_up"
	MetricReason     = "etcdperf_probe_reason_info"
	MetricCertExpiry = "etcdperf_tls_certificate_expiry_timestamp_seconds"

	MetricMemberUp        = "etcdperf_member_up"
	MetricMemberLatency   = "etcdperf_member_status_latency_seconds"
	MetricMemberIsLeader  = "etcdperf_member_is_leader"
	MetricMemberHasLeader = "etcdperf_member_has_leader"
	MetricMemberDBSize    = "etcdperf_member_db_size_bytes"
	MetricMemberAlarm     = "etcdperf_member_alarm"
	MetricMemberInfo      = "etcdperf_member_info"

	// LabelMember names a member: its name, or its ID in hex.
	LabelMember = "member"
)

// Values of etcdperf_verdict_class and etcdperf_verdict_status.
const (
	ClassOK      = 0
	ClassWarn    = 1
	ClassFail    = 2
	ClassUnknown = -1

	StatusPass    = 0
	StatusFail    = 1
	StatusInvalid = 2
)

// ClassValue is a severity as etcdperf_verdict_class has it.
func ClassValue(s finding.Severity) float64 {
	switch s {
	case finding.OK:
		return ClassOK
	case finding.Warn:
		return ClassWarn
	case finding.Fail:
		return ClassFail
	}
	return ClassUnknown
}

// StatusValue is a verdict status as etcdperf_verdict_status has it; a probe
// that could not run reads invalid.
func StatusValue(status finding.Status) float64 {
	switch status {
	case finding.StatusPass:
		return StatusPass
	case finding.StatusFail:
		return StatusFail
	}
	return StatusInvalid
}

// LatencyBuckets are the probe latency histogram's upper bounds (seconds):
// etcd's own for its disk and request histograms, 1 ms × 2^k for k = 0..13
// (prometheus.ExponentialBuckets(0.001, 2, 14)), so the probe's latency reads
// against the members' on the same bounds.
var LatencyBuckets = results.EtcdDiskBucketBounds

// BuildInfo is what etcdperf_build_info carries.
type BuildInfo struct{ Version, Revision, GoVersion string }

// LabelCluster is the label every etcdperf_ series carries when serve has a
// --cluster-name: the alert rules select the cluster by it, not by the
// canary's pod (instance).
const LabelCluster = "cluster"

// Exporter holds the series of /metrics and updates them from each probe.
type Exporter struct {
	Registry *prometheus.Registry
	own      prometheus.Registerer // Registry, the etcdperf_ series labelled with the cluster

	mu      sync.Mutex
	latency map[string]*opHist // by op, cumulative since start

	class       *prometheus.GaugeVec
	status      prometheus.Gauge
	bottleneck  *prometheus.GaugeVec
	lastProbe   prometheus.Gauge
	lastSuccess prometheus.Gauge
	errors      *prometheus.CounterVec
	probes      *prometheus.CounterVec
	hasLeader   *prometheus.GaugeVec // no labels: absent until a probe knows
	skipped     *prometheus.CounterVec

	dbSize, dbInUse, revision *prometheus.GaugeVec // absent until known
	compact, uncompacted      *prometheus.GaugeVec
	ownRevisions, ownBytes    prometheus.Counter
	foreign                   *prometheus.GaugeVec
	up                        prometheus.Gauge
	reason, certs             *prometheus.GaugeVec

	memberUp, memberLatency, memberIsLeader, memberHasLeader *prometheus.GaugeVec
	memberDB, memberAlarm, memberInfo                        *prometheus.GaugeVec
}

// opHist is one op's cumulative latency histogram.
type opHist struct {
	counts []uint64 // per bucket of LatencyBuckets, not cumulative; the last is +Inf
	count  uint64
	sum    float64
}

// NewExporter registers every series in a registry of its own, with the Go
// and process collectors, and sets the build info; the etcdperf_ series carry
// cluster as their cluster label unless it is "". Every class starts unknown;
// the leader and the footprint series are absent until a probe knows them.
func NewExporter(b BuildInfo, cluster string) *Exporter {
	e := newExporter(cluster)
	e.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.setBuild(b)
	return e
}

// setBuild registers etcdperf_build_info: the canary's rules read its absence
// as a canary that is gone, for a /probe job as for a scheduled one.
func (e *Exporter) setBuild(b BuildInfo) {
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricBuildInfo,
		Help: "Always 1: the etcdperf build serving these metrics."}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(b.Version, b.Revision, b.GoVersion).Set(1)
	e.own.MustRegister(build)
}

// newExporter is an Exporter of the probe's series only: /probe's answer.
func newExporter(cluster string) *Exporter {
	e := &Exporter{
		Registry: prometheus.NewRegistry(),
		latency:  map[string]*opHist{},
		class: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricClass,
			Help: "Grade of each diagnosis class in the last probe: 0 ok, 1 warn, 2 fail, -1 unknown (not measured, or the probe could not run)."}, []string{"class"}),
		status: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricStatus,
			Help: "Verdict of the last probe (etcdperf check's default verdict): 0 pass, 1 fail, 2 invalid (also when the probe could not run)."}),
		bottleneck: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricBottleneck,
			Help: "Always 1: the bottleneck the last probe named (none when every class is ok) and its verdict status."}, []string{"bottleneck", "status"}),
		lastProbe: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastProbe,
			Help: "Unix time the last probe that sent load finished."}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastSuccess,
			Help: "Unix time the last successful probe finished: it sent its load, every request succeeded and a verdict was made (of any status)."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricErrors,
			Help: "Failed probe requests, and probes that failed as a whole, by gRPC code name."}, []string{"code"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricProbes,
			Help: "Probes run, by result: pass, fail, invalid (the verdict's status) or error (no verdict)."}, []string{"result"}),
		hasLeader: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricHasLeader,
			Help: "1 when the cluster had a leader before the last probe, else 0 (and no load was sent); absent until a member answered."}, nil),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricSkipped,
			Help: "Ticks on which no load was sent, by reason: no_leader, unreachable."}, []string{"reason"}),
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, nil)
	}
	e.dbSize = gauge(MetricDBSize, "Size of the backend database file of the member that answered the last status (etcd's etcd_mvcc_db_total_size_in_bytes).")
	e.dbInUse = gauge(MetricDBSizeInUse, "Part of that file in use; the rest is freed pages that only a defragmentation returns.")
	e.revision = gauge(MetricRevision, "The cluster's current revision before the last probe.")
	e.compact = gauge(MetricCompactRevision, "The oldest revision still readable (the last compaction's), 0 when the cluster was never compacted.")
	e.uncompacted = gauge(MetricUncompacted, "Revisions the cluster keeps since its last compaction: each holds a value in the database until a compaction.")
	e.ownRevisions = prometheus.NewCounter(prometheus.CounterOpts{Name: MetricOwnRevisions,
		Help: "Revisions this canary wrote (one put of its key per probe): its share of the database's growth on a cluster that never compacts."})
	e.ownBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: MetricOwnBytes,
		Help: "Bytes of key and value in the revisions this canary wrote."})
	e.foreign = gauge(MetricForeignKeys, "Keys in the canary's own directory that it did not write, at the last look; while any is there, no load is sent.")
	e.up = prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricUp,
		Help: "1 when the last tick sent its load and every request succeeded, else 0 (etcdperf_probe_reason_info says why)."})
	e.reason = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricReason,
		Help: "Always 1: why the last tick was not a clean probe (ok, unreachable, tls, no_leader, foreign_keys, request_errors, error); starting until the first tick ends."}, []string{"reason"})
	e.reason.WithLabelValues("starting").Set(1)
	e.certs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricCertExpiry,
		Help: "Unix time the first certificate in each TLS file (--cacert, --cert) expires, read at every tick."}, []string{"file"})
	member := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append([]string{LabelMember}, labels...))
	}
	e.memberUp = member(MetricMemberUp, "1 when the member answered Status on the canary's own connection to it within the command timeout, else 0.")
	e.memberLatency = member(MetricMemberLatency, "Round trip of the member's Status at the last probe (seconds).")
	e.memberIsLeader = member(MetricMemberIsLeader, "1 when the member said it leads, else 0.")
	e.memberHasLeader = member(MetricMemberHasLeader, "1 when the member knows a leader, else 0 (as its etcd_server_has_leader).")
	e.memberDB = member(MetricMemberDBSize, "Size of the member's backend database file (bytes).")
	e.memberAlarm = member(MetricMemberAlarm, "Always 1: an alarm raised on the member (NOSPACE, CORRUPT).", "alarm")
	e.memberInfo = member(MetricMemberInfo, "Always 1: the member's etcd version and the client URL the canary asks.", "version", "endpoint")
	for _, c := range finding.Classes {
		e.class.WithLabelValues(string(c)).Set(ClassUnknown)
	}
	e.status.Set(StatusInvalid)
	for _, r := range []string{string(finding.StatusPass), string(finding.StatusFail), string(finding.StatusInvalid), "error"} {
		e.probes.WithLabelValues(r)
	}
	for _, r := range []string{SkipNoLeader, SkipUnreachable, SkipForeign} {
		e.skipped.WithLabelValues(r)
	}
	e.own = e.Registry
	if cluster != "" {
		e.own = prometheus.WrapRegistererWith(prometheus.Labels{LabelCluster: cluster}, e.Registry)
	}
	e.own.MustRegister(e.class, e.status, e.bottleneck, e.lastProbe, e.lastSuccess, e.errors,
		e.probes, e.hasLeader, e.skipped, (*latencyCollector)(e),
		e.dbSize, e.dbInUse, e.revision, e.compact, e.uncompacted, e.ownRevisions, e.ownBytes, e.foreign,
		e.up, e.reason, e.certs,
		e.memberUp, e.memberLatency, e.memberIsLeader, e.memberHasLeader, e.memberDB, e.memberAlarm, e.memberInfo)
	return e
}

// Record updates the series from one probe's result.
func (e *Exporter) Record(r Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	reason := r.Reason()
	e.reason.Reset()
	e.reason.WithLabelValues(reason).Set(1)
	e.up.Set(b2f(reason == ReasonOK))
	e.certs.Reset()
	for f, t := range r.Certs {
		e.certs.WithLabelValues(f).Set(float64(t.Unix()))
	}
	if r.LeaderKnown {
		e.hasLeader.WithLabelValues().Set(b2f(r.HasLeader))
	}
	if r.Members != nil {
		e.recordMembers(r.Members)
	}
	if s := r.State; s.Known {
		e.dbSize.WithLabelValues().Set(float64(s.DBSize))
		e.dbInUse.WithLabelValues().Set(float64(s.DBSizeInUse))
		e.revision.WithLabelValues().Set(float64(s.Revision))
		if s.CompactKnown {
			e.compact.WithLabelValues().Set(float64(s.CompactRevision))
			e.uncompacted.WithLabelValues().Set(float64(s.Uncompacted()))
		}
		e.foreign.WithLabelValues().Set(float64(r.ForeignN))
	}
	if r.Revisions > 0 {
		e.ownRevisions.Add(float64(r.Revisions))
		e.ownBytes.Add(float64(r.WroteBytes))
	}
	e.bottleneck.Reset()
	if !r.Ran() {
		if r.Skipped != "" {
			e.skipped.WithLabelValues(r.Skipped).Inc()
		} else {
			e.probes.WithLabelValues("error").Inc()
		}
		if r.Err != nil {
			e.errors.WithLabelValues(r.Code).Inc()
		}
		// A verdict of the past is no verdict of now.
		for _, c := range finding.Classes {
			e.class.WithLabelValues(string(c)).Set(ClassUnknown)
		}
		e.status.Set(StatusInvalid)
		return
	}
	end := float64(r.End.UnixNano()) / 1e9
	e.lastProbe.Set(end)
	var reqErrs int64
	for _, op := range r.Run.Ops {
		for code, n := range op.ErrorsByCode {
			e.errors.WithLabelValues(code).Add(float64(n))
			reqErrs += n
		}
		if op.TargetRPS > 0 { // paced requests, not watch events
			e.observe(op)
		}
	}
	if r.Err != nil && reqErrs == 0 {
		e.errors.WithLabelValues(r.Code).Inc()
	}
	grades := map[finding.Class]finding.Severity{}
	for _, f := range r.Analysis.Findings {
		if g, ok := grades[f.Class]; ok {
			grades[f.Class] = finding.Worst(g, f.Severity)
		} else {
			grades[f.Class] = f.Severity
		}
	}
	for _, c := range finding.Classes {
		e.class.WithLabelValues(string(c)).Set(ClassValue(grades[c]))
	}
	e.status.Set(StatusValue(r.Verdict.Status))
	e.bottleneck.WithLabelValues(r.Verdict.Bottleneck, string(r.Verdict.Status)).Set(1)
	e.probes.WithLabelValues(string(r.Verdict.Status)).Inc()
	if r.Err == nil && r.Run.Paced().Errors == 0 {
		e.lastSuccess.Set(end)
	}
}

// recordMembers replaces the per-member series with ms: a member removed
// from the cluster leaves no series behind; one that does not answer reads
// up 0 and keeps no other value.
func (e *Exporter) recordMembers(ms []MemberState) {
	for _, v := range []*prometheus.GaugeVec{e.memberUp, e.memberLatency, e.memberIsLeader, e.memberHasLeader, e.memberDB, e.memberAlarm, e.memberInfo} {
		v.Reset()
	}
	for _, m := range ms {
		e.memberUp.WithLabelValues(m.Name).Set(b2f(m.Up))
		for _, a := range m.Alarms {
			e.memberAlarm.WithLabelValues(m.Name, a).Set(1)
		}
		if !m.Up {
			continue
		}
		e.memberLatency.WithLabelValues(m.Name).Set(m.Latency.Seconds())
		e.memberIsLeader.WithLabelValues(m.Name).Set(b2f(m.IsLeader))
		e.memberHasLeader.WithLabelValues(m.Name).Set(b2f(m.HasLeader))
		e.memberDB.WithLabelValues(m.Name).Set(float64(m.DBSize))
		e.memberInfo.WithLabelValues(m.Name, m.Version, m.Endpoint).Set(1)
	}
}

// observe adds op's response times to its cumulative histogram.
func (e *Exporter) observe(op results.Op) {
	h, err := op.ResponseHist.Decode()
	if err != nil || h.TotalCount() == 0 {
		return
	}
	oh := e.latency[op.Op]
	if oh == nil {
		oh = &opHist{counts: make([]uint64, len(LatencyBuckets)+1)}
		e.latency[op.Op] = oh
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		// A bar's lowest value decides its bucket, as results.EtcdBuckets counts.
		s := float64(bar.From) / 1e6
		i := 0
		for i < len(LatencyBuckets) && s > LatencyBuckets[i] {
			i++
		}
		oh.counts[i] += uint64(bar.Count)
		oh.count += uint64(bar.Count)
		oh.sum += float64(bar.Count) * float64(bar.From+bar.To) / 2 / 1e6
	}
}

// latencyCollector exposes the cumulative probe latency histograms.
type latencyCollector Exporter

var latencyDesc = prometheus.NewDesc(MetricLatency,
	"Response time of the probe's requests (from the intended start, open loop), by op; buckets are etcd's 1 ms × 2^k.",
	[]string{"op"}, nil)

// Describe implements prometheus.Collector.
func (l *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- latencyDesc }

// Collect implements prometheus.Collector.
func (l *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for op, h := range l.latency {
		buckets := make(map[float64]uint64, len(LatencyBuckets))
		var cum uint64
		for i, le := range LatencyBuckets {
			cum += h.counts[i]
			buckets[le] = cum
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, h.count, h.sum, buckets, op)
	}
}

// Code is the gRPC code name of a probe's error for etcdperf_probe_errors_total:
// the status code of a gRPC error, DeadlineExceeded or Canceled for a context's,
// else Unknown.
func Code(err error) string {
	switch {
	case err == nil:
		return codes.OK.String()
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded.String()
	case errors.Is(err, context.Canceled):
		return codes.Canceled.String()
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code().String()
	}
	return codes.Unknown.String()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
