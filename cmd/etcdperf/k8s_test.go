package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/k8s"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

func TestK8sJobCommand(t *testing.T) {
	r := runBin(t, nil, "k8s", "job", "--workers", "3", "--start-at", "2027-01-15T08:00:00Z", "--tls-secret", "etcd-client",
		"--", "bench", "put", "--endpoints=https://etcd:2379", "--rate", "3000")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"# etcdperf: 3 workers", "completionMode: Indexed", "--worker-index=$(JOB_COMPLETION_INDEX)",
		"--start-at=2027-01-15T08:00:00Z", "secretName: etcd-client", "name: etcdperf-20270115-080000",
		// The default image is the one make image builds from this binary.
		"image: ghcr.io/etcdperf/etcdperf:", "ttlSecondsAfterFinished: 86400", "type: RuntimeDefault"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("manifest lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, args := range [][]string{
		{"k8s", "job", "--workers", "3", "bench", "put"},                                     // no --
		{"k8s", "job", "--workers", "3", "--", "bench", "put"},                               // no --endpoints
		{"k8s", "job", "--", "bench", "put", "--endpoints=x"},                                // no --workers
		{"k8s", "job", "--workers", "2", "--results", "nfs", "--", "check", "--endpoints=x"}, // bad --results
		{"k8s", "job", "--workers", "2", "--start-at", "soon", "--", "check", "--endpoints=x"},
		{"k8s", "job", "--workers", "2", "--cpu", "0", "--", "check", "--endpoints=x"},
		{"k8s", "job", "--workers", "2", "--memory", "lots", "--", "check", "--endpoints=x"},
		{"k8s", "job", "--workers", "2", "--ttl", "-1h", "--", "check", "--endpoints=x"},
		{"k8s", "worker", "--", "bench", "put"}, // no --run-file
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { assertCleanError(t, runBin(t, nil, args...)) })
	}
}

// TestWorkersLocal runs the worker entrypoint of the k8s manifest as 4 local
// processes against one etcd, each at 1/4 of the target rate from one --start-at,
// and merges their run files.
func TestWorkersLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and 4 load processes")
	}
	if r := runBin(t, nil, "bench", "put", "--help"); !strings.Contains(r.stdout, "--start-at") {
		t.Skip("bench has no --start-at yet: workerFlags is not wired into bench.go (see workers.go)")
	}
	ep, cli := benchEtcd(t)
	const workers, rate = 4, 1000.0
	job := k8s.Job{
		Name: "local", Image: "unused", Workers: workers, Results: k8s.ResultsStdout, CPU: "1", Memory: "1Gi",
		Args:    []string{"bench", "put", "--endpoints=" + ep, "--rate", fmt.Sprint(rate), "--duration", "5s", "--clients", "20"},
		StartAt: time.Now().Add(3 * time.Second),
	}
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	var files []string
	for i := range workers {
		file := filepath.Join(dir, fmt.Sprintf("worker-%d.json", i))
		var args []string
		for _, a := range job.WorkerArgs() {
			// What the kubelet and the pod's run-file path would make of them.
			a = strings.ReplaceAll(a, "$("+k8s.IndexEnv+")", strconv.Itoa(i))
			if strings.HasPrefix(a, "--run-file=") {
				a = "--run-file=" + file
			}
			args = append(args, a)
		}
		// As the pod runs it: through k8s worker, whose stdout is the run file alone.
		cmd := exec.Command(binPath, append(append(slices.Clone(job.WorkerCommand()[1:]), args...), "-w", "json")...)
		cmd.Dir = dir
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs, files = append(cmds, cmd), append(outs, out), append(files, file)
	}
	var logs bytes.Buffer // kubectl logs of every worker pod, one after the other
	for i, cmd := range cmds {
		// A worker that wrote its run file succeeded, whatever its verdict.
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, outs[i])
		}
		logs.Write(outs[i].Bytes())
	}
	checkUntouched(t, cli)
	for i, f := range files {
		r, err := results.ReadFile(f)
		if err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, outs[i])
		}
		if r.Flags["worker-index"] != strconv.Itoa(i) || r.Flags["workers"] != "4" || r.Ops[0].TargetRPS != rate/workers {
			t.Errorf("worker %d run file: flags %v, target %g", i, r.Flags, r.Ops[0].TargetRPS)
		}
		t.Logf("worker %d: started %s, %.1f req/s of %g", i, r.StartedAt.Format("15:04:05.000"), r.Ops[0].ThroughputRPS, r.Ops[0].TargetRPS)
	}

	merged := filepath.Join(dir, "merged.json")
	// The header's command: the logs piped into merge -.
	r := runBinStdin(t, &logs, nil, "merge", "-", "-o", merged, "-w", "json")
	// 1 (a failing verdict) or 3 (invalid) still merged; this machine may be saturated.
	if r.code == ExitError {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	var sum report.Bench
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("merge -w json: %v\n%s", err, r.stdout)
	}
	op := sum.Ops[0]
	t.Logf("merged: %d requests in %.2fs = %.1f req/s of %g target (%.1f%%), p99 %.2f ms, valid %v %s",
		op.Requests, sum.DurationS, op.ThroughputRPS, op.TargetRPS, 100*op.ThroughputRPS/op.TargetRPS, op.Latency.P99, sum.Valid, sum.InvalidReason)
	if op.TargetRPS != rate || sum.RunFile != merged {
		t.Errorf("merged target %g (want %g), run file %q", op.TargetRPS, rate, sum.RunFile)
	}
	// Loose on purpose: a slow shared machine must not fail this; the figure is logged.
	if op.ThroughputRPS < 0.9*rate || op.ThroughputRPS > 1.1*rate {
		t.Errorf("combined %.1f req/s, want within 10%% of %g", op.ThroughputRPS, rate)
	}
	// The merged file keeps the merged run's diagnosis, and a report made from it shows it.
	mr, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if mr.Diagnosis == nil || mr.Diagnosis.Verdict == nil || sum.Verdict == nil || mr.Diagnosis.Verdict.Status != sum.Verdict.Status {
		t.Fatalf("merged run file diagnosis %+v, printed verdict %+v", mr.Diagnosis, sum.Verdict)
	}
	rep := runBin(t, nil, "report", merged)
	if want := "— " + strings.ToUpper(string(sum.Verdict.Status)); !strings.Contains(rep.stdout, want) || !strings.Contains(rep.stdout, "FINDINGS") {
		t.Errorf("report of the merged run: no %q or findings in:\n%s", want, rep.stdout)
	}
}

func TestMergeCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, edit func(*results.Run)) string {
		h := results.NewHist()
		_ = h.RecordValue(1000)
		x, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		run := &results.Run{
			Version: results.Version, Command: "bench put", Valid: true, DurationS: 1,
			StartedAt: time.Unix(1800000000, 0).UTC(), EndedAt: time.Unix(1800000001, 0).UTC(),
			Target: results.ClusterInfo{ClusterID: "c1"}, Flags: map[string]string{"val-size": "256"},
			Ops: []results.Op{{Op: "put", Requests: 1, ResponseHist: x, ServiceHist: x}},
		}
		edit(run)
		p := filepath.Join(dir, name)
		if err := results.WriteFile(p, run); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", func(*results.Run) {})
	other := write("other-cluster.json", func(r *results.Run) { r.Target.ClusterID = "c2" })
	big := write("big-values.json", func(r *results.Run) { r.Flags["val-size"] = "65536" })
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", a, other}, "different etcd clusters"},
		{[]string{"merge", a, big}, "--val-size"},
		{[]string{"merge", a, garbage}, "not a run file"},
		{[]string{"merge", a, filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"merge", a, a}, "named twice"},
		{[]string{"merge", a, "-o", a}, "is one of the run files"},
		{[]string{"merge"}, "requires at least 1 arg"},
	} {
		r := runBin(t, nil, c.args...)
		assertCleanError(t, r)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
	// A good merge writes the file and prints bench's summary object.
	out := filepath.Join(dir, "m.json")
	b := write("b.json", func(r *results.Run) { r.Target.Endpoints = []string{"http://other:2379"} })
	r := runBin(t, nil, "merge", a, b, "-o", out, "-w", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var sum report.Bench
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Ops[0].Requests != 2 || sum.RunFile != out {
		t.Errorf("summary %+v (%v)", sum, err)
	}
}
