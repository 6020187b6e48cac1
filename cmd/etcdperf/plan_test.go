package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// TestPlanFindsKnee ramps check perf's shape up to a small --max-rate with a
// generous SLO: the knee is found (at the max rate unless the machine is very
// loaded, in which case the step that broke says why).
func TestPlanFindsKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	dir := t.TempDir()
	r := runBin(t, nil, "plan", "--profile", "check-perf-s", "--slo", "p99=5s", "--start-rate", "50", "--max-rate", "200",
		"--step-duration", "2s", "--warmup", "0s", "--expected-rps", "50", "--report", filepath.Join(dir, "report"), "--run-file", filepath.Join(dir, "plan.json"), "-w", "json")
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out report.Plan
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(out.Steps) < 2 || out.Steps[0].OfferedRPS != 50 || out.Steps[1].OfferedRPS != 100 {
		t.Fatalf("steps %+v: want doubling from 50", out.Steps)
	}
	if out.Knee == nil {
		t.Fatalf("no knee; first step: %+v", out.Steps[0])
	}
	if out.Knee.ReachedMaxRate && out.Knee.OfferedRPS != 200 {
		t.Errorf("knee %+v reached the max rate but is not at 200", out.Knee)
	}
	if out.Curve == nil || len(out.Curve.Points) != len(out.Steps) || out.Curve.Knee < 0 || out.Headroom == nil {
		t.Errorf("curve %+v headroom %v", out.Curve, out.Headroom)
	}
	checkRunFile(t, out.RunFile, "plan")
	// The run file keeps every step's run and the plan's own verdict and curve.
	run, err := results.ReadFile(out.RunFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != len(out.Steps) || run.Steps[0].Ops[0].TargetRPS != 50 || run.Diagnosis == nil || run.Diagnosis.Curve == nil || run.Diagnosis.Verdict.Summary != out.Verdict.Summary {
		t.Errorf("run file: %d steps (want %d), diagnosis %+v", len(run.Steps), len(out.Steps), run.Diagnosis)
	}
	// report RUNFILE, later, carries the plan's verdict and its knee.
	if rep := runBin(t, nil, "report", out.RunFile); !strings.Contains(rep.stdout, out.Verdict.Summary) || !strings.Contains(rep.stdout, "knee") {
		t.Errorf("report of the plan's run file lacks its verdict %q or knee:\n%s", out.Verdict.Summary, rep.stdout)
	}
	// analyze RUNFILE prints plan's verdict and exits by it.
	// Its first line states the summary without the status it opens with.
	if an := runBin(t, nil, "analyze", out.RunFile); an.code != r.code || !strings.Contains(an.stdout, strings.TrimPrefix(out.Verdict.Summary, string(out.Verdict.Status)+": ")) {
		t.Errorf("analyze of the plan's run file: exit %d (plan's %d), lacks its verdict %q:\n%s", an.code, r.code, out.Verdict.Summary, an.stdout)
	}
	for _, f := range []string{"report.txt", "report.html", "plots/curve.png"} {
		if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
}

func TestPlanDatascale(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	r := runBin(t, nil, "plan", "--datascale", "--keys", "2000", "--val-size", "1KiB", "-w", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out report.Datascale
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout: %v\n%s", err, r.stdout)
	}
	d := out.Datascale
	if d.Keys != 2000 || d.DBPerKey <= 0 || d.QuotaBytes <= 0 || d.KeysInQuota == nil {
		t.Errorf("datascale %+v", d)
	}
}

// TestQualifySmall qualifies this host for the small tier with a short load on a
// temp dir; whether it passes depends on the machine, the table must be there.
func TestQualifySmall(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	runFile := filepath.Join(t.TempDir(), "qualify.json")
	r := runBin(t, nil, "qualify", "--tier", "small", "--duration", "3s", "--data-dir", t.TempDir(), "--run-file", runFile)
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"CRITERION", "CPU", "memory", "disk fdatasync p99", "sequential IOPS", "achieved load", "latency p99"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	// The verdict, once, on the first line: the tier this host qualifies for, or not.
	if first, _, _ := strings.Cut(r.stdout, "\n"); !regexp.MustCompile(`^(PASS|FAIL)  bottleneck: \S+ — .*qualif`).MatchString(first) {
		t.Errorf("first line %q is not qualify's verdict:\n%s", first, r.stdout)
	}
	checkRunFile(t, runFile, "qualify")
	// analyze RUNFILE prints what qualify printed and exits by its verdict.
	an := runBin(t, nil, "analyze", runFile)
	if want, _, _ := strings.Cut(r.stdout, "run file: "); an.code != r.code || !strings.HasPrefix(an.stdout, want) {
		t.Errorf("analyze of qualify's run file: exit %d (qualify's %d):\n%s\nwant first:\n%s", an.code, r.code, an.stdout, want)
	}
}

// TestPlanKeepsStepsWhenAMemberDies kills the only member (a separate etcd
// process) during the ramp: plan prints the steps that finished and the knee so
// far, writes its run file with them, names why it stopped, and exits 1: the
// cluster failed under the plan, which is a verdict, not a bad invocation.
func TestPlanKeepsStepsWhenAMemberDies(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	c := clustertest.Start(t, cluster.Config{Processes: true})
	m := c.Members()[0]
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		// Steps of 2 s: once the load has written keys, 3 s later the first step
		// has finished (however slow the machine was to start it).
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			resp, err := cli.Get(context.Background(), "/etcdperf/plan/", clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err == nil && resp.Count > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Error("no key of the load after 60 s")
				return
			}
		}
		time.Sleep(3 * time.Second)
		if err := m.Signal(syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	}()
	dir := t.TempDir()
	r := runBin(t, nil, "plan", "--endpoints", c.Endpoints()[0], "--profile", "check-perf-s", "--slo", "p99=5s", "--start-rate", "50",
		"--max-rate", "100000", "--step-duration", "2s", "--warmup", "0s", "--dial-timeout", "2s", "--run-file", filepath.Join(dir, "plan.json"), "-w", "json")
	<-killed
	if r.code != ExitFail || !strings.Contains(r.stderr, "step at") {
		t.Fatalf("exit %d, want 1 with the step that failed: %s", r.code, r.stderr)
	}
	var out report.Plan
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	t.Logf("verdict: %s", out.Verdict.Summary)
	if len(out.Steps) == 0 || out.Stopped == "" || out.Verdict.Status != "fail" || !strings.Contains(out.Verdict.Summary, "the search stopped after") {
		t.Fatalf("steps %d, stopped %q, verdict %+v: want the finished steps and why it stopped", len(out.Steps), out.Stopped, out.Verdict)
	}
	run, err := results.ReadFile(out.RunFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != len(out.Steps) {
		t.Errorf("run file holds %d steps, plan printed %d", len(run.Steps), len(out.Steps))
	}
}
