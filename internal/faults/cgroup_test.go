package faults

import (
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
	"testing"
)

// fakeCgroups points cgroupFS at a fake machine in a temp dir, with files (paths
// relative to it) and, unless v2 is "-", a cgroup2 mount at v2 (relative too)
// among the other mounts of /proc/self/mountinfo. It returns the dir.
func fakeCgroups(t *testing.T, files map[string]string, v2 string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mountinfo := fmt.Sprintf("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"+
		"30 22 0:27 / %s rw,relatime shared:4 - tmpfs tmpfs rw,mode=755\n"+
		"31 30 0:28 / %s/cpu rw,relatime shared:5 - cgroup cgroup rw,cpu\n", dir, dir)
	if v2 != "-" {
		mountinfo += fmt.Sprintf("40 30 0:37 / %s rw,nosuid,nodev shared:9 - cgroup2 cgroup2 rw,nsdelegate\n", filepath.Join(dir, v2))
	}
	if err := os.WriteFile(filepath.Join(dir, "mountinfo"), []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := cgroupFS
	cgroupFS.v1, cgroupFS.mountinfo = dir, filepath.Join(dir, "mountinfo")
	t.Cleanup(func() { cgroupFS = saved })
	return dir
}

// noCleanup runs no cleanup: the groups of a fake hierarchy are plain folders with
// files in them, which release cannot remove as the kernel does.
type noCleanup struct{ testing.TB }

func (noCleanup) Cleanup(func()) {}

func TestCgroupChoice(t *testing.T) {
	const iops = "blkio.throttle.write_iops_device"
	for _, tc := range []struct {
		name             string
		files            map[string]string
		v2               string // the cgroup2 mount, "-" for none
		controller, file string
		mount, v2Name    string   // what NewCgroup takes, mount relative to the fake
		errs             []string // else what the error names
	}{
		{name: "v1", files: map[string]string{"blkio/" + iops: ""}, v2: "unified",
			controller: "blkio", file: iops, mount: "blkio"},
		{name: "v1 before v2", files: map[string]string{"cpu/cpu.cfs_quota_us": "-1", "unified/cgroup.controllers": "cpu io memory\n"}, v2: "unified",
			controller: "cpu", file: "cpu.cfs_quota_us", mount: "cpu"},
		{name: "hybrid, io on v2", files: map[string]string{"unified/cgroup.controllers": "io memory\n"}, v2: "unified",
			controller: "blkio", file: iops, mount: "unified", v2Name: "io"},
		{name: "pure v2", files: map[string]string{"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n"}, v2: ".",
			controller: "memory", file: "memory.limit_in_bytes", mount: ".", v2Name: "memory"},
		{name: "v1 without the file, v2 with the controller", files: map[string]string{"cpu/cpu.shares": "1024", "cgroup.controllers": "cpu\n"}, v2: ".",
			controller: "cpu", file: "cpu.cfs_quota_us", mount: ".", v2Name: "cpu"},
		{name: "hybrid, empty unified", files: map[string]string{"unified/cgroup.controllers": "hugetlb\n"}, v2: "unified",
			controller: "blkio", file: iops,
			errs: []string{"neither a cgroup v1 blkio controller with " + iops, "nor a cgroup v2 hierarchy with the io controller", `unified/cgroup.controllers lists "hugetlb"`}},
		{name: "v2 without the controller", files: map[string]string{"cgroup.controllers": "cpu io\n"}, v2: ".",
			controller: "memory", file: "memory.limit_in_bytes",
			errs: []string{"neither a cgroup v1 memory controller with memory.limit_in_bytes", "the memory controller", `lists "cpu io"`}},
		{name: "no cgroup2 mount", v2: "-", controller: "cpu", file: "cpu.cfs_quota_us",
			errs: []string{"neither a cgroup v1 cpu controller with cpu.cfs_quota_us", "the cpu controller", "no cgroup2 filesystem in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeCgroups(t, tc.files, tc.v2)
			mount, v2, err := findCgroup(tc.controller, tc.file)
			if tc.errs != nil {
				for _, want := range tc.errs {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want it to name %q", err, want)
					}
				}
				return
			}
			if want := filepath.Join(dir, tc.mount); err != nil || mount != want || v2 != tc.v2Name {
				t.Fatalf("findCgroup = %q, %q, %v; want %q, %q", mount, v2, err, want, tc.v2Name)
			}

			cg := NewCgroup(noCleanup{t}, tc.controller, tc.file)
			want := filepath.Join(mount, fmt.Sprintf("etcdperf-test-%d-%s", os.Getpid(), sanitize(t.Name())))
			if v2 != "" {
				want = filepath.Join(mount, fmt.Sprintf("etcdperf-test-%d", os.Getpid()), sanitize(t.Name())+"-"+tc.controller)
				for _, g := range []string{mount, filepath.Dir(want)} {
					if b, _ := os.ReadFile(filepath.Join(g, "cgroup.subtree_control")); string(b) != "+"+v2 {
						t.Errorf("%s/cgroup.subtree_control = %q, want +%s", g, b, v2)
					}
				}
			}
			if fi, err := os.Stat(want); cg.Dir != want || err != nil || !fi.IsDir() {
				t.Errorf("group %s (%v), want the folder %s", cg.Dir, err, want)
			}
		})
	}
}

func TestCgroupV2Translation(t *testing.T) {
	// What v1 reads for no memory limit: LONG_MAX rounded down to a page
	// (9223372036854771712 with 4 KiB pages).
	unlimited := strconv.FormatInt(math.MaxInt64&^int64(os.Getpagesize()-1), 10)
	controlFile := map[string]string{"blkio": "blkio.throttle.write_iops_device", "cpu": "cpu.cfs_quota_us", "memory": "memory.limit_in_bytes"}
	for _, tc := range []struct {
		name       string
		controller string
		kernel     map[string]string // files the kernel keeps in the group
		set        [][2]string       // v1 file and value, in order
		files      map[string]string // the v2 files then
		get        map[string]string // what Get answers for a v1 file
	}{
		{name: "write IOPS", controller: "blkio",
			set: [][2]string{{"blkio.throttle.write_iops_device", "7:3 100"}}, files: map[string]string{"io.max": "7:3 wiops=100"}},
		{name: "write IOPS lifted", controller: "blkio",
			set: [][2]string{{"blkio.throttle.write_iops_device", "7:3 0"}}, files: map[string]string{"io.max": "7:3 wiops=max"}},
		{name: "period then quota", controller: "cpu",
			set:   [][2]string{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "25000"}},
			files: map[string]string{"cpu.max": "25000 100000"}, get: map[string]string{"cpu.cfs_quota_us": "25000", "cpu.cfs_period_us": "100000"}},
		{name: "quota then period", controller: "cpu",
			set:   [][2]string{{"cpu.cfs_quota_us", "50000"}, {"cpu.cfs_period_us", "200000"}},
			files: map[string]string{"cpu.max": "50000 200000"}, get: map[string]string{"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "200000"}},
		{name: "quota with the default period", controller: "cpu",
			set:   [][2]string{{"cpu.cfs_quota_us", "10000\n"}},
			files: map[string]string{"cpu.max": "10000 100000"}, get: map[string]string{"cpu.cfs_quota_us": "10000"}},
		{name: "quota lifted", controller: "cpu",
			set:   [][2]string{{"cpu.cfs_quota_us", "10000"}, {"cpu.cfs_quota_us", "-1"}},
			files: map[string]string{"cpu.max": "max 100000"}, get: map[string]string{"cpu.cfs_quota_us": "-1"}},
		{name: "memory limit", controller: "memory",
			set:   [][2]string{{"memory.limit_in_bytes", "314572800"}},
			files: map[string]string{"memory.max": "314572800"}, get: map[string]string{"memory.limit_in_bytes": "314572800"}},
		{name: "memory limit lifted", controller: "memory",
			set:   [][2]string{{"memory.limit_in_bytes", "-1"}},
			files: map[string]string{"memory.max": "max"}, get: map[string]string{"memory.limit_in_bytes": unlimited}},
		{name: "memory counters", controller: "memory",
			kernel: map[string]string{"memory.events": "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n", "memory.peak": "400003072\n"},
			get:    map[string]string{"memory.failcnt": "12", "memory.max_usage_in_bytes": "400003072"}},
		{name: "v2 names as they are", controller: "memory",
			set: [][2]string{{"memory.high", "1048576"}}, files: map[string]string{"memory.high": "1048576"}, get: map[string]string{"memory.high": "1048576"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeCgroups(t, map[string]string{"cgroup.controllers": "cpu io memory\n"}, ".")
			cg := NewCgroup(noCleanup{t}, tc.controller, controlFile[tc.controller])
			for name, text := range tc.kernel {
				if err := os.WriteFile(filepath.Join(cg.Dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range tc.set {
				if err := cg.Set(s[0], s[1]); err != nil {
					t.Fatal(err)
				}
			}
			for name, want := range tc.files {
				if b, err := os.ReadFile(filepath.Join(cg.Dir, name)); string(b) != want {
					t.Errorf("%s = %q (%v), want %q", name, b, err, want)
				}
			}
			for file, want := range tc.get {
				if got, err := cg.Get(file); got != want || err != nil {
					t.Errorf("Get(%s) = %q, %v; want %q", file, got, err, want)
				}
			}
		})
	}
}

// TestCgroupV2FailedSet checks that a write the kernel refused is not part of
// the next cpu.max, as a refused v1 write changes nothing.
func TestCgroupV2FailedSet(t *testing.T) {
	fakeCgroups(t, map[string]string{"cgroup.controllers": "cpu\n"}, ".")
	cg := NewCgroup(noCleanup{t}, "cpu", "cpu.cfs_quota_us")
	cpuMax := filepath.Join(cg.Dir, "cpu.max")
	if err := os.Mkdir(cpuMax, 0o755); err != nil { // unwritable, even by root
		t.Fatal(err)
	}
	if err := cg.Set("cpu.cfs_quota_us", "500"); err == nil {
		t.Fatal("writing a folder worked")
	}
	if err := os.Remove(cpuMax); err != nil {
		t.Fatal(err)
	}
	if err := cg.Set("cpu.cfs_period_us", "200000"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(cpuMax); string(b) != "max 200000" {
		t.Errorf("cpu.max = %q, want %q", b, "max 200000")
	}
}

// TestCgroupLive makes a group of each controller on this machine, on v1 or v2
// as NewCgroup chooses, sets the limit the tests set, reads it back, and moves a
// process in and out. Where the feature says the controller is there, NewCgroup
// must not skip, and Cleanup must leave no group behind.
func TestCgroupLive(t *testing.T) {
	RequireRoot(t)
	for _, tc := range []struct {
		controller, file, value string // value "" for the write IOPS of a loop device
		get                     bool   // whether Get reads the value back
	}{
		{"cpu", "cpu.cfs_quota_us", "20000", true},
		{"memory", "memory.limit_in_bytes", "268435456", true},
		{"blkio", "blkio.throttle.write_iops_device", "", false},
	} {
		t.Run(tc.controller, func(t *testing.T) {
			if err := CgroupController(tc.controller, tc.file)(); err != nil {
				t.Skip(err)
			}
			value := tc.value
			if value == "" {
				value = NewLoopExt4(t, 16<<20).MajMin + " 100"
			}
			var groups []string
			t.Cleanup(func() { // after the group's own cleanup
				for _, g := range groups {
					if _, err := os.Stat(g); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s left behind: %v", g, err)
					}
				}
			})
			skipped := true
			defer func() {
				if skipped && t.Skipped() {
					t.Errorf("the feature says the %s controller is there, but NewCgroup skipped", tc.controller)
				}
			}()
			cg := NewCgroup(t, tc.controller, tc.file)
			skipped = false
			if groups = []string{cg.Dir}; cg.v2 {
				groups = append(groups, filepath.Dir(cg.Dir))
			}
			t.Logf("group %s (v2 %t)", cg.Dir, cg.v2)

			if err := cg.Set(tc.file, value); err != nil {
				t.Fatal(err)
			}
			if got, err := cg.Get(tc.file); tc.get && (got != value || err != nil) {
				t.Errorf("Get(%s) = %q, %v; want %q", tc.file, got, err, value)
			}
			sleep := exec.Command("sleep", "30")
			if err := sleep.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { sleep.Process.Kill(); sleep.Wait() }()
			pid := strconv.Itoa(sleep.Process.Pid)
			if err := cg.Add(sleep.Process.Pid); err != nil {
				t.Fatal(err)
			}
			if procs, _ := cg.Get("cgroup.procs"); !slices.Contains(strings.Fields(procs), pid) {
				t.Errorf("pid %s not in the group after Add: cgroup.procs %q", pid, procs)
			}
			if err := cg.Remove(sleep.Process.Pid); err != nil {
				t.Fatal(err)
			}
			if procs, _ := cg.Get("cgroup.procs"); slices.Contains(strings.Fields(procs), pid) {
				t.Errorf("pid %s still in the group after Remove", pid)
			}
			if err := cg.Add(sleep.Process.Pid); err != nil { // for the cleanup to move out
				t.Fatal(err)
			}
		})
	}
}
