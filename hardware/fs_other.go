//go:build !linux

package hardware

import (
	"fmt"

	"github.com/etcdperf/etcdperf/results"
)

// collectFilesystem has no portable source off Linux.
func collectFilesystem(Config, *results.Host) error {
	return fmt.Errorf("filesystem: only on linux: %w", ErrNoData)
}

func deviceOf(string) (uint32, uint32, error) {
	return 0, 0, fmt.Errorf("block devices: only on linux: %w", ErrNoData)
}
