package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/report"
)

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
	runFile := filepath.Join(t.TempDir(), "check.json")
	r := runBin(t, nil, "check", "--load", "s", "--duration", "5s", "-w", "json", "--run-file", runFile)
	if r.code != ExitOK && r.code != ExitFail && r.code != ExitInvalid {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out report.Check
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(out.Ops) != 1 || out.Ops[0].Op != "put" || out.Ops[0].TargetRPS != 150 || out.Profile.Clients != 50 {
		t.Errorf("ops %+v profile %+v: want etcdctl's 150 puts/s from 50 clients", out.Ops, out.Profile)
	}
	if out.Compat.Status == "" || out.Compat.TargetRPS != 150 || out.RunFile == "" {
		t.Errorf("compat %+v run file %q", out.Compat, out.RunFile)
	}
	want := map[finding.Status]int{"pass": ExitOK, "fail": ExitFail, "invalid": ExitInvalid}[out.Verdict.Status]
	if r.code != want {
		t.Errorf("exit %d does not follow the default verdict %q", r.code, out.Verdict.Status)
	}
	if out.Verdict.Status != "pass" {
		t.Logf("the machine was loaded: %s", out.Verdict.Summary)
		if !strings.Contains(out.Verdict.Summary, "fail") && !strings.Contains(out.Verdict.Summary, "invalid") {
			t.Errorf("unexplained verdict: %s", out.Verdict.Summary)
		}
	}
	checkRunFile(t, runFile, "check")
	// analyze RUNFILE prints check's verdict and exits by it.
	an := runBin(t, nil, "analyze", runFile, "-w", "json")
	var again report.Check
	if err := json.Unmarshal([]byte(an.stdout), &again); err != nil || an.code != r.code || again.Verdict.Summary != out.Verdict.Summary || again.Compat.Status != out.Compat.Status {
		t.Errorf("analyze of check's run file: exit %d (check's %d), %v: verdict %+v, want %+v", an.code, r.code, err, again.Verdict, out.Verdict)
	}
	r = runBin(t, nil, "check", "--load", "s", "--duration", "2s", "--compat")
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("--compat exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "compat (etcdctl check perf rule)") || !strings.Contains(r.stdout, "exit code follows the compat verdict") {
		t.Errorf("simple output:\n%s", r.stdout)
	}
}
