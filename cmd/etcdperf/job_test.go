package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/report"
)

// planRunFile is a recorded plan run (plan --profile check-perf-s --slo p99=25ms
// --start-rate 200 --max-rate 3200 --step-duration 1s --warmup 0s --bisections 1
// --expected-rps 200 on an embedded etcd: PASS, knee 600 req/s, 800 req/s broke
// on p99); the steps' own /metrics scrapes are dropped to keep the file small,
// the knee's (the file's own) are kept.
var planRunFile, _ = filepath.Abs("testdata/plan-run.json")

// TestAnalyzePlanRunFile: analyze of a plan's run file prints what plan printed,
// plan's verdict on its first line, then the step table; exits by plan's verdict, and labels
// the knee's own diagnosis below it as that step's.
func TestAnalyzePlanRunFile(t *testing.T) {
	r := runBin(t, nil, "analyze", planRunFile)
	if r.code != ExitOK {
		t.Fatalf("exit %d (plan passed): %s\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{
		"plan check-perf-s v1",
		"  STEP  OFFERED  THROUGHPUT  P99      ERRORS  RESULT\n",
		"BROKE: put p99 146ms > 25.0ms",
		"PASS  bottleneck: cpu — knee 600 req/s (p99 6.415ms)",
		"run file: " + planRunFile + "\n\ndiagnosis of the knee's step (step 4, 600 req/s offered):\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("analyze of the plan's run file lacks %q:\n%s", want, r.stdout)
		}
	}
	if i, j := strings.Index(r.stdout, "PASS  bottleneck: cpu — knee"), strings.Index(r.stdout, "diagnosis of the knee's step"); i != 0 || j < i {
		t.Errorf("plan's verdict does not come first:\n%s", r.stdout)
	}
	j := runBin(t, nil, "analyze", planRunFile, "-w", "json")
	var out report.Plan
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || j.code != ExitOK {
		t.Fatalf("analyze -w json: exit %d, %v\n%s", j.code, err, j.stdout)
	}
	if out.Verdict.Status != "pass" || len(out.Steps) != 4 || out.Knee == nil || out.Knee.OfferedRPS != 600 || out.RunFile != planRunFile {
		t.Errorf("analyze -w json is not plan's output: %+v", out)
	}
}

// TestReportPlanRunFile: report of a plan's run file carries plan's step table
// (offered, achieved, p99, errors, why a step broke) beside its verdict.
func TestReportPlanRunFile(t *testing.T) {
	for _, format := range []string{"text", "markdown", "html"} {
		r := runBin(t, nil, "report", planRunFile, "--format", format)
		if r.code != ExitOK {
			t.Fatalf("report --format %s: exit %d: %s", format, r.code, r.stderr)
		}
		for _, want := range []string{"STEP  OFFERED  THROUGHPUT  P99      REQUESTS  ERRORS", "BROKE: put p99 146ms &gt; 25.0ms", "pass: knee 600 req/s"} {
			if format != "html" {
				want = strings.ReplaceAll(want, "&gt;", ">")
			}
			if !strings.Contains(r.stdout, want) {
				t.Errorf("report --format %s lacks %q:\n%s", format, want, r.stdout)
			}
		}
	}
}
