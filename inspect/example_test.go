package inspect_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/inspect"
)

// How long does a new member take to catch up with a 2 GB db? The leader
// streams its snapshot while the new member writes it, so the slower of the
// network and the disk decides (the disk figure is the hardware guide's small
// tier). inspect.ReadSnapshot and inspect.Live give the db size.
func ExampleEstimateRecovery() {
	r := inspect.EstimateRecovery(2e9, inspect.DefaultDiskMBps, 125)
	fmt.Printf("%.0f s (%s)\n", r.Seconds, r.Basis)
	// Output:
	// 36 s (db size / min(disk, network) throughput; replaying the entries written meanwhile is not included)
}
