package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/results"
)

// TestDiskJSON checks the -w json contract of `disk` and the run file it writes. The grade is
// whatever this disk earns; only the shape is checked.
func TestDiskJSON(t *testing.T) {
	dir := t.TempDir()
	r := runBin(t, nil, "disk", "--dir", dir, "--size", "64k", "--allow-tmpfs", "-w", "json", "--results-dir", filepath.Join(dir, "runs"))
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	for _, key := range []string{"pattern", "dir", "block_size", "bytes", "iops", "mb_per_s", "fdatasync_ms", "write_ms",
		"grade", "grade_reason", "fio_command", "fdatasync_buckets", "filesystem", "run_file"} {
		if _, ok := out[key]; !ok {
			t.Errorf("no %q in %s", key, r.stdout)
		}
	}
	for _, key := range []string{"p50", "p90", "p99", "p999", "max"} {
		if _, ok := out["fdatasync_ms"].(map[string]any)[key]; !ok {
			t.Errorf("no fdatasync_ms.%s", key)
		}
	}
	if _, ok := out["fdatasync_hist"]; ok {
		t.Errorf("stdout carries the encoded histogram; it belongs in the run file")
	}
	if out["pattern"] != "fio" || out["block_size"] != 2300.0 || out["bytes"] != float64(64<<10/2300*2300) {
		t.Errorf("pattern %v, block size %v, bytes %v", out["pattern"], out["block_size"], out["bytes"])
	}
	if (out["grade"] == "fail") != (r.code == ExitFail) {
		t.Errorf("grade %v with exit %d", out["grade"], r.code)
	}
	run, err := results.ReadFile(out["run_file"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if run.Command != "disk" || len(run.Disk) != 1 || run.Disk[0].SyncHist == "" || run.Disk[0].Writes != 28 {
		t.Errorf("run file: command %q, %d disk results", run.Command, len(run.Disk))
	}
	if h, err := run.Disk[0].SyncHist.Decode(); err != nil || h.TotalCount() != 28 {
		t.Errorf("run file histogram: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 { // the runs folder
		t.Errorf("probe left files in --dir: %v", entries)
	}
}

func TestDiskSimpleAndTable(t *testing.T) {
	dir := t.TempDir()
	for format, want := range map[string][]string{
		"simple": {"fio pattern, 2300-byte blocks", "fdatasync p50", "etcd_disk_wal_fsync_duration_seconds buckets", "grade: ", "fio equivalent: fio --rw=write"},
		"table":  {"PATTERN", "fdatasync", "write", "fio equivalent:"},
	} {
		r := runBin(t, nil, "disk", "--dir", dir, "--size", "32k", "--allow-tmpfs", "-w", format, "--results-dir", filepath.Join(dir, "runs"))
		if r.code != ExitOK && r.code != ExitFail {
			t.Fatalf("-w %s: exit %d: %s", format, r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("-w %s: no %q in\n%s", format, w, r.stdout)
			}
		}
	}
}

// TestDiskBadInput: each must exit 2 with one line on stderr.
func TestDiskBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, want string
		args       []string
	}{
		{"missing folder", "does not exist", []string{"--dir", filepath.Join(dir, "nope")}},
		{"not a folder", "not a folder", []string{"--dir", file}},
		{"unknown pattern", "unknown pattern", []string{"--dir", dir, "--pattern", "random"}},
		{"bad size", "--size", []string{"--dir", dir, "--size", "lots"}},
		{"tiny block", "block size", []string{"--dir", dir, "--block-size", "1"}},
		{"no space", "not enough free space", []string{"--dir", dir, "--size", "4096t"}},
	}
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && uint32(st.Type) == 0x01021994 {
		cases = append(cases, struct {
			name, want string
			args       []string
		}{"tmpfs", "--allow-tmpfs", []string{"--dir", "/dev/shm"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, append([]string{"disk", "--results-dir", filepath.Join(dir, "runs")}, tc.args...)...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Errorf("a run that could not start wrote a run file")
	}
}

// TestDiskInterrupt: Ctrl-C stops the probe, removes its folder, writes the partial run file
// and exits 130.
func TestDiskInterrupt(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	cmd := exec.Command(binPath, "disk", "--dir", dir, "--size", "1g", "--pattern", "wal", "--allow-tmpfs", "-w", "json", "--results-dir", runs)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the probe folder exists, i.e. the probe is writing.
	for i := 0; ; i++ {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			break
		}
		if i > 5000 {
			cmd.Process.Kill()
			t.Fatalf("the probe never started: %s", stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit: %v, want %d; stderr: %s", err, ExitInterrupted, stderr.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "runs" {
		t.Errorf("after Ctrl-C, --dir holds %v; want only the runs folder", entries)
	}
	var out struct {
		Interrupted bool   `json:"interrupted"`
		RunFile     string `json:"run_file"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || !out.Interrupted {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if run, err := results.ReadFile(out.RunFile); err != nil || !run.Interrupted || len(run.Disk) != 1 {
		t.Errorf("run file: %v", err)
	}
}
