package hardware

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/etcdperf/etcdperf/results"
)

// collectDisk finds the block device under the data dir and reads what sysfs says
// about it.
func collectDisk(cfg Config, h *results.Host) error {
	if cfg.DataDir == "" {
		return fmt.Errorf("disk: no data dir given: %w", ErrNoData)
	}
	major, minor, err := deviceOf(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	d, err := ReadDisk(os.DirFS(rootDir(cfg.Root)), major, minor)
	if err != nil {
		return err
	}
	h.Disk = d
	return nil
}

// ReadDisk reads the sysfs facts of block device major:minor from fsys (rooted at
// "/"). A partition is resolved to its disk. ErrNoData when sysfs has no such
// device, as for overlay, tmpfs and network filesystems (anonymous devices).
func ReadDisk(fsys fs.FS, major, minor uint32) (*results.Disk, error) {
	link := fmt.Sprintf("sys/dev/block/%d:%d", major, minor)
	target, err := fs.ReadLink(fsys, link)
	if err != nil {
		return nil, fmt.Errorf("disk %d:%d: not a block device in sysfs: %w", major, minor, ErrNoData)
	}
	dir := target
	if !path.IsAbs(target) {
		dir = path.Join(path.Dir(link), target)
	}
	dir = strings.TrimPrefix(path.Clean(dir), "/")
	if _, err := fs.Stat(fsys, path.Join(dir, "partition")); err == nil {
		dir = path.Dir(dir) // sda1 → sda: queue/ and device/ belong to the disk
	}
	d := &results.Disk{Device: path.Base(dir)}
	if s, err := readString(fsys, path.Join(dir, "queue/rotational")); err == nil {
		rot := s == "1"
		d.Rotational = &rot
	}
	if s, err := readString(fsys, path.Join(dir, "device/model")); err == nil {
		d.Model = s
	}
	if s, err := readString(fsys, path.Join(dir, "queue/write_cache")); err == nil {
		d.WriteCache = s
	}
	if s, err := readString(fsys, path.Join(dir, "loop/backing_file")); err == nil {
		d.BackingFile = s
	}
	return d, nil
}

func readString(fsys fs.FS, name string) (string, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
