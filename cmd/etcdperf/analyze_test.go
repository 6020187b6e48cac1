package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/results"
)

// metricsFixture is the absolute path of a recorded /metrics fixture of package analyze.
func metricsFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "analyze", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAnalyzeRun writes a run file around the recorded 3.6 scrapes.
func writeAnalyzeRun(t *testing.T, edit func(*results.Run)) string {
	t.Helper()
	text := func(name string) string {
		b, err := os.ReadFile(metricsFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	run := &results.Run{Version: results.Version, Command: "bench put", Valid: true, DurationS: 2,
		Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}},
		Ops:    []results.Op{{Op: "put", Requests: 300, BytesSent: 300 * 1040, Service: results.Summary{P50: 3, P99: 9}}},
		Client: results.Client{CPUSeconds: 0.2, Cores: 2},
		Scrapes: []results.Scrape{
			{Member: "m", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:00Z", Text: text("etcd-3.6-before.txt")},
			{Member: "m", Phase: results.PhaseAfter, Time: "2026-01-01T00:00:02Z", Text: text("etcd-3.6-after.txt")},
		}}
	edit(run)
	p := filepath.Join(t.TempDir(), "run.json")
	if err := results.WriteFile(p, run); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnalyzeExitCodes(t *testing.T) {
	before, after := metricsFixture(t, "etcd-3.6-before.txt"), metricsFixture(t, "etcd-3.6-after.txt")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		bottleneck string
	}{
		{"dumps pass", []string{"analyze", "--metrics", before, "--metrics", after, "--cores", "2", "--memory", "8589934592", "--window", "2s"}, ExitOK, "none"},
		{"run file pass", []string{"analyze", writeAnalyzeRun(t, func(*results.Run) {})}, ExitOK, "none"},
		{"large values fail", []string{"analyze", writeAnalyzeRun(t, func(r *results.Run) { r.Ops[0].BytesSent = 300 * 300 << 10 })}, ExitFail, "value-size"},
		{"invalid run", []string{"analyze", writeAnalyzeRun(t, func(r *results.Run) { r.Valid, r.InvalidReason = false, "achieved 80% of the target" })}, ExitInvalid, "none"},
		{"saturated generator", []string{"analyze", writeAnalyzeRun(t, func(r *results.Run) { r.Client.CPUSeconds = 3.9 })}, ExitInvalid, "client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, append(tc.args, "-w", "json")...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, tc.code, r.stderr)
			}
			var out struct {
				Verdict struct{ Status, Bottleneck, Summary string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
			}
			if out.Verdict.Bottleneck != tc.bottleneck {
				t.Errorf("bottleneck %q, want %q (%s)", out.Verdict.Bottleneck, tc.bottleneck, out.Verdict.Summary)
			}
		})
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.txt", "this is { not metrics")
	node := write("node.txt", "# TYPE node_load1 gauge\nnode_load1 0.3\n")
	full, err := os.ReadFile(metricsFixture(t, "etcd-3.6-after.txt"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := write("truncated.txt", string(full[:len(full)/2]))
	other := write("v7.json", `{"version":7}`)
	after := metricsFixture(t, "etcd-3.6-after.txt")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no input", []string{"analyze"}},
		{"one dump", []string{"analyze", "--metrics", after}},
		{"both inputs", []string{"analyze", other, "--metrics", after, "--metrics", after}},
		{"garbage dump", []string{"analyze", "--metrics", garbage, "--metrics", after}},
		{"truncated dump", []string{"analyze", "--metrics", after, "--metrics", truncated}},
		{"not etcd", []string{"analyze", "--metrics", node, "--metrics", node}},
		{"missing run file", []string{"analyze", filepath.Join(dir, "nope.json")}},
		{"run file of another version", []string{"analyze", other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertCleanError(t, runBin(t, nil, tc.args...))
		})
	}
}
