package analyze

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/results"
)

// Severity grades a signal or a class.
type Severity string

// Severities. Unknown means "not measured" and is never read as ok.
const (
	OK      Severity = "ok"
	Warn    Severity = "warn"
	Fail    Severity = "fail"
	Unknown Severity = "unknown"
)

// rank orders severities for picking the worst: fail > warn > ok > unknown.
// (Whether an unknown makes a whole class unknown is decided by Rule.Key.)
func (s Severity) rank() int {
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

// Class is what a finding is about; every class but health can be a bottleneck.
type Class string

// Classes, in the order a verdict prefers them when several fail: a saturated
// generator invalidates everything else; a workload shape (value or range size)
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
	ClassHealth    Class = "health"
)

// classOrder is the ranking described above, health last (context, not a bottleneck).
var classOrder = []Class{ClassClient, ClassValueSize, ClassRangeSize, ClassCPU, ClassMemory, ClassDisk, ClassNetwork, ClassHealth}

// Evidence is one graded signal.
type Evidence struct {
	Signal    string   `json:"signal"`
	Member    string   `json:"member,omitempty"`
	Observed  string   `json:"observed"`
	Threshold string   `json:"threshold"`
	Source    string   `json:"source"`
	Severity  Severity `json:"severity"`
}

// Finding is the grade of one class with the evidence behind it.
type Finding struct {
	Class    Class      `json:"class"`
	Severity Severity   `json:"severity"`
	Summary  string     `json:"summary"`
	Evidence []Evidence `json:"evidence"`
	Advice   string     `json:"advice,omitempty"`
}

// Check is what a rule's func returns: a severity and the observation in words.
// The zero Check means "not applicable here" and adds no evidence; a signal that
// applies but was not measured is Unknown.
type Check struct {
	Severity Severity
	Observed string
}

func unknown(format string, a ...any) Check {
	return Check{Severity: Unknown, Observed: fmt.Sprintf(format, a...)}
}

// Rule grades one signal. Rules are data: the table in rules.go lists them all.
type Rule struct {
	Class     Class
	Signal    string
	Threshold string
	Source    string
	// Advice is shown when the rule grades warn or fail.
	Advice string
	// PerMember rules run once per member window (Input.W); the others once per run.
	PerMember bool
	// Key rules decide whether a class is known: when every key rule of a class is
	// unknown and nothing is warn or fail, the class is unknown, never ok.
	Key  bool
	Eval func(in *Input) Check
}

// Input is what a rule sees.
type Input struct {
	// Run is the run being graded; nil when grading bare /metrics dumps.
	Run *results.Run
	// W is the member being graded (per-member rules) or the leader (run rules); may be nil.
	W *Window
	// Members are all member windows; Leader is the one whose last scrape said is_leader.
	Members []*Window
	Leader  *Window
	// Cores and MemoryBytes are the resources a member has; 0 when unknown.
	Cores       float64
	MemoryBytes int64
	// CoresSource and MemorySource say where Cores and MemoryBytes came from
	// ("member cgroup quota", "host CPUs", "--cores"; "member cgroup limit",
	// "cgroup limit", "host RAM", "--memory").
	CoresSource  string
	MemorySource string
	// perMember holds, by window name, what each member has when the run file
	// says it per member (its own cgroup limits); it replaces the fields above for
	// that member's window (see member).
	perMember map[string]resources
	// NetworkRTTMs is a measured client-to-leader round trip; 0 when not measured.
	NetworkRTTMs float64
	// Seconds overrides the window length when scrape times are unknown (bare dumps).
	Seconds float64
	// PeersKnown is true when the member count is known, and Peers how many others there are.
	PeersKnown bool
	Peers      int
}

// seconds is the length of the graded window.
func (in *Input) seconds() float64 {
	if s := in.W.Seconds(); s > 0 {
		return s
	}
	return in.Seconds
}

// use sets the member's resources.
func (in *Input) use(r resources) {
	in.Cores, in.CoresSource, in.MemoryBytes, in.MemorySource = r.cores, r.coresSource, r.memoryBytes, r.memorySource
}

// member is in for grading window w, with w's own resources when known.
func (in Input) member(w *Window) Input {
	in.W = w
	if w == nil {
		return in
	}
	if r, ok := in.perMember[w.Member]; ok {
		in.use(r)
	}
	return in
}

// embedded reports whether the server shares the generator's process, so process_*
// metrics count both.
func (in *Input) embedded() bool { return in.Run != nil && in.Run.Target.InProcess }

// evaluate runs every rule and folds the evidence into one finding per class.
func evaluate(rules []Rule, base Input) []Finding {
	type acc struct {
		ev        []Evidence
		advice    []string
		keyKnown  bool
		keyExists bool
	}
	byClass := map[Class]*acc{}
	for _, r := range rules {
		a := byClass[r.Class]
		if a == nil {
			a = &acc{}
			byClass[r.Class] = a
		}
		var runs []Input
		if r.PerMember {
			for _, w := range base.Members {
				runs = append(runs, base.member(w))
			}
			if len(runs) == 0 {
				runs = append(runs, base) // no member: the rule reports unknown
			}
		} else {
			runs = append(runs, base.member(base.Leader))
		}
		for _, in := range runs {
			c := r.Eval(&in)
			if c.Severity == "" {
				continue // not applicable (e.g. a run-file signal when grading bare dumps)
			}
			e := Evidence{Signal: r.Signal, Observed: c.Observed, Threshold: r.Threshold, Source: r.Source, Severity: c.Severity}
			if r.PerMember && in.W != nil && len(base.Members) > 1 {
				e.Member = in.W.Member
			}
			a.ev = append(a.ev, e)
			if r.Key {
				a.keyExists = true
				if c.Severity != Unknown {
					a.keyKnown = true
				}
			}
			if (c.Severity == Warn || c.Severity == Fail) && r.Advice != "" && !slices.Contains(a.advice, r.Advice) {
				a.advice = append(a.advice, r.Advice)
			}
		}
	}
	var out []Finding
	for _, cl := range classOrder {
		a := byClass[cl]
		if a == nil || len(a.ev) == 0 {
			continue // no rule of the class applies here (e.g. client, grading bare dumps)
		}
		f := Finding{Class: cl, Evidence: a.ev, Advice: strings.Join(a.advice, " ")}
		worst := Unknown
		for _, e := range a.ev {
			if e.Severity.rank() > worst.rank() {
				worst = e.Severity
			}
		}
		if worst == OK && a.keyExists && !a.keyKnown {
			worst = Unknown
		}
		f.Severity = worst
		f.Summary = summarize(worst, a.ev)
		out = append(out, f)
	}
	// Worst first for reading; within a severity, class order (the verdict's ranking).
	sort.SliceStable(out, func(i, j int) bool { return displayRank(out[i].Severity) > displayRank(out[j].Severity) })
	return out
}

// displayRank orders findings for reading: fail, warn, unknown (a gap worth seeing), ok.
func displayRank(s Severity) int {
	if s == Unknown {
		return 1
	}
	if s == OK {
		return 0
	}
	return s.rank()
}

// summarize says in one line why a class got its grade.
func summarize(sev Severity, ev []Evidence) string {
	switch sev {
	case Fail, Warn:
		var parts []string
		for _, e := range ev {
			if e.Severity == sev {
				s := e.Signal + " " + e.Observed
				if e.Member != "" {
					s += " on " + e.Member
				}
				parts = append(parts, s)
			}
		}
		sort.Strings(parts)
		if len(parts) > 2 {
			parts = append(parts[:2], fmt.Sprintf("and %d more", len(parts)-2))
		}
		return strings.Join(parts, "; ")
	case OK:
		n, unk := 0, 0
		for _, e := range ev {
			switch e.Severity {
			case OK:
				n++
			case Unknown:
				unk++
			}
		}
		s := fmt.Sprintf("%d signal(s) within thresholds", n)
		if unk > 0 {
			s += fmt.Sprintf(", %d not measured", unk)
		}
		return s
	}
	return "not measured: the signals it needs are missing"
}

// grade maps a value to a severity: ok below warn, warn below fail, else fail.
func grade(v, warn, fail float64) Severity {
	switch {
	case math.IsNaN(v):
		return Unknown
	case v >= fail:
		return Fail
	case v >= warn:
		return Warn
	}
	return OK
}
