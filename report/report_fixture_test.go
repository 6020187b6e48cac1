package report

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// The synthetic run of the report tests: deterministic (fixed times, histograms
// filled with fixed values) and shaped like a real one, with a stall at seconds
// 12-13 that shows in the client latency and in the members' WAL fsync and
// backend commit histograms.

var fixtureStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const fixtureSeconds = 20

// record fills h with n values spread evenly over [lo, hi] microseconds.
func record(t testing.TB, h *hdr.Histogram, n int, lo, hi int64) {
	t.Helper()
	for i := range n {
		v := lo
		if n > 1 {
			v = lo + (hi-lo)*int64(i)/int64(n-1)
		}
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
}

func encode(t testing.TB, h *hdr.Histogram) results.Hist {
	t.Helper()
	x, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// fixtureOp builds an op whose per-second latencies are spread over [lo, hi] µs,
// with a stall in seconds 12 and 13 that pushes a tenth of the requests to 40-180 ms
// of response time (the generator queues behind the server) and 30-90 ms of service time.
func fixtureOp(t testing.TB, name string, perSec int, lo, hi int64, target float64, shift func(sec int) float64) results.Op {
	resp, serv := results.NewHist(), results.NewHist()
	op := results.Op{Op: name, TargetRPS: target}
	for s := range fixtureSeconds {
		r, v := results.NewHist(), results.NewHist()
		n := int(float64(perSec) * shift(s))
		stalled := s == 12 || s == 13
		if stalled {
			record(t, r, n*9/10, lo, hi)
			record(t, r, n/10, 40_000, 180_000)
			record(t, v, n*9/10, lo, hi*8/10)
			record(t, v, n/10, 30_000, 90_000)
		} else {
			record(t, r, n, lo, hi)
			record(t, v, n, lo, hi*8/10)
		}
		errs := int64(0)
		if stalled {
			errs = 3
		}
		op.Intervals = append(op.Intervals, results.Interval{
			Start: fixtureStart.Add(time.Duration(s) * time.Second), Requests: int64(n) + errs, Errors: errs,
			Response: encode(t, r), Service: encode(t, v),
		})
		op.Requests += int64(n) + errs
		op.Errors += errs
		resp.Merge(r)
		serv.Merge(v)
	}
	op.ThroughputRPS = float64(op.Requests-op.Errors) / fixtureSeconds
	op.Latency, op.Service = results.Summarize(resp), results.Summarize(serv)
	op.ResponseHist, op.ServiceHist = encode(t, resp), encode(t, serv)
	if op.Errors > 0 {
		op.ErrorsByCode = map[string]int64{"Unavailable": 2, "DeadlineExceeded": op.Errors - 2}
	}
	return op
}

// bucketLine matches one bucket line of etcd's disk histograms in exposition text.
var bucketLine = regexp.MustCompile(`^(etcd_disk_(?:wal_fsync|backend_commit)_duration_seconds)_bucket\{le="([^"]+)"\} \d+$`)

// scrapeText rewrites the captured /metrics text of etcd 3.6.16 with new cumulative
// counts for the WAL fsync and backend commit histograms, given as observations per
// bucket (etcd's 14 bounds, then +Inf), so the text stays exactly as etcd writes it.
func scrapeText(t testing.TB, tmpl string, wal, commit []int64) string {
	t.Helper()
	counts := map[string][]int64{
		"etcd_disk_wal_fsync_duration_seconds":      wal,
		"etcd_disk_backend_commit_duration_seconds": commit,
	}
	idx := map[string]int{}
	cum := map[string]int64{}
	var out []string
	for _, line := range strings.Split(tmpl, "\n") {
		fam := ""
		for f := range counts {
			if strings.HasPrefix(line, f+"_") {
				fam = f
			}
		}
		switch {
		case fam == "":
		case bucketLine.MatchString(line):
			m := bucketLine.FindStringSubmatch(line)
			cum[fam] += counts[fam][idx[fam]]
			idx[fam]++
			line = fmt.Sprintf("%s_bucket{le=%q} %d", fam, m[2], cum[fam])
		case strings.HasPrefix(line, fam+"_count "):
			line = fmt.Sprintf("%s_count %d", fam, cum[fam])
		case strings.HasPrefix(line, fam+"_sum "):
			line = fmt.Sprintf("%s_sum %g", fam, float64(cum[fam])*0.0005)
		}
		out = append(out, line)
	}
	for f, c := range counts {
		if idx[f] != len(c) {
			t.Fatalf("%s: template has %d buckets, counts %d", f, idx[f], len(c))
		}
	}
	return strings.Join(out, "\n")
}

// fixtureScrapes are one member's scrapes: before the window, every 4 s during it,
// after it. Each interval adds fsyncs mostly under 1 ms; the interval holding the
// stall adds slow ones (64-128 ms WAL fsyncs, 128-256 ms commits).
func fixtureScrapes(t testing.TB) []results.Scrape {
	tmpl, err := os.ReadFile("testdata/metrics-etcd-3.6.16.txt")
	if err != nil {
		t.Fatal(err)
	}
	wal := make([]int64, 15)
	commit := make([]int64, 15)
	var out []results.Scrape
	add := func(phase string, at time.Time) {
		out = append(out, results.Scrape{Member: "m0", URL: "http://127.0.0.1:2379/metrics", Phase: phase,
			Time: at.Format(time.RFC3339Nano), Text: scrapeText(t, string(tmpl), wal, commit)})
	}
	add(results.PhaseBefore, fixtureStart.Add(-3*time.Second))
	for s := 0; s <= fixtureSeconds; s += 4 {
		// Observations of the interval that ends at s.
		wal[0] += 3800
		wal[1] += 150
		wal[2] += 40
		commit[0] += 30
		commit[1] += 8
		commit[3] += 2
		if s == 16 {
			wal[7] += 120
			wal[8] += 30
			commit[7] += 6
		}
		phase := results.PhaseDuring
		if s == fixtureSeconds {
			phase = results.PhaseAfter
		}
		add(phase, fixtureStart.Add(time.Duration(s)*time.Second+250*time.Millisecond))
	}
	// A failed scrape is kept in run files; the plots must skip it.
	out = append(out, results.Scrape{Member: "m0", Phase: results.PhaseDuring, Time: fixtureStart.Add(10 * time.Second).Format(time.RFC3339Nano), Error: "context deadline exceeded"})
	return out
}

func fixtureDisk(t testing.TB) []results.DiskResult {
	sync, write := results.NewHist(), results.NewHist()
	record(t, sync, 9900, 150, 900)
	record(t, sync, 100, 2_000, 14_000)
	record(t, write, 10000, 8, 40)
	fio := results.DiskResult{
		Pattern: "fio", Dir: "/var/lib/etcd/etcdperf-probe", BlockSize: 2300, Bytes: 23068672, DurationS: 4.2,
		Writes: 10000, Fdatasyncs: 10000, IOPS: 2380.9, MBPerS: 5.49,
		Fdatasync: results.Summarize(sync), Write: results.Summarize(write), SyncHist: encode(t, sync), WriteHist: encode(t, write),
		Grade: "pass", GradeReason: "fdatasync p99 0.900 ms < 10 ms (etcd FAQ)",
		FioCommand: "fio --name=etcdperf --directory=/var/lib/etcd/etcdperf-probe --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300",
	}
	bsync, commit := results.NewHist(), results.NewHist()
	record(t, bsync, 500, 300, 1_500)
	record(t, commit, 50, 1_000, 30_000)
	cs := results.Summarize(commit)
	wsync := results.NewHist()
	record(t, wsync, 5000, 200, 1_200)
	record(t, wsync, 60, 9_000, 22_000)
	etcd := results.DiskResult{
		Pattern: "etcd", Dir: "/var/lib/etcd/etcdperf-probe", BlockSize: 4096, Bytes: 40960000, DurationS: 5,
		Writes: 5060, Fdatasyncs: 5060, IOPS: 1012, MBPerS: 8.19,
		Fdatasync: results.Summarize(wsync), SyncHist: encode(t, wsync), Grade: "warn",
		GradeReason: "fdatasync p99 12.1 ms ≥ 10 ms (etcd FAQ; OpenShift warns at 20 ms)",
		Backend: &results.DiskResult{Pattern: "backend", BlockSize: 4096, IOPS: 100, MBPerS: 0.4, Fdatasync: results.Summarize(bsync), SyncHist: encode(t, bsync),
			Commit: &cs, CommitHist: encode(t, commit), Grade: "pass"},
	}
	return []results.DiskResult{fio, etcd}
}

func fixtureRun(t testing.TB) *results.Run {
	t.Helper()
	flat := func(int) float64 { return 1 }
	// Range load rises over the run, so the throughput panel is not two flat lines.
	rising := func(s int) float64 { return 0.6 + 0.04*float64(s) }
	yes := true
	return &results.Run{
		Version: results.Version, Tool: results.Tool{Name: "etcdperf", Version: "v0.1.0", GoVersion: "go1.26.8"},
		Command: "bench mixed", StartedAt: fixtureStart.Add(-2 * time.Second), EndedAt: fixtureStart.Add(fixtureSeconds * time.Second),
		Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}, ServerVersion: "3.6.16", ClusterID: "cdf818194e3a8c32",
			Members: []results.Member{{ID: "8e9e05c52164694d", Name: "m0", ClientURLs: []string{"http://127.0.0.1:2379"}, IsLeader: true}}},
		Flags: map[string]string{"rate": "1000"},
		Valid: true, WarmupS: 2, DurationS: fixtureSeconds,
		Ops: []results.Op{
			fixtureOp(t, "put", 1000, 700, 2_400, 1000, flat),
			fixtureOp(t, "range", 500, 250, 900, 0, rising),
		},
		Client:  results.Client{CPUSeconds: 7.4, MaxRSSBytes: 96 << 20, Cores: 2, PacingLagP99Ms: 0.21, Transport: "lean"},
		Disk:    fixtureDisk(t),
		Scrapes: fixtureScrapes(t),
		Host: &results.Host{Hostname: "bench-1", CPUs: 2, CPUModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", MemoryBytes: 8 << 30,
			DataDir: "/var/lib/etcd", DataDirFS: "ext4", Disk: &results.Disk{Device: "sda", Rotational: &yes}},
	}
}

func f64(v float64) *float64 { return &v }

func fixtureDiagnosis() *finding.Diagnosis {
	points := []finding.CurvePoint{{ThroughputRPS: 200, P99Ms: 1.9}, {ThroughputRPS: 400, P99Ms: 2.0}, {ThroughputRPS: 800, P99Ms: 2.3}, {ThroughputRPS: 1600, P99Ms: 2.9}, {ThroughputRPS: 2400, P99Ms: 4.8}, {ThroughputRPS: 2900, P99Ms: 12.5}, {ThroughputRPS: 3050, P99Ms: 41}}
	return &finding.Diagnosis{
		Verdict: &finding.Verdict{Status: "fail", Bottleneck: "disk", Ranked: []string{"disk", "cpu"},
			Summary: "WAL fsync p99 reached 112 ms during the run (guideline < 10 ms): the disk stalls writes."},
		Findings: []finding.Finding{
			{Class: "disk", Severity: "fail", Summary: "WAL fsync p99 112 ms over the run, 11× the guideline",
				Evidence: []finding.Evidence{
					{Signal: "etcd_disk_wal_fsync_duration_seconds p99", Member: "m0", Observed: "112 ms (bucket 64-128 ms)", Threshold: "< 10 ms", Source: "etcd FAQ", Severity: "fail"},
					{Signal: "etcd_disk_backend_commit_duration_seconds p99", Member: "m0", Observed: "180 ms", Threshold: "< 25 ms", Source: "etcd FAQ", Severity: "fail"},
				},
				Advice: "Put the data dir on a dedicated SSD; check `fio` p99 fdatasync under 10 ms."},
			{Class: "cpu", Severity: "warn", Summary: "server CPU 78% of 2 cores",
				Evidence: []finding.Evidence{{Signal: "process_cpu_seconds_total rate / cores", Member: "m0", Observed: "0.78", Threshold: "< 0.7", Source: "etcdperf", Severity: "warn"}}},
			{Class: "network", Severity: "unknown", Summary: "single member: no peer round trips to grade"},
		},
		Budget: &finding.Budget{Op: "put", ClientP50Ms: f64(1.55), ClientP99Ms: f64(96),
			Parts: []finding.BudgetPart{
				{Component: "network to leader", P50Ms: f64(0.08), P99Ms: f64(0.3), Source: "client service time - server request time"},
				{Component: "wal fsync", P50Ms: f64(0.6), P99Ms: f64(112), Source: "etcd_disk_wal_fsync_duration_seconds"},
				{Component: "replication", Source: "etcd_network_peer_round_trip_time_seconds (single member)"},
				{Component: "apply/backend", P50Ms: f64(0.3), P99Ms: f64(4), Source: "etcd_server_apply_duration_seconds"},
				{Component: "unexplained", P50Ms: f64(0.57), Source: "the rest"},
			},
			Note: "each part is its own percentile over the window"},
		Hardware: &finding.HardwareGrade{HostTier: "small", WorkloadTier: "medium", Shortfalls: []string{"2 CPUs where medium wants 4", "8 GiB memory where medium wants 16 GiB"},
			Summary: "this workload is medium; this host meets small", Source: "etcd op-guide/hardware.md"},
		Curve: &finding.Curve{Op: "put", Points: points, Knee: FindKnee(points), SLOMs: 10},
		Notes: []string{"1 scrape of m0 failed: context deadline exceeded"},
	}
}
