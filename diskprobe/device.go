package diskprobe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shirou/gopsutil/v4/disk"
	"golang.org/x/sys/unix"

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
			f.fstype = fsName(int64(uint32(st.Type)))
		}
	}
	var st unix.Stat_t
	if unix.Stat(abs, &st) == nil {
		f.disk = blockDevice("/sys", unix.Major(st.Dev), unix.Minor(st.Dev))
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

// blockDevice reads the facts of device major:minor from a sysfs tree rooted at sys. For a
// partition it describes the parent disk, where the queue settings and the model live.
// It returns nil when the device is not a block device (overlay, tmpfs, NFS).
func blockDevice(sys string, major, minor uint32) *results.Disk {
	dev, err := filepath.EvalSymlinks(filepath.Join(sys, "dev", "block", fmt.Sprintf("%d:%d", major, minor)))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dev, "partition")); err == nil {
		dev = filepath.Dir(dev)
	}
	d := &results.Disk{Device: filepath.Base(dev)}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dev, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	d.Model = read("device/model")
	switch read("queue/rotational") {
	case "0":
		d.Rotational = new(false)
	case "1":
		d.Rotational = new(true)
	}
	d.WriteCache = read("queue/write_cache")
	d.BackingFile = read("loop/backing_file")
	return d
}
