package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/results"
)

// unlimitedV1 is the smallest value cgroup v1 uses for "no limit" (it reports
// 9223372036854771712, LONG_MAX rounded down to a page).
const unlimitedV1 = 1 << 62

// Cgroup is a process's cgroup limits; zero fields mean no limit.
type Cgroup struct {
	Version          int // 1 or 2
	MemoryLimitBytes int64
	CPUQuota         float64 // CPUs: quota / period
}

// collectCgroup reads the memory limit and CPU quota of this process's cgroup and
// narrows MemoryBytes to the limit.
func collectCgroup(cfg Config, h *results.Host) error {
	cg, err := ReadCgroup(cfg.Root, 0)
	if err != nil {
		return err
	}
	h.CgroupMemoryLimitBytes = cg.MemoryLimitBytes
	h.CgroupCPUQuota = cg.CPUQuota
	if cg.MemoryLimitBytes > 0 && (h.MemoryBytes == 0 || cg.MemoryLimitBytes < h.MemoryBytes) {
		h.MemoryBytes = cg.MemoryLimitBytes
	}
	return nil
}

// ReadCgroup reads the limits of the cgroup of process pid, or of the process that
// reads when pid is 0 (proc/self), under root ("" is "/"). Limits are
// hierarchical, so the smallest along the path up to the root applies. ErrNoData
// when there is no cgroup filesystem, no such process, or its cgroup is outside
// this cgroup namespace (so not visible here).
//
// prometheus/procfs reads proc/PID/cgroup; the limit files are read here: the
// maintained cgroup libraries (containerd/cgroups, opencontainers/cgroups) manage
// groups, bring in dozens of modules, and read one group of the real mount, where
// this needs the smallest limit along a path, under a fixture root, for v1 and v2.
func ReadCgroup(root string, pid int) (Cgroup, error) {
	proc := "self"
	if pid > 0 {
		proc = strconv.Itoa(pid)
	}
	paths, err := cgroupPaths(root, pid)
	if err != nil {
		return Cgroup{}, fmt.Errorf("cgroup of %s: %w", proc, ErrNoData)
	}
	for _, p := range paths {
		// The kernel shows a cgroup outside the reader's namespace as "/../..".
		// Cleaned, that path would name an unrelated group under this mount.
		if strings.HasPrefix(p, "/..") {
			return Cgroup{}, fmt.Errorf("cgroup of %s %s is outside this cgroup namespace: %w", proc, p, ErrNoData)
		}
	}
	fsys := os.DirFS(rootDir(root))
	if _, err := fs.Stat(fsys, "sys/fs/cgroup/cgroup.controllers"); err == nil {
		return readV2(fsys, paths[""])
	}
	if _, ok := paths["memory"]; ok {
		return readV1(fsys, paths)
	}
	return Cgroup{}, fmt.Errorf("cgroup: %w", ErrNoData)
}

// cgroupPaths maps each controller of process pid (0: proc/self) to its cgroup
// path; the v2 unified hierarchy ("0::/path") is under "".
func cgroupPaths(root string, pid int) (map[string]string, error) {
	proc, err := procFS(root)
	if err != nil {
		return nil, err
	}
	p, err := proc.Self()
	if pid > 0 {
		p, err = proc.Proc(pid)
	}
	if err != nil {
		return nil, err
	}
	groups, err := p.Cgroups()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, g := range groups {
		if len(g.Controllers) == 0 {
			out[""] = g.Path
		}
		for _, c := range g.Controllers {
			out[c] = g.Path
		}
	}
	return out, nil
}

func readV1(fsys fs.FS, paths map[string]string) (Cgroup, error) {
	cg := Cgroup{Version: 1}
	found := false
	for _, dir := range candidates("sys/fs/cgroup/memory", paths["memory"]) {
		v, err := readInt(fsys, path.Join(dir, "memory.limit_in_bytes"))
		if err != nil {
			continue
		}
		found = true
		if v > 0 && v < unlimitedV1 && (cg.MemoryLimitBytes == 0 || v < cg.MemoryLimitBytes) {
			cg.MemoryLimitBytes = v
		}
	}
	cpuPath, ok := paths["cpu"]
	if !ok {
		cpuPath = paths["cpu,cpuacct"]
	}
	for _, mount := range []string{"sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct"} {
		for _, dir := range candidates(mount, cpuPath) {
			quota, err1 := readInt(fsys, path.Join(dir, "cpu.cfs_quota_us"))
			period, err2 := readInt(fsys, path.Join(dir, "cpu.cfs_period_us"))
			if err1 != nil || err2 != nil {
				continue
			}
			found = true
			if quota > 0 && period > 0 {
				q := float64(quota) / float64(period)
				if cg.CPUQuota == 0 || q < cg.CPUQuota {
					cg.CPUQuota = q
				}
			}
		}
	}
	if !found {
		return Cgroup{}, fmt.Errorf("cgroup v1: no memory or cpu controller files: %w", ErrNoData)
	}
	return cg, nil
}

func readV2(fsys fs.FS, p string) (Cgroup, error) {
	cg := Cgroup{Version: 2}
	found := false
	for _, dir := range candidates("sys/fs/cgroup", p) {
		if b, err := fs.ReadFile(fsys, path.Join(dir, "memory.max")); err == nil {
			found = true
			s := strings.TrimSpace(string(b))
			if s != "max" {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return Cgroup{}, fmt.Errorf("cgroup v2 memory.max %q: %w", s, err)
				}
				if v > 0 && (cg.MemoryLimitBytes == 0 || v < cg.MemoryLimitBytes) {
					cg.MemoryLimitBytes = v
				}
			}
		}
		if b, err := fs.ReadFile(fsys, path.Join(dir, "cpu.max")); err == nil {
			found = true
			q, err := parseCPUMax(string(b))
			if err != nil {
				return Cgroup{}, err
			}
			if q > 0 && (cg.CPUQuota == 0 || q < cg.CPUQuota) {
				cg.CPUQuota = q
			}
		}
	}
	if !found {
		return Cgroup{}, fmt.Errorf("cgroup v2: no memory.max or cpu.max: %w", ErrNoData)
	}
	return cg, nil
}

// parseCPUMax parses cgroup v2 cpu.max ("max 100000" or "150000 100000") into CPUs.
func parseCPUMax(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, fmt.Errorf("cgroup v2 cpu.max %q: want two fields", strings.TrimSpace(s))
	}
	if f[0] == "max" {
		return 0, nil
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err := errors.Join(err1, err2); err != nil || period <= 0 {
		return 0, fmt.Errorf("cgroup v2 cpu.max %q: not numbers", strings.TrimSpace(s))
	}
	return quota / period, nil
}

// candidates lists the directories whose limits apply to cgroup path p under mount:
// p and each ancestor up to the mount root. Inside a container the path from
// /proc/self/cgroup may not exist under the (namespaced) mount; the mount root,
// always last, then holds the container's own limits.
func candidates(mount, p string) []string {
	var out []string
	p = path.Clean("/" + p)
	for p != "/" {
		out = append(out, path.Join(mount, p))
		p = path.Dir(p)
	}
	return append(out, mount)
}

func readInt(fsys fs.FS, name string) (int64, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
