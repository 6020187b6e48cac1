package main

import (
	"slices"

	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

// readMemberLimits records the pid and cgroup limits of each member that runs on
// this host (embedded, or reached on a loopback client URL), so the analyzer grades
// each against what it really has rather than etcdperf's own cgroup. Best effort:
// a member it cannot read is graded as before.
func readMemberLimits(t *target, run *results.Run) {
	// run.Target.Members shares its array with t.Info, which later runs (plan's
	// steps) copy again: their limits must be read afresh, not inherited.
	run.Target.Members = slices.Clone(run.Target.Members)
	for i := range run.Target.Members {
		m := &run.Target.Members[i]
		pid := 0
		if t.Cluster != nil {
			for _, cm := range t.Cluster.Members() {
				if slices.Contains(m.ClientURLs, cm.ClientURL) {
					pid = cm.Pid()
				}
			}
		} else if !allLoopback(m.ClientURLs) {
			continue // on another host: its port here may be anyone's
		}
		_ = hardware.ReadMember(nil, m, pid)
	}
}
