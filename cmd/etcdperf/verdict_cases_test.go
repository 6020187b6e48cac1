package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/results"
)

// benchOut is the part of bench's JSON output these cases read.
type benchOut struct {
	Verdict struct {
		Status, Bottleneck, Summary string
		Versions                    []struct{ Version string }
	}
	Findings []struct {
		Class, Severity, Advice string
	}
	Ops []struct {
		Op       string
		Requests int64
		Errors   int64
	}
	RunFile string `json:"run_file"`
}

func decodeBench(t *testing.T, r result) benchOut {
	t.Helper()
	var out benchOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("exit %d, stdout is not JSON: %v\n%s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	return out
}

// TestRangeOver4MiB is issue 14's case 5: a range whose response exceeds gRPC's
// 4 MiB default receive limit is measured, as etcdctl (clientv3's default,
// math.MaxInt32) reads it; --max-recv-bytes lowers the limit as etcdctl's does.
func TestRangeOver4MiB(t *testing.T) {
	ep, cli := benchEtcd(t)
	// 20,000 keys of 256 B values: ~5.5 MB per range.
	args := []string{"bench", "range", "--keys", "20000", "--val-size", "256", "--range-width", "20000", "--total", "3", "--clients", "1",
		"--endpoints", ep, "-w", "json", "--results-dir", t.TempDir()}
	out := decodeBench(t, runBin(t, nil, args...))
	if len(out.Ops) != 1 || out.Ops[0].Requests != 3 || out.Ops[0].Errors != 0 {
		t.Fatalf("ops %+v, want 3 ranges and no error: %s", out.Ops, out.Verdict.Summary)
	}
	out = decodeBench(t, runBin(t, nil, append(args, "--max-request-bytes", "524288", "--max-recv-bytes", "1048576")...))
	run, err := results.ReadFile(out.RunFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Ops) != 1 || run.Ops[0].ErrorsByCode["ResourceExhausted"] == 0 {
		t.Errorf("with --max-recv-bytes 1 MiB: ops %+v, want ResourceExhausted errors", out.Ops)
	}
	checkUntouched(t, cli)
}

// TestQuotaFull is issue 14's case 4: the backend quota fills mid-run, the NOSPACE
// alarm is raised and every further put fails with "database space exceeded".
// The verdict is fail (exit 1), bottleneck quota, with the recovery steps — not
// an invalid measurement blamed on the disk. The member keeps its data in memory:
// 25 MB of 64 KiB puts in 2 s on a disk another job is writing to can really
// grade the disk failing, which is not what this test is about.
func TestQuotaFull(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{Processes: true, TickMs: 10, ElectionMs: 100,
		Dir: faults.MemDir(t), ExtraArgs: []string{"--quota-backend-bytes", "8388608"}})
	r := runBin(t, nil, "bench", "put", "--val-size", "65536", "--rate", "200", "--total", "400", "--clients", "4",
		"--endpoints", c.Endpoints()[0], "-w", "json", "--results-dir", t.TempDir())
	out := decodeBench(t, r)
	if r.code != ExitFail || out.Verdict.Status != "fail" || out.Verdict.Bottleneck != "quota" {
		t.Fatalf("exit %d, verdict %s/%s, want 1 fail/quota: %s", r.code, out.Verdict.Status, out.Verdict.Bottleneck, out.Verdict.Summary)
	}
	for _, f := range out.Findings {
		if f.Class == "quota" && (!strings.Contains(f.Advice, "alarm disarm") || !strings.Contains(f.Advice, "defrag")) {
			t.Errorf("quota advice lacks the recovery steps: %q", f.Advice)
		}
		if f.Class == "disk" && f.Severity == "fail" {
			t.Errorf("a full quota blamed on the disk")
		}
	}
	if len(out.Verdict.Versions) == 0 || out.Verdict.Versions[0].Version == "" {
		t.Errorf("the verdict names no server version: %+v", out.Verdict.Versions)
	}
}
