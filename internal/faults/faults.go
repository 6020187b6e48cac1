// Package faults creates real faults for end-to-end tests: an ext4 filesystem on a
// loop device, and cgroup v1 limits (blkio write IOPS, memory, CPU quota) on
// processes. Everything it sets up is undone by t.Cleanup, and when the machine
// cannot do it (not root, no cgroup v1 controller, no loop device, a tool missing)
// the test is skipped with the exact reason, never silently.
package faults

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// CgroupRoot is where the cgroup v1 controllers are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// tmpfsMagic is statfs's f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// RequireRoot skips the test unless it runs as root: loop devices, mounts and
// cgroup limits all need it.
func RequireRoot(t testing.TB) {
	t.Helper()
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("needs root to attach loop devices, mount them and write cgroup limits; running as uid %d", uid)
	}
}

// RequireTools skips the test when one of the named programs is not on PATH.
func RequireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

// Cgroup is a cgroup v1 group of one controller, made for one test.
type Cgroup struct {
	// Dir is the group's folder, e.g. /sys/fs/cgroup/cpu/etcdperf-test-123-cpu.
	Dir string
	// parent is where the group was made and where its processes go back to.
	parent string
}

// NewCgroup makes a cgroup of controller (blkio, memory, cpu) for this test. It
// skips, saying why, when the controller is not mounted as cgroup v1 or file (a
// control file the test needs, such as "cpu.cfs_quota_us") does not exist.
//
// The group is made inside this process's own cgroup of that controller when that
// folder is visible, so the limits of whatever runs the tests still apply to the
// processes moved into it. Cleanup moves any process still in the group back to
// that parent and removes the group, leaving the hierarchy as it was.
func NewCgroup(t testing.TB, controller, file string) *Cgroup {
	t.Helper()
	mount := filepath.Join(CgroupRoot, controller)
	if _, err := os.Stat(filepath.Join(mount, file)); err != nil {
		t.Skipf("no cgroup v1 %s controller with %s at %s (cgroup v2 only?): %v", controller, file, mount, err)
	}
	parent := mount
	if own, ok := ownCgroup(controller); ok {
		if fi, err := os.Stat(filepath.Join(mount, own)); err == nil && fi.IsDir() {
			parent = filepath.Join(mount, own)
		}
	}
	dir := filepath.Join(parent, fmt.Sprintf("etcdperf-test-%d-%s", os.Getpid(), sanitize(t.Name())))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a %s cgroup under %s: %v", controller, parent, err)
	}
	cg := &Cgroup{Dir: dir, parent: parent}
	t.Cleanup(func() {
		if err := cg.release(); err != nil {
			t.Errorf("cgroup %s: %v", dir, err)
		}
	})
	return cg
}

// Set writes value to the group's control file (e.g. "cpu.cfs_quota_us").
func (c *Cgroup) Set(file, value string) error {
	if err := os.WriteFile(filepath.Join(c.Dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("set %s/%s = %s: %w", c.Dir, file, value, err)
	}
	return nil
}

// Get reads one of the group's control files, trimmed.
func (c *Cgroup) Get(file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, file))
	return strings.TrimSpace(string(b)), err
}

// Add moves process pid, all its threads, into the group.
func (c *Cgroup) Add(pid int) error {
	return move(c.Dir, pid)
}

// Remove moves process pid back to the group's parent.
func (c *Cgroup) Remove(pid int) error {
	return move(c.parent, pid)
}

// release moves every process still in the group to the parent and removes it.
func (c *Cgroup) release() error {
	b, err := os.ReadFile(filepath.Join(c.Dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if err := move(c.parent, pid); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(c.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func move(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("move pid %d to %s: %w", pid, dir, err)
	}
	return nil
}

// ownCgroup is this process's cgroup path for a v1 controller, from /proc/self/cgroup.
func ownCgroup(controller string) (string, bool) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				return parts[2], true
			}
		}
	}
	return "", false
}

// sanitize makes a test name usable as a folder name.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, name)
}

// Loop is an ext4 filesystem on a loop device, mounted for one test.
type Loop struct {
	Device string // /dev/loopN
	MajMin string // "7:N", as blkio control files name devices
	Image  string // the backing file
	Mount  string // where it is mounted
}

// NewLoopExt4 formats a loop device of size bytes as ext4 and mounts it. It
// skips, saying why, when the tools are missing, no loop device can be attached or
// the mount is refused. Cleanup unmounts, detaches and removes the image.
//
// The image lives in memory (/dev/shm) where it can, so the device is fast and
// steady whatever else the machine's disk is doing, and a throttle is the only
// slow part; else it is written out and synced first, so neither block allocation
// nor writeback of the image lands in the measurement.
func NewLoopExt4(t testing.TB, size int64) *Loop {
	t.Helper()
	RequireRoot(t)
	RequireTools(t, "losetup", "mkfs.ext4", "mount", "umount")
	img, err := loopImage(t, size)
	if err != nil {
		t.Fatalf("loop image: %v", err)
	}
	return newLoopExt4(t, img)
}

// newLoopExt4 attaches image img to a loop device, formats it as ext4 (with
// mkfs's extra options) and mounts it.
func newLoopExt4(t testing.TB, img string, mkfs ...string) *Loop {
	t.Helper()
	RequireRoot(t)
	RequireTools(t, "losetup", "mkfs.ext4", "mount", "umount")
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("cannot attach a loop device (no /dev/loop* or loop module in this container?): %v: %s", err, out)
	}
	l := &Loop{Device: strings.TrimSpace(string(out)), Image: img}
	t.Cleanup(func() { run(t, "losetup", "-d", l.Device) })
	if out, err := exec.Command("mkfs.ext4", append(append([]string{"-q", "-F"}, mkfs...), l.Device)...).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v: %s", l.Device, err, out)
	}
	l.Mount = t.TempDir()
	if out, err := exec.Command("mount", l.Device, l.Mount).CombinedOutput(); err != nil {
		t.Skipf("cannot mount %s (no CAP_SYS_ADMIN?): %v: %s", l.Device, err, out)
	}
	t.Cleanup(func() { run(t, "umount", l.Mount) })
	var st unix.Stat_t
	if err := unix.Stat(l.Device, &st); err != nil {
		t.Fatal(err)
	}
	l.MajMin = fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	return l
}

// MemDir is a new folder in memory (tmpfs), removed when the test ends, for the
// data dir of a member whose disk is not what the test is about: on a shared
// machine another job's writes can stall fsyncs to the real disk for tens of
// milliseconds, enough to grade the disk as failing in a test of the CPU or of
// the client. Without a tmpfs at /dev/shm it is t.TempDir().
func MemDir(t testing.TB) string {
	t.Helper()
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || uint32(st.Type) != tmpfsMagic {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "etcdperf-data-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func loopImage(t testing.TB, size int64) (string, error) {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && uint32(st.Type) == tmpfsMagic && int64(st.Bavail)*int64(st.Bsize) > 2*size {
		dir, err := os.MkdirTemp("/dev/shm", "etcdperf-loop-")
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
	buf := make([]byte, 1<<20)
	for written := int64(0); written < size; written += int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), size-written)]); err != nil {
			return "", err
		}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return img, f.Close()
}

// ExecIn returns the command line that runs argv inside the given cgroups from its
// first instruction: a shell moves itself into each group and then execs argv, so
// nothing the program does escapes the limits.
func ExecIn(argv []string, groups ...*Cgroup) []string {
	var script bytes.Buffer
	script.WriteString(`for d in`)
	for _, g := range groups {
		fmt.Fprintf(&script, " %q", g.Dir)
	}
	script.WriteString(`; do echo $$ > "$d/cgroup.procs" || exit 1; done; exec "$@"`)
	return append([]string{"sh", "-c", script.String(), "sh"}, argv...)
}

// run runs a cleanup command, reporting (not hiding) a failure.
func run(t testing.TB, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}
