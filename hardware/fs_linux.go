package hardware

import (
	"fmt"
	"syscall"

	"github.com/etcdperf/etcdperf/results"
)

// collectFilesystem reads the filesystem type of the data dir (statfs).
func collectFilesystem(cfg Config, h *results.Host) error {
	if cfg.DataDir == "" {
		return fmt.Errorf("filesystem: no data dir given: %w", ErrNoData)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(cfg.DataDir, &st); err != nil {
		return fmt.Errorf("filesystem of %s: %w", cfg.DataDir, err)
	}
	h.DataDirFS = FSTypeName(int64(st.Type))
	return nil
}

// deviceOf returns the major and minor device numbers of the filesystem holding dir.
func deviceOf(dir string) (uint32, uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", dir, err)
	}
	major, minor := splitDev(uint64(st.Dev))
	return major, minor, nil
}
