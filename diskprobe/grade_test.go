package diskprobe

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

func TestGrade(t *testing.T) {
	commit := func(p99 float64) *results.Summary { return &results.Summary{P99: p99} }
	for _, tc := range []struct {
		name      string
		res       results.DiskResult
		grade     finding.Severity
		reasonHas string
	}{
		{"fast disk passes", results.DiskResult{Pattern: PatternFio, BlockSize: 2300, Fdatasyncs: 10029,
			Fdatasync: results.Summary{P99: 0.5}}, finding.OK, "etcd FAQ"},
		{"at the limit fails", results.DiskResult{Pattern: PatternFio, BlockSize: 2300, Fdatasyncs: 10029,
			Fdatasync: results.Summary{P99: 10}}, finding.Fail, "≥ 10 ms"},
		{"throttled disk fails", results.DiskResult{Pattern: PatternWAL, BlockSize: 2300, Fdatasyncs: 300,
			Fdatasync: results.Summary{P99: 98}}, finding.Fail, "fdatasync p99 98 ms"},
		{"OpenShift variant passes at 15 ms", results.DiskResult{Pattern: PatternFio, BlockSize: 8000, Fdatasyncs: 2883,
			Fdatasync: results.Summary{P99: 15}}, finding.OK, "OpenShift"},
		{"OpenShift variant fails at 20 ms", results.DiskResult{Pattern: PatternFio, BlockSize: 8000, Fdatasyncs: 2883,
			Fdatasync: results.Summary{P99: 20}}, finding.Fail, "≥ 20 ms"},
		{"2300 at 15 ms fails", results.DiskResult{Pattern: PatternFio, BlockSize: 2300, Fdatasyncs: 10029,
			Fdatasync: results.Summary{P99: 15}}, finding.Fail, "etcd rule"},
		{"few samples only warn", results.DiskResult{Pattern: PatternFio, BlockSize: 2300, Fdatasyncs: 40,
			Fdatasync: results.Summary{P99: 0.5}}, finding.Warn, "only 40 samples"},
		{"few samples still fail", results.DiskResult{Pattern: PatternFio, BlockSize: 2300, Fdatasyncs: 5,
			Fdatasync: results.Summary{P99: 50}}, finding.Fail, ""},
		{"backend graded on commits", results.DiskResult{Pattern: PatternBackend, BlockSize: 4096, Fdatasyncs: 300, Commits: 150,
			Fdatasync: results.Summary{P99: 12}, Commit: commit(20)}, finding.OK, "commit p99"},
		{"slow backend commits fail", results.DiskResult{Pattern: PatternBackend, BlockSize: 4096, Fdatasyncs: 300, Commits: 150,
			Fdatasync: results.Summary{P99: 1}, Commit: commit(25)}, finding.Fail, "25 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, reason := Grade(tc.res)
			if g != tc.grade || !strings.Contains(reason, tc.reasonHas) {
				t.Errorf("Grade = %s (%s), want %s with %q", g, reason, tc.grade, tc.reasonHas)
			}
		})
	}
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct{ wal, backend, want finding.Severity }{
		{finding.OK, finding.OK, finding.OK},
		{finding.OK, finding.Warn, finding.OK}, // a short backend side does not demote the WAL's grade
		{finding.Warn, finding.OK, finding.Warn},
		{finding.OK, finding.Fail, finding.Fail},
		{finding.Fail, finding.OK, finding.Fail},
	} {
		got, reason := worst(results.DiskResult{Grade: finding.StatusOf(tc.wal), GradeReason: "w"}, results.DiskResult{Grade: finding.StatusOf(tc.backend), GradeReason: "b"})
		if got != tc.want || reason != "WAL: w; backend: b" {
			t.Errorf("worst(%s, %s) = %s (%s), want %s", tc.wal, tc.backend, got, reason, tc.want)
		}
	}
}
