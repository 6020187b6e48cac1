package metrics

// Series of a member's host (node_exporter) and container (cAdvisor), read from
// a Prometheus that scrapes them next to the member: they are not in a member's
// own /metrics, so Kept does not list their prefixes.
//
// node_exporter: collector/cpu_linux.go, meminfo_linux.go, diskstats_linux.go and
// pressure_linux.go (the PSI "some" totals of /proc/pressure/{cpu,io,memory}).
// cAdvisor: metrics/prometheus.go (the cgroup's CFS periods, its CPU quota and
// period, its memory limit and working set).
const (
	NodeCPUSeconds      = "node_cpu_seconds_total" // labels cpu, mode
	NodeMemTotal        = "node_memory_MemTotal_bytes"
	NodeDiskIOTime      = "node_disk_io_time_seconds_total" // label device
	NodePressureCPU     = "node_pressure_cpu_waiting_seconds_total"
	NodePressureIO      = "node_pressure_io_waiting_seconds_total"
	NodePressureMemory  = "node_pressure_memory_waiting_seconds_total"
	ContainerCFSPeriods = "container_cpu_cfs_periods_total"
	ContainerThrottled  = "container_cpu_cfs_throttled_periods_total"
	ContainerCPUQuota   = "container_spec_cpu_quota"  // µs per period; absent or 0 without a quota
	ContainerCPUPeriod  = "container_spec_cpu_period" // µs
	ContainerMemLimit   = "container_spec_memory_limit_bytes"
	ContainerWorkingSet = "container_memory_working_set_bytes"
)

// HostSeries are the names above, for the query that reads them.
var HostSeries = []string{NodeCPUSeconds, NodeMemTotal, NodeDiskIOTime, NodePressureCPU, NodePressureIO, NodePressureMemory,
	ContainerCFSPeriods, ContainerThrottled, ContainerCPUQuota, ContainerCPUPeriod, ContainerMemLimit, ContainerWorkingSet}
