package report

import (
	"bytes"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

func TestCheckOutput(t *testing.T) {
	p := (&profiles.Profile{Name: "check-perf-s", Version: 1, Description: "etcdctl check perf --load s", Rate: 150, Clients: 50, Duration: profiles.Duration(60e9)}).Summary()
	criteria := []finding.Criterion{
		{Name: "put p99 response time", Observed: "2.4 ms", Threshold: "≤ 100 ms", Status: finding.StatusPass},
		{Name: "errors", Observed: "12", Threshold: "0", Status: finding.StatusFail},
	}
	failing := finding.Verdict{Status: finding.StatusFail, Bottleneck: "none", Summary: "fail: 12 requests failed"}
	compat := check.CompatVerdict{Status: finding.StatusFail, Errors: 12, ThroughputRPS: 149.6, TargetRPS: 150, SlowestMs: 180, StddevMs: 4.1, Failures: []string{"12 errors"}}
	for _, c := range []struct {
		name        string
		run         *results.Run
		verbose     bool
		exitFollows string
	}{
		{"check-fail", fixtureRun(t), false, "default"},
		{"check-verbose-compat", edgeRun(t), true, "compat"},
	} {
		rep := analyze.Result{Verdict: finding.Verdict{Status: finding.StatusPass, Summary: "the analyzer's, replaced by check's"}, Verbose: c.verbose, Notes: []string{"a note"}}
		out := NewCheck(c.run, "results/check.json", rep, check.Result{Verdict: failing, Criteria: criteria, Compat: compat, ExitFollows: c.exitFollows, Profile: p})
		for _, format := range []string{"simple", "table", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Print(&buf, format, out); err != nil {
					t.Fatal(err)
				}
				golden(t, c.name+"."+format+".golden", buf.Bytes())
			})
		}
	}
}

func TestNewCheckFindingsNeverNull(t *testing.T) {
	if out := NewCheck(sampleRun(t), "", analyze.Result{}, check.Result{}); out.Findings == nil || out.ExitFollows != "default" {
		t.Errorf("findings %#v, exit follows %q: want [] and default", out.Findings, out.ExitFollows)
	}
}
