package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// putOp is a hand-made put op: n successful requests whose service times are
// lats (ms, repeated to n), at throughput of target req/s.
func putOp(t *testing.T, target, throughput float64, errors int64, latsMs ...float64) results.Op {
	t.Helper()
	h := results.NewHist()
	for i := 0; i < 1000; i++ {
		_ = h.RecordValue(int64(latsMs[i%len(latsMs)] * 1000))
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	s := results.Summarize(h)
	var m results.Moments
	for i := 0; i < 1000; i++ {
		m.Add(time.Duration(latsMs[i%len(latsMs)] * float64(time.Millisecond)))
	}
	return results.Op{Op: "put", Requests: 1000 + errors, Errors: errors, TargetRPS: target, ThroughputRPS: throughput,
		Latency: s, Service: s, ResponseHist: enc, ServiceHist: enc, ServiceOK: &m}
}

// TestCompatExactFigures: etcdctl's slowest and stddev come from the exact
// durations of the successful requests. A true 499.98 ms reads 500.22 ms from the
// histogram (its bucket's top) and failed where etcdctl passes; a slow error is
// not in etcdctl's figures at all.
func TestCompatExactFigures(t *testing.T) {
	lats := make([]float64, 1000)
	for i := range lats {
		lats[i] = 2
	}
	lats[999] = 499.98
	op := putOp(t, 150, 150, 0, lats...)
	if op.Service.Max <= 500 {
		t.Fatalf("test premise: the histogram reads %g ms", op.Service.Max)
	}
	v, err := compatRule(&results.Run{Ops: []results.Op{op}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != "pass" || v.SlowestMs != 499.98 {
		t.Errorf("status %s, slowest %g ms (%v), want pass at exactly 499.98", v.Status, v.SlowestMs, v.Failures)
	}
	// Population stddev of 999 × 2 ms and one 499.98 ms.
	mean := (999*2 + 499.98) / 1000.0
	want := math.Sqrt((999*(2-mean)*(2-mean) + (499.98-mean)*(499.98-mean)) / 1000)
	if math.Abs(v.StddevMs-want) > 1e-9 {
		t.Errorf("stddev %.9f ms, want %.9f", v.StddevMs, want)
	}
	// Two workers' ops merge exactly: the same figures from two halves.
	v2, _ := compatRule(&results.Run{Ops: []results.Op{op, op}})
	if v2.SlowestMs != v.SlowestMs || math.Abs(v2.StddevMs-v.StddevMs) > 1e-12 {
		t.Errorf("the op twice: slowest %g stddev %g, once: %g %g", v2.SlowestMs, v2.StddevMs, v.SlowestMs, v.StddevMs)
	}
}

// TestCompatRule applies etcdctl check perf's rule to hand-made results.
func TestCompatRule(t *testing.T) {
	watch := results.Op{Op: "watch", Requests: 10, Errors: 3} // events: not requests, never judged
	for _, tc := range []struct {
		name string
		ops  []results.Op
		want string
		says string
	}{
		{"all good", []results.Op{putOp(t, 150, 150, 0, 2, 3, 5)}, "pass", ""},
		{"one error", []results.Op{putOp(t, 150, 150, 1, 2)}, "fail", "1 errors"},
		{"exactly 90% fails (etcdctl: RPS/limit <= 0.9)", []results.Op{putOp(t, 1000, 900, 0, 2)}, "fail", "throughput too low"},
		{"91% passes", []results.Op{putOp(t, 1000, 910, 0, 2)}, "pass", ""},
		{"slowest over 500 ms", []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 520)}, "fail", "slowest request took too long"},
		{"slowest at 495 ms passes", []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 495)}, "pass", ""},
		{"stddev over 100 ms", []results.Op{putOp(t, 150, 150, 0, 1, 300)}, "fail", "stddev too high"},
		{"watch events are not judged", []results.Op{putOp(t, 150, 150, 0, 2), watch}, "pass", ""},
		{"mixed ops add up", []results.Op{putOp(t, 100, 95, 0, 2), putOp(t, 50, 48, 0, 2)}, "pass", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := compatRule(&results.Run{Ops: tc.ops})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tc.want {
				t.Errorf("status %s, want %s: %+v", v.Status, tc.want, v)
			}
			if tc.says != "" && !strings.Contains(strings.Join(v.Failures, "; "), tc.says) {
				t.Errorf("failures %q do not say %q", v.Failures, tc.says)
			}
		})
	}
}

// TestDefaultVerdict grades hand-made results and analyzer findings.
func TestDefaultVerdict(t *testing.T) {
	good := func() *results.Run { return &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 0, 2, 5)}} }
	fail := func(c finding.Class) finding.Finding {
		return finding.Finding{Class: c, Severity: finding.Fail, Summary: string(c) + " is bad"}
	}
	for _, tc := range []struct {
		name       string
		run        *results.Run
		findings   []finding.Finding
		status     string
		bottleneck string
		says       string
	}{
		{"pass", good(), []finding.Finding{{Class: finding.ClassDisk, Severity: finding.OK}}, "pass", "none", "pass"},
		{"p99 over the threshold", &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 300)}}, nil, "fail", "none", "put p99 response time"},
		{"errors", &results.Run{Valid: true, Ops: []results.Op{putOp(t, 150, 150, 2, 2)}}, nil, "fail", "none", "errors 2"},
		{"rate short", &results.Run{Ops: []results.Op{putOp(t, 8000, 5900, 0, 2)}}, []finding.Finding{fail(finding.ClassCPU)}, "fail", "cpu", "achieved rate"},
		// DESIGN.md: --load s passes etcdctl's rule on a 100 ms fdatasync disk; etcdperf must fail it.
		{"light load on a slow disk", good(), []finding.Finding{fail(finding.ClassDisk)}, "fail", "disk", "bottleneck disk"},
		{"saturated generator", good(), []finding.Finding{fail(finding.ClassClient)}, "invalid", "client", "invalid"},
		{"health only", good(), []finding.Finding{fail(finding.ClassHealth)}, "fail", "none", "health"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, crit := defaultVerdict(tc.run, analyze.Report{Findings: tc.findings}, 100*time.Millisecond, "test")
			if v.Status != tc.status || v.Bottleneck != tc.bottleneck {
				t.Errorf("verdict %s/%s, want %s/%s: %s", v.Status, v.Bottleneck, tc.status, tc.bottleneck, v.Summary)
			}
			if !strings.Contains(v.Summary, tc.says) {
				t.Errorf("summary %q does not say %q", v.Summary, tc.says)
			}
			if len(crit) != 3 {
				t.Errorf("%d criteria, want p99, errors and rate", len(crit))
			}
		})
	}
}

func TestParseSLO(t *testing.T) {
	got, err := parseSLO("p50=5ms, p99=25ms,p99.9=1s")
	if err != nil || len(got) != 3 || got[0].MaxMs != 5 || got[1].MaxMs != 25 || got[2].Name != "p999" || got[2].MaxMs != 1000 {
		t.Errorf("parseSLO = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "p99", "p99=", "p99=fast", "p42=1ms", "p99=-1ms", "p99=0s"} {
		if _, err := parseSLO(bad); err == nil {
			t.Errorf("parseSLO(%q) accepted", bad)
		}
	}
}

// TestProfileCommandsBadInput: one clear line, exit 2, for every kind of bad input.
func TestProfileCommandsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nversion: 1\ndescription: d\nrate: -3\nclients: 1\nduration: 1s\nkeys: {size: 8, space: 10}\nvalues: {size: 8}\nops: [{op: put, ratio: 1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"unknown load", []string{"check", "--load", "xs"}, `--load "xs"`},
		{"load and profile", []string{"check", "--load", "s", "--profile", "kubernetes"}, "not both"},
		{"unknown profile", []string{"check", "--profile", "nope"}, `unknown profile "nope"`},
		{"invalid profile file", []string{"check", "--profile", bad}, "bad.yaml:4: rate"},
		{"missing profile file", []string{"check", "--profile", filepath.Join(dir, "none.yaml")}, "profile file"},
		{"show unknown profile", []string{"profiles", "show", "nope"}, "unknown profile"},
		{"SLO without a value", []string{"plan", "--profile", "write-heavy", "--slo", "p99"}, "PERCENTILE=DURATION"},
		{"SLO not a duration", []string{"plan", "--profile", "write-heavy", "--slo", "p99=fast"}, "not a positive duration"},
		{"SLO missing", []string{"plan", "--profile", "write-heavy"}, "--slo is required"},
		{"plan unknown profile", []string{"plan", "--profile", "nope", "--slo", "p99=25ms"}, "unknown profile"},
		{"datascale bad size", []string{"plan", "--datascale", "--val-size", "big"}, "--val-size"},
		{"qualify on tmpfs", []string{"qualify", "--data-dir", "/dev/shm"}, "tmpfs"},
		{"qualify unknown tier", []string{"qualify", "--data-dir", dir, "--tier", "huge"}, `--tier "huge"`},
		{"qualify without data dir", []string{"qualify"}, "--data-dir is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.says) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.says)
			}
		})
	}
}

func TestProfilesCommand(t *testing.T) {
	r := runBin(t, nil, "profiles", "list", "-w", "json")
	var list struct {
		Profiles []struct {
			Name string  `json:"name"`
			Rate float64 `json:"rate"`
		} `json:"profiles"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list.Profiles) != 9 {
		t.Fatalf("profiles list -w json: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, nil, "profiles", "show", "check-perf-s")
	if r.code != 0 || !strings.Contains(r.stdout, "rate: 150\n") || !strings.Contains(r.stdout, "check.go") {
		t.Errorf("profiles show: exit %d, %s", r.code, r.stdout)
	}
}

// TestCheckLoadSmallE2E runs etcdctl's --load s for 5 s against the embedded etcd.
// It passes on a healthy machine; on a loaded one the default verdict may fail
// (slow disk) or be invalid, so the test checks the contract and that any
// failure is explained, never the machine's speed.
func TestCheckLoadSmallE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	r := runBin(t, nil, "check", "--load", "s", "--duration", "5s", "-w", "json")
	if r.code != ExitOK && r.code != ExitFail && r.code != ExitInvalid {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(out.Ops) != 1 || out.Ops[0].Op != "put" || out.Ops[0].TargetRPS != 150 || out.Profile.Clients != 50 {
		t.Errorf("ops %+v profile %+v: want etcdctl's 150 puts/s from 50 clients", out.Ops, out.Profile)
	}
	if out.Compat.Status == "" || out.Compat.TargetRPS != 150 || out.RunFile == "" {
		t.Errorf("compat %+v run file %q", out.Compat, out.RunFile)
	}
	want := map[string]int{"pass": ExitOK, "fail": ExitFail, "invalid": ExitInvalid}[out.Verdict.Status]
	if r.code != want {
		t.Errorf("exit %d does not follow the default verdict %q", r.code, out.Verdict.Status)
	}
	if out.Verdict.Status != "pass" {
		t.Logf("the machine was loaded: %s", out.Verdict.Summary)
		if !strings.Contains(out.Verdict.Summary, "fail") && !strings.Contains(out.Verdict.Summary, "invalid") {
			t.Errorf("unexplained verdict: %s", out.Verdict.Summary)
		}
	}
	r = runBin(t, nil, "check", "--load", "s", "--duration", "2s", "--compat")
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("--compat exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "compat verdict (etcdctl check perf rule)") || !strings.Contains(r.stdout, "exit code follows the compat verdict") {
		t.Errorf("simple output:\n%s", r.stdout)
	}
}
