package inspect

import (
	"errors"
	"fmt"
	"math"
)

// Validate checks the options as inspect's flags give them.
func (o LiveOptions) Validate() error {
	switch {
	case o.Depth <= 0:
		return fmt.Errorf("--depth must be at least 1, got %d", o.Depth)
	case o.Top < 0:
		return fmt.Errorf("--top must not be negative, got %d", o.Top)
	case o.PageSize <= 0:
		return fmt.Errorf("--page-size must be positive, got %d", o.PageSize)
	case o.PageBytes <= 0:
		return fmt.Errorf("--page-bytes must be positive, got %d", o.PageBytes)
	case o.MaxRPS < 0 || math.IsNaN(o.MaxRPS) || math.IsInf(o.MaxRPS, 0):
		return fmt.Errorf("--max-rps must be 0 (unpaced) or positive, got %g", o.MaxRPS)
	case o.Values != ValuesAuto && o.Values != ValuesExact && o.Values != ValuesSample:
		return fmt.Errorf("--values %q: must be auto, exact or sample", o.Values)
	case o.MaxRequestBytes <= 0:
		return fmt.Errorf("--max-request-bytes must be positive, got %d", o.MaxRequestBytes)
	case o.DiskMBps < 0 || o.NetMBps < 0 || o.HeartbeatMs < 0 || o.ElectionMs < 0 || o.SnapshotCount < 0:
		return errors.New("--disk-mbps, --net-mbps, --heartbeat-ms, --election-ms and --snapshot-count must not be negative")
	}
	return nil
}
