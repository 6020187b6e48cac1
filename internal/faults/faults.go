// Package faults creates real faults for end-to-end tests: an ext4 filesystem on a
// loop device, and cgroup limits (write IOPS, memory, CPU quota; v1 or v2) on
// processes. Everything it sets up is undone by t.Cleanup, and when the machine
// cannot do it (not root, no cgroup controller, no loop device, a tool missing)
// the test is skipped with the exact reason, never silently.
package faults

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

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

// Cgroup is a group of one cgroup controller, made for one test, on cgroup v1
// or, where v1 lacks the controller, on cgroup v2. Callers name files as in v1;
// on v2, Set and Get translate the ones the tests use. A process is in one v2
// group only, so joining a second one (another controller's) leaves the first.
type Cgroup struct {
	// Dir is the group's folder, e.g. /sys/fs/cgroup/cpu/etcdperf-test-123-TestCPU
	// on v1 or /sys/fs/cgroup/etcdperf-test-123/TestCPU-cpu on v2.
	Dir string
	// home is where its processes go back to: the group this process was in.
	home string
	// v2 says Dir is a cgroup v2 group.
	v2 bool
	// quota and period are the two halves of v2's cpu.max, which v1 sets one at
	// a time; a new group starts at "max 100000".
	quota, period string
}

// cgroupFS is where the hierarchies are: v1 holds one mount per v1 controller
// (v1/<controller>), and mountinfo names the cgroup2 mount. Unit tests point it
// at fake hierarchies.
var cgroupFS = struct{ v1, mountinfo string }{"/sys/fs/cgroup", "/proc/self/mountinfo"}

// v2mu keeps a test from removing this process's v2 parent group while another
// one makes its group in it.
var v2mu sync.Mutex

// NewCgroup makes a cgroup of controller (blkio, memory, cpu) for this test. A
// v1 mount of the controller with file (a control file the test needs, such as
// "cpu.cfs_quota_us") is used as is; without one, a cgroup v2 hierarchy with the
// controller's v2 equivalent (blkio is io there). It skips, naming both, when
// there is neither.
//
// On v1 the group is made inside this process's own cgroup of that controller when
// that folder is visible, so the limits of whatever runs the tests still apply to
// the processes moved into it. On v2 that group holds processes, so it cannot have
// children with controllers: the group is a leaf in a parent of this process's own
// at the top of the hierarchy. Cleanup moves any process still in the group back
// to this process's group and removes the groups it made (v2 leaves the
// controllers it enabled, which change no limit).
func NewCgroup(t testing.TB, controller, file string) *Cgroup {
	t.Helper()
	mount, v2, err := findCgroup(controller, file)
	if err != nil {
		t.Skip(err)
	}
	var cg *Cgroup
	if v2 == "" {
		home := homeCgroup(mount, controller)
		cg = &Cgroup{Dir: filepath.Join(home, fmt.Sprintf("etcdperf-test-%d-%s", os.Getpid(), sanitize(t.Name()))), home: home}
		err = os.Mkdir(cg.Dir, 0o755)
	} else {
		// The v2 line of /proc/self/cgroup names no controller.
		cg = &Cgroup{home: homeCgroup(mount, ""), v2: true, quota: "max", period: "100000"}
		cg.Dir, err = makeV2(mount, v2, sanitize(t.Name())+"-"+controller)
	}
	if err != nil {
		t.Skipf("cannot create a %s cgroup under %s: %v", controller, mount, err)
	}
	t.Cleanup(func() {
		if err := cg.release(); err != nil {
			t.Errorf("cgroup %s: %v", cg.Dir, err)
		}
	})
	return cg
}

// findCgroup is where a group of controller with file can be made: a v1 mount
// (v2 ""), else the cgroup2 mount and the v2 controller; an error names what
// each lacks.
func findCgroup(controller, file string) (mount, v2 string, err error) {
	v1 := filepath.Join(cgroupFS.v1, controller)
	_, err1 := os.Stat(filepath.Join(v1, file))
	if err1 == nil {
		return v1, "", nil
	}
	v2 = controller
	if controller == "blkio" {
		v2 = "io"
	}
	mount, err2 := cgroup2Mount()
	if err2 == nil {
		var b []byte
		if b, err2 = os.ReadFile(filepath.Join(mount, "cgroup.controllers")); err2 == nil && !slices.Contains(strings.Fields(string(b)), v2) {
			err2 = fmt.Errorf("%s/cgroup.controllers lists %q", mount, strings.TrimSpace(string(b)))
		}
	}
	if err2 == nil {
		return mount, v2, nil
	}
	return "", "", fmt.Errorf("neither a cgroup v1 %s controller with %s (%v) nor a cgroup v2 hierarchy with the %s controller (%v)", controller, file, err1, v2, err2)
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a
// v2-only machine, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2Mount() (string, error) {
	b, err := os.ReadFile(cgroupFS.mountinfo)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		// "36 25 0:30 / /sys/fs/cgroup rw,relatime shared:9 - cgroup2 cgroup2 rw":
		// the mount point is the fifth field, the type the first after " - ".
		mnt, typ, ok := strings.Cut(line, " - ")
		if f := strings.Fields(mnt); ok && len(f) > 4 && strings.HasPrefix(typ, "cgroup2 ") {
			return f[4], nil
		}
	}
	return "", fmt.Errorf("no cgroup2 filesystem in %s", cgroupFS.mountinfo)
}

// makeV2 makes the leaf group name with controller enabled, in this process's
// parent group under the v2 hierarchy root, and returns its folder. Enabling a
// controller that already is enabled is a no-op for the kernel, so it is not
// checked first.
func makeV2(root, controller, name string) (string, error) {
	v2mu.Lock()
	defer v2mu.Unlock()
	parent := filepath.Join(root, fmt.Sprintf("etcdperf-test-%d", os.Getpid()))
	if err := enable(root, controller); err != nil {
		return "", err
	}
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	dir := filepath.Join(parent, name)
	err := enable(parent, controller)
	if err == nil {
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil {
		os.Remove(parent) // fails, as it should, while another test's group is in it
	}
	return dir, err
}

// enable lets the children of v2 group dir use controller.
func enable(dir, controller string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+controller), 0o644)
}

// Set writes value to the group's control file, named as in v1 (e.g.
// "cpu.cfs_quota_us"); on v2 it writes the equivalent (see v2Set).
func (c *Cgroup) Set(file, value string) error {
	next := *c // what v2Set remembers counts once the kernel took it, as on v1
	if c.v2 {
		file, value = next.v2Set(file, strings.TrimSpace(value))
	}
	if err := os.WriteFile(filepath.Join(c.Dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("set %s/%s = %s: %w", c.Dir, file, value, err)
	}
	*c = next
	return nil
}

// v2Set is the v2 file and value that do what writing value to v1's file does;
// other files are written as named.
func (c *Cgroup) v2Set(file, value string) (string, string) {
	switch file {
	case "blkio.throttle.write_iops_device": // "MAJ:MIN N"
		dev, n, _ := strings.Cut(value, " ")
		if n == "0" { // v1's 0 lifts the limit
			n = "max"
		}
		return "io.max", dev + " wiops=" + n
	case "cpu.cfs_period_us":
		c.period = value
		return "cpu.max", c.quota + " " + c.period
	case "cpu.cfs_quota_us":
		c.quota = value
		if value == "-1" {
			c.quota = "max"
		}
		return "cpu.max", c.quota + " " + c.period
	case "memory.limit_in_bytes":
		if value == "-1" {
			value = "max"
		}
		return "memory.max", value
	}
	return file, value
}

// Get reads one of the group's control files, trimmed, named as in v1; on v2 it
// reads the equivalent of the ones the tests read and answers as v1 would.
func (c *Cgroup) Get(file string) (string, error) {
	if !c.v2 {
		return c.read(file)
	}
	switch file {
	case "cpu.cfs_quota_us", "cpu.cfs_period_us":
		v, err := c.read("cpu.max")
		quota, period, _ := strings.Cut(v, " ")
		if file == "cpu.cfs_period_us" {
			return period, err
		}
		if quota == "max" {
			quota = "-1"
		}
		return quota, err
	case "memory.limit_in_bytes":
		v, err := c.read("memory.max")
		if v == "max" { // v1's no limit: LONG_MAX rounded down to a page
			v = strconv.FormatInt(math.MaxInt64&^int64(os.Getpagesize()-1), 10)
		}
		return v, err
	case "memory.max_usage_in_bytes":
		return c.read("memory.peak")
	case "memory.failcnt": // times the usage hit the limit: memory.events' "max N"
		v, err := c.read("memory.events")
		for _, line := range strings.Split(v, "\n") {
			if n, ok := strings.CutPrefix(line, "max "); ok {
				return n, err
			}
		}
		return "", cmp.Or(err, fmt.Errorf("no max count in %s/memory.events", c.Dir))
	}
	return c.read(file)
}

func (c *Cgroup) read(file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, file))
	return strings.TrimSpace(string(b)), err
}

// Add moves process pid, all its threads, into the group.
func (c *Cgroup) Add(pid int) error {
	return move(c.Dir, pid)
}

// Remove moves process pid back to the group this process was in.
func (c *Cgroup) Remove(pid int) error {
	return move(c.home, pid)
}

// release moves every process still in the group back home and removes it, and
// on v2 its parent once no other test of this process has a group there.
func (c *Cgroup) release() error {
	b, err := os.ReadFile(filepath.Join(c.Dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if err := move(c.home, pid); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(c.Dir); err != nil {
		errs = append(errs, err)
	}
	if c.v2 {
		v2mu.Lock()
		if err := os.Remove(filepath.Dir(c.Dir)); err != nil && !errors.Is(err, unix.EBUSY) {
			errs = append(errs, err)
		}
		v2mu.Unlock()
	}
	return errors.Join(errs...)
}

func move(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("move pid %d to %s: %w", pid, dir, err)
	}
	return nil
}

// homeCgroup is the folder of this process's group in mount, the hierarchy of
// controller ("" for v2), or mount itself when that group is not visible.
func homeCgroup(mount, controller string) string {
	if own, ok := ownCgroup(controller); ok {
		if fi, err := os.Stat(filepath.Join(mount, own)); err == nil && fi.IsDir() {
			return filepath.Join(mount, own)
		}
	}
	return mount
}

// ownCgroup is this process's cgroup path for a v1 controller, or for the v2
// hierarchy with controller "", from /proc/self/cgroup.
func ownCgroup(controller string) (string, bool) {
	p, err := procfs.Self()
	if err != nil {
		return "", false
	}
	groups, err := p.Cgroups()
	if err != nil {
		return "", false
	}
	for _, g := range groups {
		if slices.Contains(g.Controllers, controller) || controller == "" && len(g.Controllers) == 0 {
			return g.Path, true
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
