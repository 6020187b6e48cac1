package diskprobe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/results"
)

// childEnv, when set, makes the test binary run one probe (the Config in the variable, as
// JSON), print its result as JSON and exit: the e2e test re-executes itself this way so the
// probe's I/O comes from a process it can place in a cgroup.
const childEnv = "DISKPROBE_E2E_CHILD"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(runChild(cfg))
	}
	os.Exit(m.Run())
}

func runChild(cfgJSON string) int {
	var cfg Config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// TestE2EThrottledDisk is the ground truth for a slow disk: the same ext4 loop device, once
// plain and once with a cgroup limit of 100 write IOPS on the probing process. The
// plain run must pass and the throttled one fail with a p99 far above 10 ms (about 100 ms was
// seen here). Both grades are wide of the limits, so a busy machine does not flip them.
func TestE2EThrottledDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the e2e test formats a loop device and runs for about 10 s")
	}
	faults.RequireRoot(t)
	faults.RequireTools(t, "sh")
	// A 256 MiB ext4 filesystem on a loop device, and a blkio cgroup limiting it to 100 write IOPS.
	l := faults.NewLoopExt4(t, 256<<20)
	loop, img, mnt := l.Device, l.Image, l.Mount
	cg := faults.NewCgroup(t, "blkio", "blkio.throttle.write_iops_device")
	if err := cg.Set("blkio.throttle.write_iops_device", l.MajMin+" 100"); err != nil {
		t.Skipf("cannot set a write IOPS limit on %s: %v", loop, err)
	}

	// About 300 writes: 3-5 s at 100 IOPS, enough samples for a p99.
	cfg := Config{Dir: mnt, Pattern: PatternFio, Size: 300 * 2300, Duration: 60 * time.Second}
	plain := probeChild(t, cfg, nil)
	throttled := probeChild(t, cfg, cg)
	t.Logf("plain %s:     fdatasync p50 %.3f ms, p99 %.3f ms, %.0f IOPS, %s", loop, plain.Fdatasync.P50, plain.Fdatasync.P99, plain.IOPS, plain.Grade)
	t.Logf("throttled %s: fdatasync p50 %.3f ms, p99 %.3f ms, %.0f IOPS, %s", loop, throttled.Fdatasync.P50, throttled.Fdatasync.P99, throttled.IOPS, throttled.Grade)

	if plain.Severity() != finding.OK {
		t.Errorf("plain loop device: grade %s (%s), want pass", plain.Grade, plain.GradeReason)
	}
	if throttled.Severity() != finding.Fail || throttled.Fdatasync.P99 < 2*LimitWAL.LimitMs {
		t.Errorf("throttled loop device: grade %s, p99 %.3f ms; want fail with p99 ≥ %g ms (%s)",
			throttled.Grade, throttled.Fdatasync.P99, 2*LimitWAL.LimitMs, throttled.GradeReason)
	}
	if throttled.Device == nil || throttled.Device.Device != filepath.Base(loop) || throttled.Device.BackingFile != img {
		t.Errorf("device facts = %+v, want %s backed by %s", throttled.Device, filepath.Base(loop), img)
	}
	if throttled.Filesystem != "ext4" || throttled.Mountpoint != mnt {
		t.Errorf("filesystem facts = %s at %s, want ext4 at %s", throttled.Filesystem, throttled.Mountpoint, mnt)
	}
	if entries, _ := os.ReadDir(mnt); len(entries) != 1 || entries[0].Name() != "lost+found" {
		t.Errorf("probe left files behind: %v (want only mkfs's lost+found)", entries)
	}

	// A read-only filesystem is refused before anything is written.
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount %s read-only: %v: %s", mnt, err, out)
	}
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Run on a read-only filesystem = %v, want ErrReadOnly", err)
	}
}

// probeChild runs the probe in a child process, inside cgroup cg when it is not nil: a shell
// moves itself into the cgroup and then execs the test binary, so no I/O escapes the limit.
func probeChild(t *testing.T, cfg Config, cg *faults.Cgroup) results.DiskResult {
	t.Helper()
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{self}
	where := "none"
	if cg != nil {
		args, where = faults.ExecIn(args, cg), cg.Dir
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+string(cfgJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe child (cgroup %s): %v: %s", where, err, stderr.String())
	}
	var res results.DiskResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("probe child output: %v: %s", err, stdout.String())
	}
	return res
}
