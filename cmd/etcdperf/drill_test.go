package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

func TestDrillBadInvocations(t *testing.T) {
	dir := t.TempDir()
	notShape := filepath.Join(dir, "shape.json")
	if err := os.WriteFile(notShape, []byte(`{"prefixes": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := []string{"--endpoints", "127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a user's cluster without the explicit flag", append([]string{"drill", "replace-member"}, refused...), "--yes-change-membership"},
		{"rolling restart of a user's cluster without the flag", append([]string{"drill", "rolling-restart", "--restart-cmd", "true"}, refused...), "--yes-change-membership"},
		{"rolling restart without a restart command", append([]string{"drill", "rolling-restart", "--yes-change-membership"}, refused...), "--restart-cmd"},
		{"replace on a user's cluster without a new member", append([]string{"drill", "replace-member", "--yes-change-membership"}, refused...), "--new-member"},
		{"negative rate", append([]string{"drill", "replace-member", "--yes-change-membership", "--rate", "-1", "--new-member", "x=http://h:2380,http://h:2379", "--start-cmd", "true"}, refused...), "--rate"},
		{"bad fill", []string{"drill", "replace-member", "--fill", "lots"}, "byte size"},
		{"value too large", []string{"drill", "replace-member", "--fill-value-size", "2MiB"}, "1.5 MiB"},
		{"missing shape", []string{"drill", "replace-member", "--shape", filepath.Join(dir, "none.json")}, "--shape"},
		{"not a shape", []string{"drill", "replace-member", "--shape", notShape}, "inspect -w json"},
		{"zero catch-up timeout", []string{"drill", "replace-member", "--catch-up-timeout", "0s"}, "--catch-up-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", r.stderr, tc.want)
			}
		})
	}
}

// TestDrillRefusesSmallCluster: the guard refuses a cluster of one voter and changes nothing.
func TestDrillRefusesSmallCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	c := clustertest.Start(t, cluster.Config{Processes: true})
	r := runBin(t, nil, "drill", "replace-member", "--endpoints", c.Endpoints()[0], "--yes-change-membership",
		"--new-member", "x=http://127.0.0.1:1,http://127.0.0.1:2", "--start-cmd", "false")
	assertCleanError(t, r)
	if !strings.Contains(r.stderr, "refused: 1 voting member(s)") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestDrillReplaceJSON runs the drill end to end on the embedded cluster with a
// small fill and checks the JSON contract and the report folder.
func TestDrillReplaceJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member cluster and replaces a member")
	}
	rep := filepath.Join(t.TempDir(), "rep")
	r := runBin(t, nil, "drill", "replace-member", "--fill", "2MiB", "--rate", "100", "--before", "1s", "--after", "1s",
		"--embedded-snapshot-count", "100", "--embedded-snapshot-catchup-entries", "50", "-w", "json", "--report", rep, "--results-dir", filepath.Dir(rep))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Drill  string `json:"drill"`
		Phases []struct {
			Name string `json:"name"`
		} `json:"phases"`
		CatchUpS   *float64 `json:"catch_up_s"`
		PredictedS float64  `json:"predicted_s"`
		Client     struct {
			P99Before *float64 `json:"p99_before_ms"`
			P99During *float64 `json:"p99_during_ms"`
			P99After  *float64 `json:"p99_after_ms"`
			Errors    *int64   `json:"errors"`
		} `json:"client"`
		LeaderChanges *int64 `json:"leader_changes"`
		Voters        int    `json:"voters_after"`
		RunFile       string `json:"run_file"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if out.Drill != "replace-member" || len(out.Phases) < 4 || out.CatchUpS == nil || out.PredictedS <= 0 || out.Voters != 3 ||
		out.Client.P99Before == nil || out.Client.P99During == nil || out.Client.P99After == nil || out.Client.Errors == nil || out.LeaderChanges == nil {
		t.Fatalf("JSON misses figures: %s", r.stdout)
	}
	for _, f := range []string{"drill.json", "drill-timeline.png", "drill-timeline.svg"} {
		if _, err := os.Stat(filepath.Join(rep, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(r.stderr, "drill: phase snapshot") {
		t.Errorf("no per-phase progress on stderr: %s", r.stderr)
	}
	checkRunFile(t, out.RunFile, "drill-replace-member")
	// The run file holds the drill: its report shows what the drill printed.
	rr := runBin(t, nil, "report", out.RunFile)
	if rr.code != 0 || !strings.Contains(rr.stdout, "\nDRILL\n  replace-member (learner): removed ") || !strings.Contains(rr.stdout, "verify: 3 voting member(s)") {
		t.Errorf("report %s: exit %d\n%s%s", out.RunFile, rr.code, rr.stdout, rr.stderr)
	}
}

// TestDrillInterrupt sends Ctrl-C right after the removal: the drill adds and
// promotes the replacement, says so, and exits 130 with three voters.
func TestDrillInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member cluster and replaces a member")
	}
	s := startBin(t, t.TempDir(), "drill", "replace-member", "--fill", "1MiB", "--rate", "50", "--before", "1s", "--after", "1m")
	s.waitFor(t, "the removal", func() bool { return strings.Contains(s.stderr.String(), "drill: removed follower") })
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !s.wait(90 * time.Second) {
		t.Fatalf("did not exit after Ctrl-C: %s", s.stderr.String())
	}
	out := s.stdout.String()
	if s.code != ExitInterrupted || !strings.Contains(out, "restored: promoted learner") || !strings.Contains(out, "verify: 3 voting member(s), 0 learner(s)") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", s.code, out, s.stderr.String())
	}
}
