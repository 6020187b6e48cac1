package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Observation is what a rule's func returns: a severity and what was observed, in
// words. The zero Observation means "not applicable here" and adds no evidence; a
// signal that applies but was not measured is Unknown.
type Observation struct {
	Severity finding.Severity
	Observed string
}

func unknown(format string, a ...any) Observation {
	return Observation{Severity: finding.Unknown, Observed: fmt.Sprintf(format, a...)}
}

// Rule grades one signal. Rules are data: the table in rules.go lists them all.
type Rule struct {
	Class  finding.Class
	Signal string
	// Limits are the numbers the rule grades with; Threshold is written from
	// them. A rule whose grade is not one value against two numbers (a share
	// with floors, a flag) has no Limits and a Threshold written from the
	// constants it grades with.
	Limits    *Limits
	Threshold string
	Source    string
	// Advice is shown when the rule grades warn or fail.
	Advice string
	// PerMember rules run once per member window (Input.W); the others once per run.
	PerMember bool
	// Key rules decide whether a class is known: when every key rule of a class is
	// unknown and nothing is warn or fail, the class is unknown, never ok.
	Key bool
	// Eval grades the signal with the rule's limits (the zero Limits for a rule
	// that has none).
	Eval func(in *Input, lim Limits) Observation
}

// check grades in with the rule's own limits.
func (r Rule) check(in *Input) Observation {
	var lim Limits
	if r.Limits != nil {
		lim = *r.Limits
	}
	return r.Eval(in, lim)
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
	// CoresAtMost says Cores is only an upper bound (the member's GOMAXPROCS).
	CoresAtMost bool
	// Unseen says why the member's machine is not this host's; "" when it is.
	Unseen string
	// perMember holds, by window name, what each member has when the run file
	// says it per member (its own cgroup limits); it replaces the fields above for
	// that member's window (see member).
	perMember map[string]resources
	// NetworkRTTMs is a measured client-to-leader round trip; 0 when not
	// measured. rttSource says what measured it (HTTP/2 PING, Status call).
	NetworkRTTMs float64
	rttSource    string
	// hostRTTMs is the part of a measured PING round trip that this host's
	// kernel and thread wake-ups take (results.Network.HostPingRTTMs): no
	// network change removes it. 0 when unknown or the round trip is no PING.
	hostRTTMs float64
	// Seconds overrides the window length when scrape times are unknown (bare dumps).
	Seconds float64
	// PeersKnown is true when the member count is known, and Peers how many others there are.
	PeersKnown bool
	Peers      int
	// names maps a window (host:port) to the member's name in the run file.
	names map[string]string
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
	in.CoresAtMost, in.Unseen = r.coresAtMost, r.unseen
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
func evaluate(rules []Rule, base Input) []finding.Finding {
	type acc struct {
		ev        []finding.Evidence
		wins      []*Window // the member window of each evidence; nil for run-wide
		advice    []string
		keyKnown  bool
		keyExists bool
	}
	byClass := map[finding.Class]*acc{}
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
			c := r.check(&in)
			if c.Severity == "" {
				continue // not applicable (e.g. a run-file signal when grading bare dumps)
			}
			e := finding.Evidence{Signal: r.Signal, Observed: c.Observed, Threshold: r.Threshold, Source: r.Source, Severity: c.Severity}
			var win *Window
			if r.PerMember && in.W != nil {
				win = in.W
				if len(base.Members) > 1 {
					e.Member, e.MemberName, e.Role = in.W.Member, base.names[in.W.Member], roleOf(in.W)
				}
			}
			a.ev, a.wins = append(a.ev, e), append(a.wins, win)
			if r.Key {
				a.keyExists = true
				if c.Severity != finding.Unknown {
					a.keyKnown = true
				}
			}
			if (c.Severity == finding.Warn || c.Severity == finding.Fail) && r.Advice != "" && !slices.Contains(a.advice, r.Advice) {
				a.advice = append(a.advice, r.Advice)
			}
		}
	}
	evs := map[finding.Class][]graded{}
	for cl, a := range byClass {
		for i := range a.ev {
			evs[cl] = append(evs[cl], graded{&a.ev[i], a.wins[i]})
		}
	}
	adjust(evs, &base)
	var out []finding.Finding
	for _, cl := range finding.Classes {
		a := byClass[cl]
		if a == nil || len(a.ev) == 0 {
			continue // no rule of the class applies here (e.g. client, grading bare dumps)
		}
		f := finding.Finding{Class: cl, Evidence: a.ev, Advice: strings.Join(a.advice, " ")}
		worst := finding.Unknown
		for _, e := range a.ev {
			if e.Severity.Rank() > worst.Rank() {
				worst = e.Severity
			}
		}
		if worst == finding.OK && a.keyExists && !a.keyKnown {
			worst = finding.Unknown
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
func displayRank(s finding.Severity) int {
	if s == finding.Unknown {
		return 1
	}
	if s == finding.OK {
		return 0
	}
	return s.Rank()
}

// summarize says in one line why a class got its grade.
func summarize(sev finding.Severity, ev []finding.Evidence) string {
	switch sev {
	case finding.Fail, finding.Warn:
		var parts []string
		for _, e := range ev {
			if e.Severity == sev {
				s := e.Signal + " " + e.Observed
				if e.Member != "" {
					s += " on " + e.Where()
				}
				parts = append(parts, s)
			}
		}
		sort.Strings(parts)
		if len(parts) > 2 {
			parts = append(parts[:2], fmt.Sprintf("and %d more", len(parts)-2))
		}
		return strings.Join(parts, "; ")
	case finding.OK:
		n, unk := 0, 0
		for _, e := range ev {
			switch e.Severity {
			case finding.OK:
				n++
			case finding.Unknown:
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
