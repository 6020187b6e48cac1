package hardware_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

// A tool grades a host against the tier of etcd's hardware guide that a
// workload needs. The host facts here are given; hardware.Collect reads this
// host's (CPUs, memory and cgroup limits, the disk under the data dir).
func ExampleGradeHost() {
	host := &results.Host{CPUs: 2, MemoryBytes: 8 << 30}
	load := finding.Workload{Clients: 300, RPS: 800}
	g := hardware.GradeHost(host, load)
	fmt.Println(g.WorkloadTier, "workload,", g.HostTier, "host")
	fmt.Println(g.Summary)
	// Output:
	// medium workload, small host
	// this workload is medium; this host meets small: 2 CPUs where medium wants 4, 8.6 GB of memory where medium wants 16 GB
}

// Collect reads this host's facts; each collector reports ok or no-data (a
// source that does not exist here, such as sysfs for an overlay filesystem).
func ExampleCollect() {
	h := hardware.Collect(hardware.Config{DataDir: "/var/lib/etcd"})
	fmt.Println(h.CPUs, "CPUs,", h.MemoryBytes>>20, "MiB, disk", h.DataDirFS)
	for _, c := range h.Collectors {
		fmt.Println(c.Name, c.Status)
	}
}
