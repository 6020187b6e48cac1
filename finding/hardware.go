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

// Severity is the grade in finding's vocabulary: warn when the host falls short
// of the workload's tier (a shortfall is a risk, never a failure: the run's own
// figures say whether it kept up), ok when it meets it, unknown when the host's
// CPUs and memory are not known.
func (g HardwareGrade) Severity() Severity {
	switch {
	case len(g.Shortfalls) > 0:
		return Warn
	case g.HostTier == "" || g.HostTier == string(Unknown):
		return Unknown
	}
	return OK
}
