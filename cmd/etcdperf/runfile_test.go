package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/runschema"
	"github.com/etcdperf/etcdperf/results"
)

var record = flag.Bool("record", false, "keep the run files of the live bench, check, plan, qualify and drill tests as testdata/runs/<name>.json")

var schema = sync.OnceValues(func() (*runschema.Validator, error) {
	return runschema.Load(filepath.Join("..", "..", runschema.Path))
})

// checkRunFile validates a fresh run file against docs/run-file.schema.json and,
// with -record, keeps it as the recorded run of its command.
func checkRunFile(t *testing.T, path, name string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(b); err != nil {
		t.Errorf("%s's run file does not match %s: %v", name, runschema.Path, err)
	}
	if *record {
		if err := os.WriteFile(filepath.Join("testdata", "runs", name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// storedVerdict is the verdict a run file stores of the command that wrote it:
// its section's where it has one, else its diagnosis's.
func storedVerdict(t *testing.T, run *results.Run) finding.Verdict {
	t.Helper()
	var sec struct {
		Verdict finding.Verdict `json:"verdict"`
	}
	for _, raw := range run.Sections {
		if err := json.Unmarshal(raw, &sec); err == nil && sec.Verdict.Status != "" {
			return sec.Verdict
		}
	}
	if run.Diagnosis == nil || run.Diagnosis.Verdict == nil {
		t.Fatal("the run file stores no verdict")
	}
	return *run.Diagnosis.Verdict
}

// TestRecordedRuns: analyze of the recorded run of each command
// (testdata/runs, written by the live tests with -record) prints the verdict the command printed —
// status, bottleneck, ranked classes — and exits by it, with no line saying
// this build grades the file apart; plan-run.json, of run file version 1,
// still reads. Every file, written again, matches the schema.
func TestRecordedRuns(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "runs", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recorded runs: %v", err)
	}
	paths = append(paths, planRunFile)
	v, err := schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			run, err := results.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			if err := results.Encode(&again, run); err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(again.Bytes()); err != nil {
				t.Errorf("written again, it does not match the schema: %v", err)
			}
			want := storedVerdict(t, run)
			abs, _ := filepath.Abs(path)
			r := runBin(t, nil, "analyze", abs, "-w", "json")
			var got struct {
				Verdict finding.Verdict `json:"verdict"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("analyze -w json: exit %d, %v: %s", r.code, err, r.stderr)
			}
			g, w := got.Verdict, want
			if g.Status != w.Status || g.Bottleneck != w.Bottleneck || strings.Join(g.Ranked, " ") != strings.Join(w.Ranked, " ") {
				t.Errorf("analyze prints %s/%s %v; the run file stores %s/%s %v", g.Status, g.Bottleneck, g.Ranked, w.Status, w.Bottleneck, w.Ranked)
			}
			code := map[finding.Status]int{finding.StatusPass: ExitOK, finding.StatusFail: ExitFail, finding.StatusInvalid: ExitInvalid}[w.Status]
			if r.code != code && !strings.Contains(path, "check") { // check's exit follows --compat when given
				t.Errorf("analyze exits %d, the stored verdict %s", r.code, w.Status)
			}
			text := runBin(t, nil, "analyze", abs)
			if i := strings.Index(text.stdout, "the stored verdict came from other rules"); i >= 0 && run.Tool.Version != "" && path != planRunFile {
				t.Errorf("this build grades the recorded file apart from what it stores (re-record with go test ./cmd/etcdperf -run 'TestCheckLoadSmallE2E|TestPlanFindsKnee|TestQualifySmall|TestDrillReplaceJSON|TestNetworkVerdictReproduces' -record if the rules changed on purpose):\n%s", text.stdout[i:])
			}
		})
	}
}
