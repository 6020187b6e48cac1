package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

// benchEtcd starts an etcd for the binary to load, with a key outside the
// prefix that no run may touch, and returns its endpoint and a client.
func benchEtcd(t *testing.T) (string, *clientv3.Client) {
	t.Helper()
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100})
	cli := clustertest.Client(t, c)
	if _, err := cli.Put(context.Background(), "/outside", "keep"); err != nil {
		t.Fatal(err)
	}
	return c.Endpoints()[0], cli
}

// checkUntouched fails when the prefix holds keys or the outside key changed.
func checkUntouched(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	resp, err := cli.Get(ctx, "/etcdperf/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d keys left under /etcdperf/", resp.Count)
	}
	out, err := cli.Get(ctx, "/outside")
	if err != nil || len(out.Kvs) != 1 || string(out.Kvs[0].Value) != "keep" || out.Kvs[0].Version != 1 {
		t.Errorf("key outside the prefix touched: %v %v", out.Kvs, err)
	}
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func TestBenchJSONContract(t *testing.T) {
	ep, cli := benchEtcd(t)
	for _, tc := range []struct {
		name  string
		args  []string
		ops   []string
		watch bool
	}{
		{"put", []string{"bench", "put", "--total", "300", "--clients", "4", "--conns", "2"}, []string{"put"}, false},
		{"range", []string{"bench", "range", "--keys", "50", "--range-width", "5", "--rate", "200", "--total", "200"}, []string{"range"}, false},
		{"watch", []string{"bench", "watch", "--watchers", "4", "--streams", "2", "--watched-keys", "2", "--rate", "100", "--total", "100"}, []string{"watch", "put"}, true},
		{"mixed", []string{"bench", "mixed", "--key-space-size", "100", "--total", "200", "--read-ratio", "0.5"}, []string{"range", "put"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, append(tc.args, "--endpoints", ep, "-w", "json", "--results-dir", t.TempDir())...)
			// A loaded test machine may miss the rate (3) or really be slow (1, with a diagnosis).
			if r.code != ExitOK && r.code != ExitInvalid && r.code != ExitFail {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
			}
			// The contract's keys plus the analyzer's diagnosis of the run.
			want := []string{"budget", "client", "command", "duration_s", "findings", "invalid_reason", "ops", "run_file", "target", "valid", "verdict", "version"}
			if got := keysOf(out); !slices.Equal(got, want) {
				t.Errorf("keys %v, want %v", got, want)
			}
			if out["command"] != "bench "+tc.name || out["version"] != 1.0 {
				t.Errorf("command %v version %v", out["command"], out["version"])
			}
			if got := keysOf(out["target"].(map[string]any)); !slices.Equal(got, []string{"embedded", "endpoints", "server_version"}) {
				t.Errorf("target keys %v", got)
			}
			if got := keysOf(out["client"].(map[string]any)); !slices.Equal(got, []string{"cpu_seconds", "max_rss_bytes", "transport"}) {
				t.Errorf("client keys %v", got)
			}
			ops := out["ops"].([]any)
			var names []string
			for _, o := range ops {
				op := o.(map[string]any)
				names = append(names, op["op"].(string))
				want := []string{"errors", "late_starts", "latency_ms", "op", "over_max_latency", "requests", "service_ms", "target_rps", "throughput_rps", "unsent"}
				if op["op"] == "watch" {
					want = []string{"errors", "events", "late_starts", "latency_ms", "missed_events", "op", "over_max_latency", "requests", "service_ms", "target_rps", "throughput_rps", "unsent", "watchers"}
				}
				if got := keysOf(op); !slices.Equal(got, want) {
					t.Errorf("op keys %v, want %v", got, want)
				}
				lat := keysOf(op["latency_ms"].(map[string]any))
				if !slices.Equal(lat, []string{"max", "mean", "p50", "p90", "p99", "p999", "stddev"}) {
					t.Errorf("latency keys %v", lat)
				}
			}
			if !slices.Equal(names, tc.ops) {
				t.Errorf("ops %v, want %v", names, tc.ops)
			}
			run, err := results.ReadFile(out["run_file"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if run.Command != "bench "+tc.name || len(run.Ops) != len(tc.ops) || len(run.Scrapes) == 0 || run.Flags["endpoints"] == "" {
				t.Errorf("run file: command %q, %d ops, %d scrapes, flags %v", run.Command, len(run.Ops), len(run.Scrapes), run.Flags)
			}
			checkUntouched(t, cli)
		})
	}
}

// TestBenchTransport runs a short bench over each --transport against one
// etcd: the requests succeed, and the run file, -w json and the text output
// name the transport that carried them.
func TestBenchTransport(t *testing.T) {
	ep, cli := benchEtcd(t)
	for _, tr := range []string{"lean", "grpc", "grpc-tuned"} {
		for _, format := range []string{"json", "simple"} {
			t.Run(tr+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				runFile := filepath.Join(dir, "run.json")
				r := runBin(t, nil, "bench", "put", "--total", "300", "--clients", "4", "--conns", "2", "--transport", tr,
					"--endpoints", ep, "-w", format, "--run-file", runFile)
				if r.code != ExitOK && r.code != ExitInvalid && r.code != ExitFail {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				if format == "json" {
					var out struct {
						Client struct {
							Transport string `json:"transport"`
						} `json:"client"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Client.Transport != tr {
						t.Errorf("-w json client.transport %q (%v), want %q", out.Client.Transport, err, tr)
					}
				} else if !strings.Contains(r.stdout, ", transport "+tr+"\n") {
					t.Errorf("output does not name transport %s:\n%s", tr, r.stdout)
				}
				run, err := results.ReadFile(runFile)
				if err != nil {
					t.Fatal(err)
				}
				if run.Client.Transport != tr || len(run.Ops) != 1 || run.Ops[0].Requests != 300 || run.Ops[0].Errors != 0 {
					t.Errorf("run file: transport %q, ops %+v; want %s, 300 puts without errors", run.Client.Transport, run.Ops, tr)
				}
				checkUntouched(t, cli)
			})
		}
	}
}

func TestBenchInvalidExits3(t *testing.T) {
	ep, cli := benchEtcd(t)
	// Two clients cannot send 100,000 requests a second.
	// 3 s: a stall of the shared server (a busy host) excuses only the requests due while it lasted.
	r := runBin(t, nil, "bench", "put", "--endpoints", ep, "--rate", "100000", "--duration", "3s", "--clients", "2", "-w", "json")
	if r.code != ExitInvalid {
		t.Fatalf("exit %d, want %d: %s%s", r.code, ExitInvalid, r.stderr, r.stdout)
	}
	var out struct {
		Valid         bool   `json:"valid"`
		InvalidReason string `json:"invalid_reason"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Valid || !strings.Contains(out.InvalidReason, "of 100000 target") {
		t.Errorf("valid %v reason %q (%v)", out.Valid, out.InvalidReason, err)
	}
	if !strings.Contains(r.stderr, "invalid run: sent") {
		t.Errorf("stderr %q", r.stderr)
	}
	checkUntouched(t, cli)
}

func TestBenchBadInput(t *testing.T) {
	ep, cli := benchEtcd(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"value over the request limit", []string{"put", "--val-size", "2000000"}, "1.5 MiB"},
		{"no clients", []string{"put", "--clients", "0"}, "--clients"},
		{"bad consistency", []string{"range", "--consistency", "x"}, "consistency"},
		{"range wider than the keys", []string{"range", "--keys", "10", "--range-width", "11"}, "range width"},
		{"read ratio over 1", []string{"mixed", "--read-ratio", "1.5"}, "--read-ratio"},
		{"watch value too small", []string{"watch", "--val-size", "4"}, "--val-size"},
		{"results dir not writable", []string{"put", "--results-dir", filepath.Join(notDir, "sub")}, "results dir"},
		{"unreachable endpoint", []string{"put", "--endpoints", "127.0.0.1:1", "--dial-timeout", "500ms"}, "127.0.0.1:1"},
		{"empty prefix", []string{"put", "--prefix", ""}, "--prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bench"}, tc.args...)
			if !slices.Contains(tc.args, "--endpoints") {
				args = append(args, "--endpoints", ep)
			}
			r := runBin(t, nil, append(args, "--total", "10")...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", r.stderr, tc.want)
			}
			checkUntouched(t, cli)
		})
	}
	t.Run("prefix in use", func(t *testing.T) {
		if _, err := cli.Put(context.Background(), "/etcdperf/theirs", "v"); err != nil {
			t.Fatal(err)
		}
		r := runBin(t, nil, "bench", "put", "--endpoints", ep, "--total", "10")
		assertCleanError(t, r)
		if !strings.Contains(r.stderr, "--force") {
			t.Errorf("stderr %q does not name --force", r.stderr)
		}
		resp, err := cli.Get(context.Background(), "/etcdperf/theirs")
		if err != nil || len(resp.Kvs) != 1 {
			t.Errorf("a refused run touched the prefix: %v %v", resp.Kvs, err)
		}
		if _, err := cli.Delete(context.Background(), "/etcdperf/theirs"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBenchInterrupt sends the first Ctrl-C mid-run: partial results are written,
// the keys deleted, and the exit code is 130.
func TestBenchInterrupt(t *testing.T) {
	ep, cli := benchEtcd(t)
	dir := t.TempDir()
	cmd := exec.Command(binPath, "bench", "put", "--endpoints", ep, "--rate", "200", "--duration", "1m", "--key-space-size", "100", "-w", "json")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Mid-run: once the load's first keys are there (no warm-up: measured), however
	// long a loaded machine took to start the binary, and a little later.
	for deadline := time.Now().Add(30 * time.Second); prefixKeys(t, cli, "/etcdperf/") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no key of the load after 30 s: %s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d; stderr %s", err, ExitInterrupted, stderr.String())
	}
	var out struct {
		RunFile string `json:"run_file"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout: %v\n%s", err, stdout.String())
	}
	run, err := results.ReadFile(filepath.Join(dir, out.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if !run.Interrupted || len(run.Ops) != 1 || run.Ops[0].Requests == 0 {
		t.Errorf("run file: interrupted %v, ops %v", run.Interrupted, run.Ops)
	}
	checkUntouched(t, cli)
}
