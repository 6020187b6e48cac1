package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/qualify"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// TestJobRoundTrip: what a judging command printed, kept in its run file as
// its section and read back (JobOf), prints the same, with the path it is read
// from, and exits by the command's verdict, not the analysis of the file's run.
func TestJobRoundTrip(t *testing.T) {
	pass := finding.Verdict{Status: finding.StatusPass, Bottleneck: "cpu", Summary: "the analysis of the file's own run"}
	failing := finding.Verdict{Status: finding.StatusFail, Bottleneck: "disk", Summary: "fail: what the command said"}
	steps := []*plan.RateStep{
		{OfferedRPS: 100, ThroughputRPS: 100, P99Ms: 3, Requests: 100, Valid: true, OK: true, Bottleneck: "none"},
		{OfferedRPS: 200, ThroughputRPS: 150, P99Ms: 90, Requests: 150, Errors: 2, Valid: false, Broke: "put p99 90.0ms > 25.0ms", Bottleneck: "disk"},
	}
	planRec := plan.Record{Result: plan.Result{Verdict: failing, Steps: steps, Knee: &plan.Knee{ThroughputRPS: 100, OfferedRPS: 100, P99Ms: 3}, SLO: []plan.PercentileBound{{Name: "p99", MaxMs: 25}}},
		Profile: profiles.Summary{Name: "check-perf-s", Version: 1}}
	planOut := Plan{Result: planRec.Result, Profile: planRec.Profile, RunFile: "where it was written", Report: "report/"}
	kube := plan.KubeResult{Verdict: failing, Knee: planOut.Knee, SLO: planOut.SLO,
		Steps: []*plan.KubeSize{{Nodes: 100, Pods: 3000, RateStep: *steps[0]}, {Nodes: 200, Pods: 6000, RateStep: *steps[1]}}}
	kubeOut := KubePlan{KubeResult: kube, RunFile: "where it was written"}
	run := fixtureRun(t)
	note := []string{"a note"}
	run.Diagnosis = &finding.Diagnosis{Notes: note}
	checkRes := check.Result{Verdict: failing, ExitFollows: "compat", Compat: check.CompatVerdict{Status: finding.StatusPass}, Profile: profiles.Summary{Name: "check-perf-s"}}
	checkOut := NewCheck(run, "where it was written", analyze.Result{Notes: note}, checkRes)
	qualifyRes := qualify.Record{Result: qualify.Result{Verdict: failing, Tiers: []qualify.TierResult{{Tier: "small", Criteria: []finding.Criterion{{Name: "CPU", Observed: "2", Threshold: "≥ 2", Status: finding.StatusPass}}}}},
		Host: run.Host, Disk: results.DiskResult{GradeReason: "fdatasync p99 2ms"}}
	qualifyOut := NewQualify(qualifyRes.Result, run.Host, qualifyRes.Disk, run, "where it was written")
	for _, c := range []struct {
		command string
		status  finding.Status
		label   string
		section results.Section
		want    func(path string) Output
	}{
		{"plan", finding.StatusFail, "diagnosis of the knee's step (step 1, 100 req/s offered):", planRec,
			func(path string) Output { o := planOut; o.RunFile, o.Report = path, ""; return o }},
		{"plan", finding.StatusFail, "diagnosis of the knee's step (step 1, 100 req/s offered):", kube,
			func(path string) Output { o := kubeOut; o.RunFile = path; return o }},
		{"check", finding.StatusPass, "", checkRes, func(path string) Output { o := checkOut; o.RunFile = path; return o }},
		{"qualify", finding.StatusFail, "diagnosis of the last load run", qualifyRes,
			func(path string) Output { o := qualifyOut; o.RunFile = path; return o }},
	} {
		t.Run(c.command, func(t *testing.T) {
			r := *run
			r.Command = c.command
			if err := r.SetSection(c.section); err != nil {
				t.Fatal(err)
			}
			j, ok, err := JobOf(&r, "read/from.json", analyze.Result{Verdict: pass})
			if err != nil || !ok {
				t.Fatalf("JobOf: %v, %v", ok, err)
			}
			if j.Status != c.status {
				t.Errorf("status %q, want the command's %q", j.Status, c.status)
			}
			for _, format := range []string{"simple", "table", "json"} {
				var got, want bytes.Buffer
				if err := Print(&got, format, j); err != nil {
					t.Fatal(err)
				}
				if err := Print(&want, format, c.want("read/from.json")); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(got.String(), want.String()) {
					t.Errorf("%s: read back\n%s\nwant first what the command printed\n%s", format, got.String(), want.String())
				}
				label := c.label
				if format == "json" {
					label = "" // -w json is the command's output alone
				}
				if rest := strings.TrimPrefix(got.String(), want.String()); (label == "") != (rest == "") || !strings.Contains(rest, label) {
					t.Errorf("%s: after the command's output: %q, want %q", format, rest, label)
				}
			}
		})
	}
	if _, ok, err := JobOf(fixtureRun(t), "x.json", analyze.Result{}); ok || err != nil {
		t.Errorf("a run without a stored output: %v, %v", ok, err)
	}
}
