package diskprobe

import (
	"fmt"

	"github.com/etcdperf/etcdperf/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Grades.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
)

// Rule is a p99 threshold with where it comes from.
type Rule struct {
	Name    string
	Signal  string // what is graded
	LimitMs float64
	Source  string
}

// The rules, each with its source (see DESIGN.md, Thresholds).
var (
	RuleWAL = Rule{
		Name: "etcd", Signal: "fdatasync p99", LimitMs: 10,
		Source: "etcd FAQ: p99 of " + metrics.WALFsync + " under 10 ms; IBM's fio guidance for etcd",
	}
	RuleOpenShift = Rule{
		Name: "OpenShift 8000-byte variant", Signal: "fdatasync p99", LimitMs: 20,
		Source: "OpenShift's fio disk check for etcd (--bs=8000): p99 fsync under 20 ms",
	}
	RuleBackend = Rule{
		Name: "etcd backend", Signal: "commit p99", LimitMs: 25,
		Source: "etcd FAQ: p99 of " + metrics.BackendCommit + " under 25 ms",
	}
)

// MinSamples is the fewest graded samples for a trustworthy p99: with fewer, the p99 is one
// of the last few samples, so a pass is only a warn.
const MinSamples = 100

// RuleFor returns the rule a pattern's result is graded by.
func RuleFor(pattern string, blockSize int) Rule {
	switch {
	case pattern == PatternBackend:
		return RuleBackend
	case blockSize == OpenShiftBlockSize:
		return RuleOpenShift
	}
	return RuleWAL
}

// Grade grades one pattern's result against its rule: fail when the p99 reaches the limit,
// warn when it passes on fewer than MinSamples samples, else pass. The reason names the
// rule, the observed value and the source.
func Grade(res results.DiskResult) (grade, reason string) {
	rule := RuleFor(res.Pattern, res.BlockSize)
	p99, n := res.Fdatasync.P99, res.Fdatasyncs
	if res.Commit != nil {
		p99, n = res.Commit.P99, res.Commits
	}
	switch {
	case p99 >= rule.LimitMs:
		return Fail, fmt.Sprintf("%s %.3g ms ≥ %g ms (%s rule; %s)", rule.Signal, p99, rule.LimitMs, rule.Name, rule.Source)
	case n < MinSamples:
		return Warn, fmt.Sprintf("%s %.3g ms < %g ms, but from only %d samples (%d needed for a p99; %s rule)", rule.Signal, p99, rule.LimitMs, n, MinSamples, rule.Name)
	}
	return Pass, fmt.Sprintf("%s %.3g ms < %g ms (%s rule; %s)", rule.Signal, p99, rule.LimitMs, rule.Name, rule.Source)
}

// worst combines the WAL and backend sides of the etcd pattern, with both reasons. The WAL
// grade stands unless the backend failed: the backend side runs only as long as the WAL side,
// usually too few commits for a trustworthy p99, and that alone should not mark the disk warn.
func worst(wal, backend results.DiskResult) (grade, reason string) {
	grade = wal.Grade
	if backend.Grade == Fail {
		grade = Fail
	}
	return grade, "WAL: " + wal.GradeReason + "; backend: " + backend.GradeReason
}
