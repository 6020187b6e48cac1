// Package truth is the scenario matrix behind `make truth`: live etcd clusters
// with faults of known cause and size (a throttled or slow-syncing disk, delayed
// client and peer links, CPU quotas, memory limits near the working set, large
// values, wide ranges, a filling quota, a stopped member, a leader change, a watch
// fan-out, a link held now and then, busy processes on a member's core, a
// defragmentation, a decoy on the port a member advertises) on 1, 3 and 5
// members and on members hidden in network namespaces of their own (etcdperf
// cannot see their process: remote members), and healthy
// baselines of every workload shape, each measured by the etcdperf binary exactly
// as a user runs it. It prints a confusion table (expected class → named class,
// with the verdict's status) and the false alarms, and fails on any miss.
//
// The judge is strict and runs nothing twice: each row asserts the class and
// the status its intensity calls for; a mild row runs twice, each run right
// after a run of its baseline, and "none" is right for it only where the
// Mann-Whitney test on the per-second client p99s finds no rise at p < 0.01
// (docs/truth.md); every run counts, the baseline's too, so a split vote or a
// baseline's false alarm is a miss; a skip fails unless the machine lacks the
// fault's feature; and every run's file is analyzed again (etcdperf analyze
// RUNFILE), which must give the same verdict.
//
// The matrix shows that the analyzer's rules generalise; it is not where they are
// tuned: every threshold keeps its cited source (`etcdperf analyze --rules`), and
// the scenarios are sized with wide margins either side of them, never on an edge.
//
// It runs only when asked (go test ./internal/truth -args -truth; make truth), as root,
// since loop devices, mounts, cgroup limits (v1 or v2) and network namespaces need it.
// -only runs some rows (names, globs, prefixes), -list prints them.
package truth

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/faults"
)

// TestMain lets cluster.Start re-execute this test binary as an etcd member (the
// faults need each member in a process of its own) and faults.Hogs as a busy
// process.
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	faults.MaybeRunHog()
	os.Exit(m.Run())
}
