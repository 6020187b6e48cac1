package results

// Host holds facts about the machine a run measured (see package hardware).
type Host struct {
	Hostname string `json:"hostname,omitempty"`
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
	// MemoryBytes is the memory available to the process: a cgroup limit when one is set, else the host's RAM.
	MemoryBytes int64  `json:"memory_bytes"`
	SwapBytes   int64  `json:"swap_bytes"`
	Kernel      string `json:"kernel,omitempty"`

	// HostMemoryBytes is the machine's RAM, whatever cgroup limit applies.
	HostMemoryBytes int64 `json:"host_memory_bytes,omitempty"`
	// CgroupMemoryLimitBytes is the cgroup (v1 or v2) memory limit; 0 when none is set.
	CgroupMemoryLimitBytes int64 `json:"cgroup_memory_limit_bytes,omitempty"`
	// CgroupCPUQuota is the CFS quota in CPUs (quota/period); 0 when none is set.
	CgroupCPUQuota float64 `json:"cgroup_cpu_quota,omitempty"`

	// DataDir is the directory whose filesystem and disk were inspected.
	DataDir string `json:"data_dir,omitempty"`
	// DataDirFS is the filesystem type of DataDir (ext4, xfs, tmpfs, overlay, ...).
	DataDirFS string `json:"data_dir_fs,omitempty"`
	// Disk is the block device under DataDir; nil when it could not be found (overlay, network FS).
	Disk *Disk `json:"disk,omitempty"`

	// Collectors says, for each source of facts, whether it succeeded and how long it took.
	Collectors []CollectorStatus `json:"collectors,omitempty"`
}

// Disk describes a block device as sysfs reports it.
type Disk struct {
	Device string `json:"device"` // e.g. "sda", "nvme0n1", "loop3"
	Model  string `json:"model,omitempty"`
	// Rotational is true for spinning disks; nil when sysfs does not say.
	Rotational *bool `json:"rotational,omitempty"`
	// WriteCache is sysfs queue/write_cache: "write back" or "write through".
	WriteCache string `json:"write_cache,omitempty"`
	// BackingFile is set for loop devices.
	BackingFile string `json:"backing_file,omitempty"`
}

// Collector outcomes.
const (
	CollectorOK     = "ok"
	CollectorNoData = "no-data" // the source does not exist here; not a failure
	CollectorError  = "error"
)

// CollectorStatus is the outcome of one host-facts collector.
type CollectorStatus struct {
	Name       string  `json:"name"`
	Status     string  `json:"status"` // ok | no-data | error
	DurationMs float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
}

// EffectiveCPUs is the number of CPUs the process can really use: the CFS quota
// when one is set and smaller than the CPU count, else the CPU count.
func (h *Host) EffectiveCPUs() float64 {
	if h == nil {
		return 0
	}
	if h.CgroupCPUQuota > 0 && (h.CPUs == 0 || h.CgroupCPUQuota < float64(h.CPUs)) {
		return h.CgroupCPUQuota
	}
	return float64(h.CPUs)
}
