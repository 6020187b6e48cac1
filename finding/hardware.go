package finding

// Workload is the shape of a load, for picking its hardware-guide tier; zero fields
// are unknown and do not count.
type Workload struct {
	Clients   int     `json:"clients,omitempty"`
	RPS       float64 `json:"rps,omitempty"`
	DataBytes int64   `json:"data_bytes,omitempty"`
}

// HardwareGrade is how a host compares with the tier of etcd's hardware guide that
// the workload needs.
type HardwareGrade struct {
	HostTier     string   `json:"host_tier"`
	WorkloadTier string   `json:"workload_tier"`
	Workload     Workload `json:"workload"`
	// Shortfalls list what the host lacks for the workload's tier.
	Shortfalls []string `json:"shortfalls,omitempty"`
	Summary    string   `json:"summary"`
	Source     string   `json:"source"`
}
