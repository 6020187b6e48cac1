package diskprobe

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/shirou/gopsutil/v4/disk"
	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

// fsFacts are the facts fio never records about the folder it measured.
type fsFacts struct {
	fstype, mountpoint, device, options string
	disk                                *results.Disk
}

// facts collects what it can about dir's filesystem and block device; any source that
// fails leaves its fields empty, since the probe's figures stand without them.
func facts(dir string) fsFacts {
	var f fsFacts
	abs, err := filepath.EvalSymlinks(dir)
	if err == nil {
		abs, err = filepath.Abs(abs)
	}
	if err != nil {
		return f
	}
	if parts, err := disk.Partitions(true); err == nil {
		if p, ok := mountOf(abs, parts); ok {
			f.fstype, f.mountpoint, f.device, f.options = p.Fstype, p.Mountpoint, p.Device, strings.Join(p.Opts, ",")
		}
	}
	if f.fstype == "" {
		var st unix.Statfs_t
		if unix.Statfs(abs, &st) == nil {
			f.fstype = hardware.FSTypeName(int64(uint32(st.Type)))
		}
	}
	var st unix.Stat_t
	if unix.Stat(abs, &st) == nil {
		// Best effort, as the other facts: a device sysfs does not know (overlay,
		// tmpfs) leaves it nil.
		f.disk, _ = hardware.ReadDisk(os.DirFS("/"), unix.Major(st.Dev), unix.Minor(st.Dev))
	}
	return f
}

// mountOf returns the mount that holds path: the longest mountpoint that is path or a parent
// of it, the last mounted winning where two share a mountpoint (it hides the first).
func mountOf(path string, parts []disk.PartitionStat) (disk.PartitionStat, bool) {
	best, found := disk.PartitionStat{}, false
	for _, p := range parts {
		mp := p.Mountpoint
		under := path == mp || mp == "/" || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")
		if under && (!found || len(mp) >= len(best.Mountpoint)) {
			best, found = p, true
		}
	}
	return best, found
}
