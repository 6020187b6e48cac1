package diskprobe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/units"
)

// checkDir refuses a folder the probe cannot or should not write in, with one clear error.
func checkDir(dir string, need int64, allowTmpfs bool) error {
	if dir == "" {
		return fmt.Errorf("%w: no folder given (--dir)", ErrNotDir)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist", ErrNotDir, dir)
	case err != nil:
		return fmt.Errorf("%w: %v", ErrNotDir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a folder", ErrNotDir, dir)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("%w: statfs %s: %v", ErrNotDir, dir, err)
	}
	if err := judgeFS(dir, int64(uint32(st.Type)), int64(st.Flags), int64(st.Bavail)*int64(st.Bsize), need, allowTmpfs); err != nil {
		return err
	}
	// access(2) says EROFS for a read-only mount and EACCES for permissions, root included.
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("%w: cannot write in %s: %v", ErrReadOnly, dir, err)
	}
	return nil
}

// judgeFS decides from statfs facts whether the probe may run: not on tmpfs or ramfs (unless
// allowed), not read-only, and with the free space the pattern needs.
func judgeFS(dir string, magic, flags, free, need int64, allowTmpfs bool) error {
	if hardware.InMemory(magic) && !allowTmpfs {
		return fmt.Errorf("%w: %s is on %s, in memory, where fdatasync returns at once without touching a disk, "+
			"so the latencies would say nothing about etcd's disk; probe a folder on the disk that holds the data dir, "+
			"or pass --allow-tmpfs to measure anyway", ErrTmpfs, dir, hardware.FSTypeName(magic))
	}
	if flags&unix.ST_RDONLY != 0 {
		return fmt.Errorf("%w: %s is on a read-only filesystem", ErrReadOnly, dir)
	}
	if free < need {
		return fmt.Errorf("%w: the probe needs %s in %s, only %s is free", ErrNoSpace, units.Bytes(need), dir, units.Bytes(free))
	}
	return nil
}

// needBytes is the space a run takes at its peak, with 1 MiB to spare: the fio file, the WAL
// segments plus the one the pipeline holds ready, the backend's db.
func needBytes(cfg Config) int64 {
	var n int64
	switch cfg.Pattern {
	case PatternFio:
		n = cfg.Size
	case PatternWAL:
		n = walNeed(cfg)
	case PatternBackend:
		n = cfg.DBBytes
	case PatternEtcd:
		n = walNeed(cfg) + cfg.DBBytes
	}
	return n + 1<<20
}

func walNeed(cfg Config) int64 {
	segments := (cfg.Size + cfg.SegmentBytes - 1) / cfg.SegmentBytes
	return (segments + 1) * cfg.SegmentBytes
}
