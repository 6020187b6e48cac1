package finding

// Status is an outcome as the output contract writes it: a verdict's, etcdctl
// check perf's, a disk probe's grade. It is Severity's counterpart for a
// whole answer: pass where a grade is ok.
type Status string

// Statuses. A verdict is pass, fail or invalid; a disk probe's grade pass, warn
// or fail.
const (
	StatusPass    Status = "pass"
	StatusWarn    Status = "warn"
	StatusFail    Status = "fail"
	StatusInvalid Status = "invalid"
)

// StatusOf is the status of a grade: pass where s is ok, warn and fail as they
// are, and invalid for unknown (nothing was graded).
func StatusOf(s Severity) Status {
	switch s {
	case OK:
		return StatusPass
	case Warn, Fail:
		return Status(s)
	}
	return StatusInvalid
}

// Severity reads a status back as a grade: ok for pass, warn and fail as they
// are; unknown for invalid or none.
func (s Status) Severity() Severity {
	switch s {
	case StatusPass:
		return OK
	case StatusWarn, StatusFail:
		return Severity(s)
	}
	return Unknown
}

// BottleneckNone is a verdict's bottleneck when nothing ran out.
const BottleneckNone = "none"

// Verdict is the one-line answer: did the cluster keep up, and if not, what ran out first.
type Verdict struct {
	Status     Status `json:"status"`     // pass | fail | invalid
	Bottleneck string `json:"bottleneck"` // none | disk | network | memory | cpu | client | value-size | range-size | quota
	// Ranked lists the failing classes, primary first, then the warning ones.
	Ranked []string `json:"ranked,omitempty"`
	// Risks lists the classes at warn or fail that are risks, not the bottleneck
	// (Finding.Risk says why); they do not fail the run.
	Risks   []string `json:"risks,omitempty"`
	Summary string   `json:"summary"`
	// Versions is each member's server version, the cluster version and what is
	// known about the release; every verdict carries it (old releases are a
	// classic cause of slowness).
	Versions []MemberVersion `json:"versions,omitempty"`
}

// MemberVersion is one member's release and what is known about it.
type MemberVersion struct {
	Member         string   `json:"member"`
	Version        string   `json:"version"`
	ClusterVersion string   `json:"cluster_version,omitempty"`
	Notes          []string `json:"notes,omitempty"`
}

// Diagnosis is what a command concluded about a run: the verdict, the findings
// behind it, the latency budget, the hardware grade and plan's curve. The run file
// stores it, so a report made later shows what the command printed. Every part is
// optional; the renderers show what is there. Its JSON names are those of the
// analyze/check/qualify/plan -w json output, so that output decodes into it too.
type Diagnosis struct {
	Verdict  *Verdict       `json:"verdict,omitempty"`
	Findings []Finding      `json:"findings,omitempty"`
	Budget   *Budget        `json:"budget,omitempty"`
	Hardware *HardwareGrade `json:"hardware,omitempty"`
	Curve    *Curve         `json:"curve,omitempty"`
	// Notes are what the analysis could not use (failed scrapes, unparseable text).
	Notes []string `json:"notes,omitempty"`
}

// Curve is plan's latency-versus-throughput curve: one point per load step.
type Curve struct {
	Op     string       `json:"op"`
	Points []CurvePoint `json:"points"`
	// Knee is the index in Points of the knee; -1 when there is none.
	Knee int `json:"knee"`
	// SLOMs is the p99 latency objective the plan was made for; 0 when none was given.
	SLOMs float64 `json:"slo_ms,omitempty"`
}

// CurvePoint is one load step: achieved throughput and p99 response time.
type CurvePoint struct {
	ThroughputRPS float64 `json:"throughput_rps"`
	P99Ms         float64 `json:"p99_ms"`
}
