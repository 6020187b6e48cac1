package diskprobe

import (
	"fmt"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Limit is a p99 threshold of the probe with where it comes from.
type Limit struct {
	Name    string
	Signal  string // what is graded
	LimitMs float64
	Source  string
}

// The rules, each with its source (docs/verdict.md lists them).
var (
	LimitWAL = Limit{
		Name: "etcd", Signal: "fdatasync p99", LimitMs: 10,
		Source: "etcd FAQ: p99 of " + metrics.WALFsync + " under 10 ms; IBM's fio guidance for etcd",
	}
	LimitOpenShift = Limit{
		Name: "OpenShift 8000-byte variant", Signal: "fdatasync p99", LimitMs: 20,
		Source: "OpenShift's fio disk check for etcd (--bs=8000): p99 fsync under 20 ms",
	}
	LimitBackend = Limit{
		Name: "etcd backend", Signal: "commit p99", LimitMs: 25,
		Source: "etcd FAQ: p99 of " + metrics.BackendCommit + " under 25 ms",
	}
)

// MinSamples is the fewest graded samples for a trustworthy p99: with fewer, the p99 is one
// of the last few samples, so a pass is only a warn.
const MinSamples = 100

// LimitFor returns the limit a pattern's result is graded by.
func LimitFor(pattern string, blockSize int) Limit {
	switch {
	case pattern == PatternBackend:
		return LimitBackend
	case blockSize == OpenShiftBlockSize:
		return LimitOpenShift
	}
	return LimitWAL
}

// Grade grades one pattern's result against its rule: fail when the p99 reaches the limit,
// warn when it passes on fewer than MinSamples samples, else pass. The reason names the
// rule, the observed value and the source.
func Grade(res results.DiskResult) (grade finding.Severity, reason string) {
	lim := LimitFor(res.Pattern, res.BlockSize)
	p99, n := res.SyncP99(), res.Fdatasyncs
	if res.Commit != nil {
		p99, n = res.Commit.P99, res.Commits
	} else if note := res.WaitNote(); note != "" {
		lim.Signal += " " + note
	}
	switch {
	case p99 >= lim.LimitMs:
		return finding.Fail, fmt.Sprintf("%s %.3g ms ≥ %g ms (%s rule; %s)", lim.Signal, p99, lim.LimitMs, lim.Name, lim.Source)
	case n < MinSamples:
		return finding.Warn, fmt.Sprintf("%s %.3g ms < %g ms, but from only %d samples (%d needed for a p99; %s rule)", lim.Signal, p99, lim.LimitMs, n, MinSamples, lim.Name)
	}
	return finding.OK, fmt.Sprintf("%s %.3g ms < %g ms (%s rule; %s)", lim.Signal, p99, lim.LimitMs, lim.Name, lim.Source)
}

// worst combines the WAL and backend sides of the etcd pattern, with both reasons. The WAL
// grade stands unless the backend failed: the backend side runs only as long as the WAL side,
// usually too few commits for a trustworthy p99, and that alone should not mark the disk warn.
func worst(wal, backend results.DiskResult) (grade finding.Severity, reason string) {
	grade = wal.Severity()
	if backend.Severity() == finding.Fail {
		grade = finding.Fail
	}
	return grade, "WAL: " + wal.GradeReason + "; backend: " + backend.GradeReason
}
