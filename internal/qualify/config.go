package qualify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/results"
)

// Config is a qualification as qualify's flags give it.
type Config struct {
	DataDir  string        // a folder on the disk etcd's data would live on
	Tier     string        // "" for the highest that passes
	Duration time.Duration // measured window of each load run
	P99      time.Duration // the load run's p99 requirement
}

// Validate checks c; remote says the user named endpoints (qualify grades this
// host with its own embedded etcd).
func (c Config) Validate(remote bool) error {
	switch {
	case remote:
		return errors.New("qualify grades this host with its own embedded etcd; drop --endpoints")
	case c.DataDir == "":
		return errors.New("--data-dir is required: a folder on the disk etcd's data would live on")
	case c.Tier != "" && TierByName(c.Tier) == nil:
		return fmt.Errorf("--tier %q: want small, medium, large or xlarge", c.Tier)
	case c.Duration <= 0:
		return fmt.Errorf("--duration must be positive, got %s", c.Duration)
	case c.P99 <= 0:
		return fmt.Errorf("--p99 must be positive, got %s", c.P99)
	}
	if fi, err := os.Stat(c.DataDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--data-dir %s: not an existing folder", c.DataDir)
	}
	return nil
}

// CheckHost refuses a data dir in memory, where fdatasync is a no-op.
func (c Config) CheckHost(h *results.Host) error {
	if h.DataDirFS == "tmpfs" || h.DataDirFS == "ramfs" {
		return fmt.Errorf("--data-dir %s is on %s, in memory, where fdatasync is a no-op: qualify a folder on the disk etcd would use", c.DataDir, h.DataDirFS)
	}
	return nil
}

// CannotProbeError says the disk probe could not run in the data dir (in
// memory, not a folder, read-only, full): the user's input, not a failed
// qualification. It reads as the probe's error.
type CannotProbeError struct{ Err error }

func (e *CannotProbeError) Error() string { return e.Err.Error() }

// Unwrap is the probe's error.
func (e *CannotProbeError) Unwrap() error { return e.Err }

// Probe is the fio-style fdatasync probe in the data dir; a *CannotProbeError
// when the folder cannot be probed.
func (c Config) Probe(ctx context.Context) (results.DiskResult, error) {
	disk, err := diskprobe.Run(ctx, diskprobe.Config{Dir: c.DataDir, Pattern: diskprobe.PatternFio})
	switch {
	case errors.Is(err, diskprobe.ErrTmpfs) || errors.Is(err, diskprobe.ErrNotDir) || errors.Is(err, diskprobe.ErrReadOnly) || errors.Is(err, diskprobe.ErrNoSpace):
		return disk, &CannotProbeError{Err: err}
	case err != nil:
		return disk, fmt.Errorf("disk probe: %w", err)
	}
	return disk, nil
}
