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
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
// plain and once with a cgroup v1 blkio limit of 100 write IOPS on the probing process. The
// plain run must pass and the throttled one fail with a p99 far above 10 ms (about 100 ms was
// seen here). Both grades are wide of the limits, so a busy machine does not flip them.
func TestE2EThrottledDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the e2e test formats a loop device and runs for about 10 s")
	}
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("needs root to attach a loop device, mount it and write cgroup limits; running as uid %d", uid)
	}
	const cgRoot = "/sys/fs/cgroup/blkio"
	if _, err := os.Stat(filepath.Join(cgRoot, "blkio.throttle.write_iops_device")); err != nil {
		t.Skipf("no cgroup v1 blkio controller with throttling at %s (cgroup v2 only?): %v", cgRoot, err)
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}

	// A 256 MiB ext4 filesystem on a loop device. Its image lives in memory (/dev/shm) where it
	// can, so the plain run measures the loop device, not how busy the machine's disk is at the
	// moment, and the throttle is the only slow part. Cleanups run in reverse: umount, detach, remove.
	img, err := loopImage(t, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("cannot attach a loop device (no /dev/loop* or loop module in this container?): %v: %s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { run(t, "losetup", "-d", loop) })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", loop).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v: %s", loop, err, out)
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", loop, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount %s (no CAP_SYS_ADMIN?): %v: %s", loop, err, out)
	}
	t.Cleanup(func() { run(t, "umount", mnt) })
	var st unix.Stat_t
	if err := unix.Stat(loop, &st); err != nil {
		t.Fatal(err)
	}
	majMin := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))

	cg := filepath.Join(cgRoot, fmt.Sprintf("etcdperf-e2e-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("cannot create a blkio cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(cg); err != nil {
			t.Errorf("remove cgroup %s: %v", cg, err)
		}
	})
	if err := os.WriteFile(filepath.Join(cg, "blkio.throttle.write_iops_device"), []byte(majMin+" 100"), 0o644); err != nil {
		t.Skipf("cannot set a write IOPS limit on %s (%s): %v", loop, majMin, err)
	}

	// About 300 writes: 3-5 s at 100 IOPS, enough samples for a p99.
	cfg := Config{Dir: mnt, Pattern: PatternFio, Size: 300 * 2300, Duration: 60 * time.Second}
	plain := probeChild(t, cfg, "")
	throttled := probeChild(t, cfg, cg)
	t.Logf("plain %s:     fdatasync p50 %.3f ms, p99 %.3f ms, %.0f IOPS, %s", loop, plain.Fdatasync.P50, plain.Fdatasync.P99, plain.IOPS, plain.Grade)
	t.Logf("throttled %s: fdatasync p50 %.3f ms, p99 %.3f ms, %.0f IOPS, %s", loop, throttled.Fdatasync.P50, throttled.Fdatasync.P99, throttled.IOPS, throttled.Grade)

	if plain.Grade != Pass {
		t.Errorf("plain loop device: grade %s (%s), want pass", plain.Grade, plain.GradeReason)
	}
	if throttled.Grade != Fail || throttled.Fdatasync.P99 < 2*RuleWAL.LimitMs {
		t.Errorf("throttled loop device: grade %s, p99 %.3f ms; want fail with p99 ≥ %g ms (%s)",
			throttled.Grade, throttled.Fdatasync.P99, 2*RuleWAL.LimitMs, throttled.GradeReason)
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

// loopImage creates the backing file of the loop device: sparse on /dev/shm when that is a
// tmpfs, else written out and synced in a temp folder (dd if=/dev/zero conv=fsync), so neither
// block allocation nor writeback of the backing file lands in the measured runs.
func loopImage(t *testing.T, size int64) (string, error) {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && uint32(st.Type) == tmpfsMagic && int64(st.Bavail)*int64(st.Bsize) > 2*size {
		dir, err := os.MkdirTemp("/dev/shm", "diskprobe-e2e-")
		if err != nil {
			return "", err
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		img := filepath.Join(dir, "disk.img")
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			return "", err
		}
		return img, os.Truncate(img, size)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.OpenFile(img, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := fillFile(f, size); err != nil {
		return "", err
	}
	return img, f.Close()
}

// probeChild runs the probe in a child process, inside cgroup cg when it is not empty: a shell
// moves itself into the cgroup and then execs the test binary, so no I/O escapes the limit.
func probeChild(t *testing.T, cfg Config, cg string) results.DiskResult {
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
	if cg != "" {
		args = []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$1"`, cg, self}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+string(cfgJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe child (cgroup %q): %v: %s", cg, err, stderr.String())
	}
	var res results.DiskResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("probe child output: %v: %s", err, stdout.String())
	}
	return res
}

// run runs a cleanup command, reporting (not hiding) a failure.
func run(t *testing.T, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}
