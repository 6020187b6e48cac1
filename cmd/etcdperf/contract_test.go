package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/results"
)

// leaves are the commands of the tree that run something, by path.
func leaves(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { null.Close() })
	root := newApp(null, null, null).rootCmd()
	out := map[string]*cobra.Command{}
	cli.Walk(root, func(c *cobra.Command) {
		if c.Runnable() && !c.HasSubCommands() {
			out[c.CommandPath()] = c
		}
	})
	return out
}

// sampleRunFile writes a small valid run file of one put op.
func sampleRunFile(t *testing.T, dir, name string) string {
	t.Helper()
	h := results.NewHist()
	for i := int64(1); i <= 100; i++ {
		_ = h.RecordValue(i * 100)
	}
	x, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{
		Version: results.Version, Command: "bench put", Valid: true, DurationS: 1,
		StartedAt: time.Unix(1800000000, 0).UTC(), EndedAt: time.Unix(1800000001, 0).UTC(),
		Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}},
		Ops:    []results.Op{{Op: "put", Requests: 100, ThroughputRPS: 100, Latency: results.Summarize(h), Service: results.Summarize(h), ResponseHist: x, ServiceHist: x}},
	}
	path := filepath.Join(dir, name)
	if err := results.WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	return path
}

// oneJSONObject reports whether s is exactly one JSON object and nothing else.
func oneJSONObject(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// TestEveryCommandWritesOneJSONObject walks the command tree: every command that
// honours -w json prints exactly one JSON object on stdout with it, and every
// other -w value it does not honour is refused in one line with exit 2. A new
// command without a case here fails the test. Commands that need a cluster run
// against one embedded etcd, briefly, unless -short.
func TestEveryCommandWritesOneJSONObject(t *testing.T) {
	dir := t.TempDir()
	a, b := sampleRunFile(t, dir, "a.json"), sampleRunFile(t, dir, "b.json")
	// Cases by command path: the args after the path, and whether it needs etcd.
	type jcase struct {
		args []string
		live bool
		// elsewhere names the live test that checks this command's -w json, for
		// commands too slow to run here (minutes, a 3-member cluster).
		elsewhere string
	}
	const ep = "$EP"
	cases := map[string]jcase{
		"etcdperf version":               {},
		"etcdperf profiles list":         {},
		"etcdperf profiles show":         {args: []string{"check-perf-s"}},
		"etcdperf analyze":               {args: []string{a}},
		"etcdperf report":                {args: []string{a}},
		"etcdperf compare":               {args: []string{a, b}},
		"etcdperf merge":                 {args: []string{a, "-o", filepath.Join(dir, "merged.json")}},
		"etcdperf k8s job":               {args: []string{"--workers", "2", "--start-at", "2027-01-15T08:00:00Z", "--", "bench", "put", "--endpoints=x"}},
		"etcdperf disk":                  {args: []string{"--dir", dir, "--size", "64k", "--allow-tmpfs", "--results-dir", filepath.Join(dir, "runs")}},
		"etcdperf bench put":             {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench range":           {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench watch":           {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench txn":             {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench lease":           {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench list":            {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf bench mixed":           {args: []string{"--endpoints", ep, "--total", "20"}, live: true},
		"etcdperf inspect":               {args: []string{"--endpoints", ep, "--max-rps", "0"}, live: true},
		"etcdperf bundle":                {args: []string{"--endpoints", ep, "--interval", "1s", "--reads", "2", "-o", filepath.Join(dir, "b.tar.gz")}, live: true},
		"etcdperf check":                 {args: []string{"--endpoints", ep, "--load", "s", "--duration", "2s"}, live: true},
		"etcdperf plan":                  {args: []string{"--datascale", "--keys", "2000", "--val-size", "1KiB"}},
		"etcdperf qualify":               {args: []string{"--tier", "small", "--duration", "2s", "--data-dir", dir}, live: true},
		"etcdperf drill replace-member":  {elsewhere: "TestDrillReplaceJSON (a 3-member cluster)"},
		"etcdperf drill rolling-restart": {args: []string{"--rate", "50", "--before", "1s", "--after", "1s", "--settle", "1s"}, live: true},
		"etcdperf k8s worker":            {}, // simple only: refused below
		"etcdperf k8s canary":            {args: []string{"--", "--endpoints=x"}},
		"etcdperf serve":                 {args: []string{"--endpoints", ep, "--every", "10s", "--probes", "1", "--listen", "127.0.0.1:0"}, live: true},
		"etcdperf help":                  {},
		"etcdperf completion bash":       {},
		"etcdperf completion zsh":        {},
		"etcdperf completion fish":       {},
		"etcdperf completion powershell": {},
	}
	var endpoint string
	if !testing.Short() {
		endpoint, _ = benchEtcd(t)
	}
	for path, cmd := range leaves(t) {
		c, ok := cases[path]
		if !ok {
			t.Errorf("%s has no case here: give it one (what -w json prints)", path)
			continue
		}
		outs := cli.OutputsOf(cmd)
		t.Run(strings.TrimPrefix(path, "etcdperf "), func(t *testing.T) {
			words := strings.Fields(strings.TrimPrefix(path, "etcdperf "))
			// Each -w value the command does not honour: one line, exit 2, no stdout.
			for _, w := range cli.Outputs {
				if slices.Contains(outs, w) {
					continue
				}
				r := runBin(t, nil, append(append(slices.Clone(words), "-w", w), c.args...)...)
				assertCleanError(t, r)
				if r.stdout != "" {
					t.Errorf("-w %s refused, yet stdout: %q", w, r.stdout)
				}
			}
			if !slices.Contains(outs, "json") {
				return
			}
			if c.elsewhere != "" {
				t.Skipf("-w json checked by %s", c.elsewhere)
			}
			if c.live {
				if testing.Short() {
					t.Skip("needs etcd")
				}
			}
			args := slices.Clone(c.args)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], ep, endpoint)
			}
			r := runBin(t, nil, append(append(words, "-w", "json", "--results-dir", filepath.Join(dir, "runs")), args...)...)
			if r.code == ExitError {
				t.Fatalf("exit 2: %s", r.stderr)
			}
			if !oneJSONObject(r.stdout) {
				t.Errorf("-w json: stdout is not exactly one JSON object:\n%s", r.stdout)
			}
		})
	}
	for path := range cases {
		if _, ok := leaves(t)[path]; !ok {
			t.Errorf("case %s names no command", path)
		}
	}
	for path := range declaredOutputs {
		if _, ok := leaves(t)[path]; !ok {
			t.Errorf("declaredOutputs names %s, not a command", path)
		}
	}
}
