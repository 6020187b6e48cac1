package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// analyzeFixture is analyze's recorded run: one member of etcd 3.6 scraped before
// and after 300 puts (the dumps in analyze/testdata).
func analyzeFixture(t testing.TB) analyze.Result {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "analyze", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	run := &results.Run{
		Version: results.Version, Command: "bench put", Valid: true, DurationS: 2,
		Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}, Embedded: false,
			Members: []results.Member{{Name: "default", ClientURLs: []string{"http://127.0.0.1:2379"}, IsLeader: true, Pid: 4242, ProcessStartS: 1795965314.6}}}, // the process on its port is the member
		Flags: map[string]string{"clients": "8"},
		Ops: []results.Op{{Op: "put", Requests: 300, ThroughputRPS: 150, BytesSent: 300 * 1040,
			Latency: results.Summary{P50: 4, P99: 12}, Service: results.Summary{P50: 3.5, P99: 11}}},
		Client: results.Client{CPUSeconds: 0.2, Cores: 2},
		Host:   &results.Host{CPUs: 2, MemoryBytes: 4 << 30, HostMemoryBytes: 8 << 30, CgroupMemoryLimitBytes: 4 << 30},
		Scrapes: []results.Scrape{
			{Member: "127.0.0.1:2379", URL: "http://127.0.0.1:2379/metrics", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:00Z", Text: read("etcd-3.6-before.txt")},
			{Member: "127.0.0.1:2379", URL: "http://127.0.0.1:2379/metrics", Phase: results.PhaseAfter, Time: "2026-01-01T00:00:02Z", Text: read("etcd-3.6-after.txt")},
		},
	}
	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAnalysisGolden diffs the rendered analysis of the 3.6 fixture against
// golden files; -update rewrites them.
func TestAnalysisGolden(t *testing.T) {
	rep := Analysis(analyzeFixture(t))
	for _, format := range []string{"simple", "table"} {
		var buf bytes.Buffer
		if err := Print(&buf, format, rep); err != nil {
			t.Fatal(err)
		}
		golden(t, "analysis-3.6."+format+".golden", buf.Bytes())
	}
}

// TestAnalysisVerbose: without -v the simple rendering shows ok classes in one
// line and only graded-bad evidence; with it, every signal of every class.
func TestAnalysisVerbose(t *testing.T) {
	r := Analysis{
		Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: "cpu", Summary: "pass"},
		Findings: []finding.Finding{
			{Class: finding.ClassDisk, Severity: finding.OK, Summary: "fine", Evidence: []finding.Evidence{{Signal: "wal fsync p99", Severity: finding.OK, Observed: "1 ms"}}},
			{Class: finding.ClassCPU, Severity: finding.Warn, Summary: "busy", Evidence: []finding.Evidence{
				{Signal: "server CPU", Severity: finding.Warn, Observed: "85%", Threshold: "warn ≥ 80%", Source: "s"},
				{Signal: "host CPU", Severity: finding.OK, Observed: "40%"}}},
		},
	}
	var quiet, loud bytes.Buffer
	if err := r.Simple(&quiet); err != nil {
		t.Fatal(err)
	}
	r.Verbose = true
	if err := r.Simple(&loud); err != nil {
		t.Fatal(err)
	}
	q, l := quiet.String(), loud.String()
	if !strings.HasPrefix(q, "PASS") || !strings.Contains(q, "[ok] disk (-v shows every signal)") || strings.Contains(q, "wal fsync") ||
		!strings.Contains(q, "server CPU") || strings.Contains(q, "host CPU") || !strings.Contains(q, "1 more signal") {
		t.Errorf("at a glance:\n%s", q)
	}
	for _, s := range []string{"wal fsync", "host CPU", "server CPU", "[ok] disk: fine"} {
		if !strings.Contains(l, s) {
			t.Errorf("verbose lacks %q:\n%s", s, l)
		}
	}
}

// FuzzAnalysis renders the analysis of arbitrary /metrics text both ways, which
// must never fail or panic, whatever a member serves.
// Run: go test ./report/ -run '^$' -fuzz FuzzAnalysis -fuzztime 30s
func FuzzAnalysis(f *testing.F) {
	f.Add("etcd_server_has_leader 1\n", "etcd_server_has_leader NaN\n")
	f.Add("garbage {", "")
	f.Add("node_load1 1\n", "process_cpu_seconds_total -5\netcd_mvcc_put_total +Inf\n")
	f.Add("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 1\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 2\netcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count 2\n",
		"# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 0\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 0\netcd_disk_wal_fsync_duration_seconds_sum 0\netcd_disk_wal_fsync_duration_seconds_count 0\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		rep, err := analyze.Dumps(analyze.Filter(before), analyze.Filter(after), analyze.Options{Cores: 2, MemoryBytes: 1 << 30, WindowSeconds: 5})
		if err != nil {
			return
		}
		for _, format := range []string{"simple", "table"} {
			if err := Print(&bytes.Buffer{}, format, Analysis(rep)); err != nil {
				t.Fatalf("render %s: %v", format, err)
			}
		}
	})
}
