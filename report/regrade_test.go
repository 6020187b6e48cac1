package report

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
)

// TestRegraded: a run file whose stored verdict is what this build grades says
// nothing; one whose stored verdict came from other rules says so in one line,
// in report's text too; check's is regraded from its stored objective.
func TestRegraded(t *testing.T) {
	run := fixtureRun(t)
	rep, err := analyze.Run(run, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run.Diagnosis = rep.Diagnosis()
	if line, err := Regraded(run); line != "" || err != nil {
		t.Fatalf("a verdict this build stored: %q, %v", line, err)
	}
	other := *rep.Diagnosis()
	v := *other.Verdict
	v.Status, v.Bottleneck, v.Ranked = finding.StatusPass, string(finding.ClassNetwork), []string{"network"}
	other.Verdict = &v
	run.Diagnosis = &other
	line, err := Regraded(run)
	if err != nil || !strings.Contains(line, "other rules (etcdperf v0.1.0)") || !strings.Contains(line, "stored pass/network [network]") || strings.Contains(line, "\n") {
		t.Fatalf("a verdict of other rules: %q, %v", line, err)
	}
	r, err := NewDocument(run, run.Diagnosis)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Note: "+line) {
		t.Errorf("report does not say the stored verdict came from other rules:\n%s", text.String())
	}

	// check: the stored default verdict against check.Default on the same objective.
	run.Diagnosis = rep.Diagnosis()
	own, _ := check.Default(run, rep, 100e6, "--p99")
	res := check.Result{Verdict: own, P99LimitMs: 100, P99Source: "--p99"}
	if err := run.SetSection(res); err != nil {
		t.Fatal(err)
	}
	if line, err := Regraded(run); line != "" || err != nil {
		t.Fatalf("check's verdict this build stored: %q, %v", line, err)
	}
	res.Verdict.Status = finding.StatusPass // as an older check with other rules might have
	if err := run.SetSection(res); err != nil {
		t.Fatal(err)
	}
	if line, _ := Regraded(run); !strings.Contains(line, "stored pass/") || !strings.Contains(line, "now fail/") {
		t.Errorf("check's verdict regraded: %q", line)
	}
}
