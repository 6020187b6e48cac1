package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/results"
)

// TestPipes: "-" as a run file reads standard input (analyze, report, compare,
// merge), and --run-file - writes the run file alone to standard output, the
// summary to stderr, as vegeta's commands chain.
func TestPipes(t *testing.T) {
	dir := t.TempDir()
	a, b := sampleRunFile(t, dir, "a.json"), sampleRunFile(t, dir, "b.json")
	runA, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // on stdout
	}{
		{[]string{"analyze", "-"}, "bottleneck:"},
		{[]string{"report", "-"}, "etcdperf report: bench put"},
		{[]string{"report", "-", "-w", "json"}, `"command": "bench put"`},
		{[]string{"compare", "-", b}, "put"},
		{[]string{"compare", a, "-"}, "put"},
	} {
		r := runBinStdin(t, bytes.NewReader(runA), nil, c.args...)
		if r.code == ExitError || !strings.Contains(strings.ToLower(r.stdout), strings.ToLower(c.want)) {
			t.Errorf("%q: exit %d, stdout %.300q, stderr %q; want %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	// Standard input holds one run file: compare - - and a second run on stdin are refused.
	for _, args := range [][]string{{"compare", "-", "-"}, {"report", "-"}} {
		r := runBinStdin(t, strings.NewReader(string(runA)+string(runA)), nil, args...)
		assertCleanError(t, r)
	}

	// merge - --run-file -: the merged run file alone on stdout, the summary on stderr.
	r := runBinStdin(t, bytes.NewReader(runA), nil, "merge", "-", "--run-file", "-")
	if r.code == ExitError {
		t.Fatalf("merge: exit 2: %s", r.stderr)
	}
	if run, err := results.Decode(strings.NewReader(r.stdout)); err != nil || run.Ops[0].Requests != 100 {
		t.Errorf("merge --run-file -: stdout is not the run file: %v\n%.300s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "put") {
		t.Errorf("merge --run-file -: no summary on stderr: %q", r.stderr)
	}

	// A measuring command: disk --run-file -.
	r = runBin(t, nil, "disk", "--dir", dir, "--size", "64k", "--allow-tmpfs", "--run-file", "-")
	if r.code == ExitError {
		t.Fatalf("disk: exit 2: %s", r.stderr)
	}
	if run, err := results.Decode(strings.NewReader(r.stdout)); err != nil || run.Command != "disk" {
		t.Errorf("disk --run-file -: stdout is not the run file: %v\n%.300s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "grade") {
		t.Errorf("disk --run-file -: no summary on stderr: %q", r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files written beside the inputs: %v", entries)
	}
}
