package check

import (
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Result is check's conclusion on its run, as the run file keeps it (section
// "check"): both verdicts, the criteria, which verdict the exit code follows,
// and the objective graded, so a later analysis grades the run the same.
type Result struct {
	Verdict  finding.Verdict     `json:"verdict"`
	Compat   CompatVerdict       `json:"compat"`
	Criteria []finding.Criterion `json:"criteria"`
	// ExitFollows is "default", or "compat" with --compat.
	ExitFollows string           `json:"exit_follows"`
	Profile     profiles.Summary `json:"profile"`
	// P99LimitMs is the p99 objective of the default verdict and P99Source where
	// it came from (--p99, the profile's SLO, the default); absent in run files
	// of version 1.
	P99LimitMs float64 `json:"p99_limit_ms,omitempty"`
	P99Source  string  `json:"p99_source,omitempty"`
}

// SectionName is the result's key in the run file's sections.
func (Result) SectionName() string { return "check" }

var _ = results.RegisterSection(Result{})

// Status is the verdict the exit code follows.
func (r Result) Status() finding.Status {
	if r.ExitFollows == "compat" {
		return r.Compat.Status
	}
	return r.Verdict.Status
}
