// Package truth is the scenario matrix behind `make truth`: live etcd clusters
// with faults of known cause and size (a throttled disk, delayed client and peer
// links, CPU quotas, memory limits near the working set, large values, wide
// ranges, a filling quota) and healthy baselines of every workload shape, each
// measured by the etcdperf binary exactly as a user runs it. It prints a
// confusion table (expected class → named class, with the verdict's status) and
// the false alarms, and fails on any miss.
//
// The matrix shows that the analyzer's rules generalise; it is not where they are
// tuned: every threshold keeps its cited source (`etcdperf analyze --rules`), and
// the scenarios are sized with wide margins either side of them, never on an edge.
//
// It runs only when asked (go test ./truth -args -truth; make truth), as root,
// since loop devices, mounts and cgroup v1 limits need it; a fault the machine
// cannot make is reported as skipped, never as passed.
package truth

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
)

// TestMain lets cluster.Start re-execute this test binary as an etcd member: the
// faults need each member in a process of its own.
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}
