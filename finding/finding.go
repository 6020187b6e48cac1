// Package finding holds the one family of diagnosis types every other package
// speaks: severities, classes, graded evidence, findings, the verdict, the latency
// budget and the hardware grade. It is a leaf: it imports nothing of the project,
// so the analyzer, inspect, hardware, the run file and the renderers can all use
// the same values without converting them.
package finding

// Severity grades a signal or a class.
type Severity string

// Severities. Unknown means "not measured" and is never read as ok.
const (
	OK      Severity = "ok"
	Warn    Severity = "warn"
	Fail    Severity = "fail"
	Unknown Severity = "unknown"
)

// Rank orders severities for picking the worst: fail > warn > ok > unknown.
// (Whether an unknown makes a whole class unknown is the analyzer's call.)
func (s Severity) Rank() int {
	switch s {
	case Fail:
		return 3
	case Warn:
		return 2
	case OK:
		return 1
	}
	return 0
}

// Bad reports whether s is warn or fail: a grade that needs the reader's attention.
func (s Severity) Bad() bool { return s == Warn || s == Fail }

// Worst is the more severe of a and b by Rank (a on a tie).
func Worst(a, b Severity) Severity {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Class is what a finding is about; every class but health and version can be a bottleneck.
type Class string

// Classes, in the order a verdict prefers them when several fail: a saturated
// generator invalidates everything else; a full quota refuses the writes, so
// nothing else about the run says much; a workload shape (value or range size)
// explains the resource pressure it causes; CPU saturation inflates every latency
// measured inside the server, fsync timings included, so it outranks disk; memory
// pressure (page cache evicted, swap) also shows up as slow disk; the network
// signal that compares client and server latency is a residual, so it comes last.
const (
	ClassClient    Class = "client"
	ClassValueSize Class = "value-size"
	ClassRangeSize Class = "range-size"
	ClassCPU       Class = "cpu"
	ClassMemory    Class = "memory"
	ClassDisk      Class = "disk"
	ClassNetwork   Class = "network"
	// ClassQuota is the backend quota: at the quota etcd refuses every write,
	// whatever the hardware.
	ClassQuota Class = "quota"
	// ClassStall is a span in which a member answered nothing; ClassElection
	// the leader changes (and scrapes without a leader) of the window; ClassWatch
	// the delivery of watch events. Each is a cause of what clients saw, named
	// when no resource class explains it, and ranked after those that do (a slow
	// disk stalls a member and costs it the leadership).
	ClassStall    Class = "stall"
	ClassElection Class = "election"
	ClassWatch    Class = "watch"
	ClassHealth   Class = "health"
	ClassVersion  Class = "version"
)

// Classes is the ranking described above, health and version last (context, not
// a bottleneck). Within one severity the verdict orders disk and network by the
// share of the client latency they explain (analyze's rankFindings).
var Classes = []Class{ClassClient, ClassQuota, ClassValueSize, ClassRangeSize, ClassCPU, ClassMemory, ClassDisk, ClassNetwork,
	ClassStall, ClassElection, ClassWatch, ClassHealth, ClassVersion}

// Symptom reports whether a class is what clients saw happen (a stall, an
// election, late watch events) rather than a resource that ran out: it ranks
// after every resource class of its severity.
func (c Class) Symptom() bool { return c == ClassStall || c == ClassElection || c == ClassWatch }

// Context reports whether a class is cluster context (health, version) rather
// than a possible bottleneck.
func (c Class) Context() bool { return c == ClassHealth || c == ClassVersion }

// Evidence is one graded signal: what was observed, against which threshold, and
// where that threshold comes from.
type Evidence struct {
	Signal string `json:"signal"`
	Member string `json:"member,omitempty"`
	// MemberName and Role (leader, follower) say which member Member is.
	MemberName string   `json:"member_name,omitempty"`
	Role       string   `json:"role,omitempty"`
	Observed   string   `json:"observed"`
	Threshold  string   `json:"threshold"`
	Source     string   `json:"source"`
	Severity   Severity `json:"severity"`
}

// Finding is the grade of one class with the evidence behind it.
type Finding struct {
	Class    Class      `json:"class"`
	Severity Severity   `json:"severity"`
	Summary  string     `json:"summary"`
	Evidence []Evidence `json:"evidence"`
	Advice   string     `json:"advice,omitempty"`
	// Share is the fraction of the client-observed latency this class explains,
	// from measured parts of the latency budget, at the quantile ShareAt ("p50",
	// "p99") where the class was graded; nil when the class is not a part of the
	// budget or a part is unknown.
	Share   *float64 `json:"latency_share,omitempty"`
	ShareAt string   `json:"latency_share_at,omitempty"`
	// Risk says why a class at warn or fail is a risk and not the bottleneck: it
	// explains too small a share of the client latency to be what held the
	// clients back, or only a probe of the host saw it. "" when it can be the
	// bottleneck.
	Risk string `json:"risk,omitempty"`
}

// Where names the member of per-member evidence for reading: "m1 127.0.0.1:2379
// (leader)"; "" for run-wide evidence.
func (e Evidence) Where() string {
	if e.Member == "" {
		return ""
	}
	s := e.Member
	if e.MemberName != "" {
		s = e.MemberName + " " + s
	}
	if e.Role != "" {
		s += " (" + e.Role + ")"
	}
	return s
}
