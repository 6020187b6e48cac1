// Package analyze turns a run's /metrics scrapes and load results into a diagnosis:
// findings per class (disk, network, memory, cpu, client, value size, range size,
// cluster health), each with graded evidence and its source, a verdict naming the
// bottleneck, and a latency budget.
//
// Metrics are scraped by Scraper (or Fetch), stored in the run file, and graded on
// the difference between scrapes that bracket the run: counters and histograms are
// cumulative since the member started. A metric that is absent is unknown, never ok.
package analyze

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Options tune an analysis. Zero values mean "take it from the run file".
type Options struct {
	// Cores and MemoryBytes are what each member has, for every member. By default
	// each member's own cgroup limits, when the run file records them, else the
	// run's host facts, but only when the members run on that host (embedded or
	// loopback endpoints): a remote member's machine is not the one etcdperf ran on.
	Cores       float64
	MemoryBytes int64
	// WindowSeconds is the time between the two dumps of Dumps (the text format has
	// no timestamps); 0 leaves rate-based signals (CPU) unknown.
	WindowSeconds float64
	// NetworkRTTMs is a measured client-to-leader round trip, for the budget.
	NetworkRTTMs float64
	// Clients is the number of clients, for the workload tier; 0 reads the run's
	// "clients" flag.
	Clients int
	// Rules replaces the rule table; nil uses Rules.
	Rules []Rule
}

// Report is the analysis, shaped for JSON output.
type Report struct {
	Verdict  finding.Verdict        `json:"verdict"`
	Findings []finding.Finding      `json:"findings"`
	Budget   *finding.Budget        `json:"budget,omitempty"`
	Hardware *finding.HardwareGrade `json:"hardware,omitempty"`
	// Notes are things the analysis could not use (failed scrapes, unparseable text).
	Notes []string `json:"notes,omitempty"`
	// Verbose makes the simple rendering show every signal; without it, only the
	// findings at warn or above are shown in full (JSON always holds everything).
	Verbose bool `json:"-"`
}

// Run analyzes a run file. It fails only on input it cannot read at all (nil, or
// another run file version); missing or broken scrapes make findings unknown.
func Run(run *results.Run, opts Options) (Report, error) {
	if run == nil {
		return Report{}, errors.New("analyze: no run")
	}
	if run.Version != results.Version {
		return Report{}, fmt.Errorf("analyze: run file version %d; this build reads version %d", run.Version, results.Version)
	}
	windows, notes := windowsFromScrapes(run.Scrapes)
	in := Input{Run: run, Members: windows, NetworkRTTMs: opts.NetworkRTTMs}
	in.Leader = leaderOf(windows)
	switch {
	case len(run.Target.Members) > 0:
		in.PeersKnown, in.Peers = true, len(run.Target.Members)-1
	case len(windows) > 1:
		in.PeersKnown, in.Peers = true, len(windows)-1
	default:
		in.PeersKnown, in.Peers = inferPeers(in.Leader)
	}
	in.use(resourcesOf(opts, run, nil))
	in.perMember = map[string]resources{}
	in.names = map[string]string{}
	for _, w := range windows {
		if m := memberOf(run, w.Member); m != nil {
			in.names[w.Member] = m.Name
		}
		in.perMember[w.Member] = resourcesOf(opts, run, memberOf(run, w.Member))
	}

	rep := report(in, opts)
	rep.Notes = append(notes, rep.Notes...)
	if len(run.Scrapes) == 0 {
		rep.Notes = append(rep.Notes, "the run has no /metrics scrapes: server-side signals are unknown")
	}
	if run.Host != nil {
		g := hardware.GradeHost(run.Host, workloadOf(run, windows, opts))
		rep.Hardware = &g
	}
	return rep, nil
}

// Dumps analyzes two saved /metrics texts of one member, taken before and after a
// period of load (the support workflow: "send us your metrics"). It fails when a
// text does not parse or is not an etcd member's.
func Dumps(before, after string, opts Options) (Report, error) {
	var snaps []*Snapshot
	for i, text := range []string{before, after} {
		s, err := Parse(text)
		if err != nil {
			return Report{}, fmt.Errorf("%s dump: %w", []string{"before", "after"}[i], err)
		}
		if !s.IsEtcd() {
			return Report{}, fmt.Errorf("%s dump: %w", []string{"before", "after"}[i], ErrNotEtcd)
		}
		s.Member = "member"
		snaps = append(snaps, s)
	}
	w := &Window{Member: "member", Snaps: snaps}
	in := Input{Members: []*Window{w}, Leader: w, Seconds: opts.WindowSeconds, NetworkRTTMs: opts.NetworkRTTMs}
	in.PeersKnown, in.Peers = inferPeers(w)
	in.use(resourcesOf(opts, nil, nil))
	rep := report(in, opts)
	if opts.WindowSeconds <= 0 {
		rep.Notes = append(rep.Notes, "the time between the dumps is unknown: CPU utilisation is not graded (give the window)")
	}
	return rep, nil
}

// report grades the input and builds the verdict and budget.
func report(in Input, opts Options) Report {
	rules := opts.Rules
	if rules == nil {
		rules = Rules
	}
	findings := evaluate(rules, in)
	rep := Report{Findings: findings, Budget: computeBudget(&in)}
	shareOf(findings, rep.Budget, &in)
	rep.Verdict = verdict(in.Run, findings)
	rep.Verdict.Versions = versionsOf(&in)
	return rep
}

// resources is what a member has to run on, and where each figure came from.
type resources struct {
	cores        float64
	coresSource  string
	memoryBytes  int64
	memorySource string
}

// resourcesOf decides the cores and memory of member m of run (nil: a member the
// run file says nothing of; run nil: bare dumps). The options win. Then a member
// whose process the run found on this host (m.Pid) has its own cgroup's limits, or
// the machine's CPUs and RAM where it has none. Then members on this host (embedded
// or loopback endpoints) get the host facts, which are etcdperf's own process's; a
// remote member's machine is not the one etcdperf ran on, so it stays unknown.
func resourcesOf(opts Options, run *results.Run, m *results.Member) resources {
	var host *results.Host
	local := false
	if run != nil {
		host, local = run.Host, run.Target.Embedded || hardware.AllLoopback(run.Target.Endpoints)
	}
	if m != nil && m.Pid <= 0 {
		m = nil // its limits were not read
	}
	var cpus int
	var ram int64
	if host != nil {
		cpus, ram = host.CPUs, host.HostMemoryBytes
	}
	var r resources
	switch {
	case opts.Cores > 0:
		r.cores, r.coresSource = opts.Cores, "--cores"
	case m != nil && m.CPUQuotaCores > 0 && (cpus == 0 || m.CPUQuotaCores < float64(cpus)):
		r.cores, r.coresSource = m.CPUQuotaCores, "member cgroup quota"
	case m != nil && cpus > 0:
		r.cores, r.coresSource = float64(cpus), "host CPUs"
	case local && host.EffectiveCPUs() > 0:
		r.cores, r.coresSource = host.EffectiveCPUs(), "host CPUs"
		if host.EffectiveCPUs() < float64(host.CPUs) {
			r.coresSource = "cgroup quota"
		}
	case local && run.Client.Cores > 0:
		// No host facts, but the generator counted the cores of this same machine.
		r.cores, r.coresSource = float64(run.Client.Cores), "generator's CPUs"
	}
	switch {
	case opts.MemoryBytes > 0:
		r.memoryBytes, r.memorySource = opts.MemoryBytes, "--memory"
	case m != nil && m.MemoryLimitBytes > 0 && (ram == 0 || m.MemoryLimitBytes < ram):
		r.memoryBytes, r.memorySource = m.MemoryLimitBytes, "member cgroup limit"
	case m != nil && ram > 0:
		r.memoryBytes, r.memorySource = ram, "host RAM"
	case local && host != nil && host.MemoryBytes > 0:
		r.memoryBytes, r.memorySource = host.MemoryBytes, "host RAM"
		if host.CgroupMemoryLimitBytes > 0 && host.CgroupMemoryLimitBytes == host.MemoryBytes {
			r.memorySource = "cgroup limit"
		}
	}
	return r
}

// memberOf is the member of the run file whose client URL the window named name
// was scraped at (windows are named by host:port); nil when none is.
func memberOf(run *results.Run, name string) *results.Member {
	for i, m := range run.Target.Members {
		for _, u := range m.ClientURLs {
			if memberName(u) == name {
				return &run.Target.Members[i]
			}
		}
	}
	return nil
}

// windowsFromScrapes groups scrapes by member and keeps, per member, the last good
// "before" scrape, the good "during" scrapes and the first good "after" scrape, in
// that order. Scrapes that failed or do not parse become notes.
func windowsFromScrapes(scrapes []results.Scrape) ([]*Window, []string) {
	type item struct {
		snap  *Snapshot
		phase string
	}
	byMember := map[string][]item{}
	var order []string
	var notes []string
	for _, sc := range scrapes {
		name := sc.Member
		if name == "" {
			name = memberName(sc.URL)
		}
		if sc.Error != "" {
			notes = append(notes, fmt.Sprintf("%s scrape of %s failed: %s", sc.Phase, name, sc.Error))
			continue
		}
		s, err := Parse(sc.Text)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s scrape of %s: %v", sc.Phase, name, err))
			continue
		}
		if !s.IsEtcd() {
			notes = append(notes, fmt.Sprintf("%s scrape of %s: %v", sc.Phase, name, ErrNotEtcd))
			continue
		}
		s.Member, s.Time = name, parseTime(sc.Time)
		if _, seen := byMember[name]; !seen {
			order = append(order, name)
		}
		byMember[name] = append(byMember[name], item{s, sc.Phase})
	}
	var out []*Window
	for _, name := range order {
		items := byMember[name]
		sort.SliceStable(items, func(i, j int) bool { return items[i].snap.Time.Before(items[j].snap.Time) })
		var before, after *Snapshot
		var during []*Snapshot
		for _, it := range items {
			switch it.phase {
			case results.PhaseBefore:
				before = it.snap
			case results.PhaseAfter:
				if after == nil {
					after = it.snap
				}
			default:
				during = append(during, it.snap)
			}
		}
		w := &Window{Member: name}
		if before != nil {
			w.Snaps = append(w.Snaps, before)
		}
		w.Snaps = append(w.Snaps, during...)
		if after != nil {
			w.Snaps = append(w.Snaps, after)
		}
		out = append(out, w)
	}
	return out, notes
}

// leaderOf is the member whose newest scrape says it leads; else the first member.
func leaderOf(ws []*Window) *Window {
	for _, w := range ws {
		if v, ok := w.Gauge(metrics.IsLeader, nil); ok && v == 1 {
			return w
		}
	}
	if len(ws) > 0 {
		return ws[0]
	}
	return nil
}

// inferPeers tells a single-member cluster from metrics alone: a member that has a
// leader but never had a peer connection (no active-peer or peer-RTT series) is
// alone. Otherwise the member count is unknown.
func inferPeers(w *Window) (known bool, peers int) {
	s := w.Last()
	if s == nil || !s.IsEtcd() {
		return false, 0
	}
	if v, ok := s.Value(metrics.HasLeader, nil); !ok || v != 1 {
		return false, 0
	}
	_, active := s.Families[metrics.ActivePeers]
	_, rtt := s.Families[metrics.PeerRTT]
	if active || rtt {
		return false, 0
	}
	return true, 0
}

// workloadOf describes the run's load for the hardware tiers.
func workloadOf(run *results.Run, ws []*Window, opts Options) finding.Workload {
	w := finding.Workload{Clients: opts.Clients}
	if w.Clients == 0 {
		w.Clients, _ = strconv.Atoi(strings.TrimSpace(run.Flags["clients"]))
	}
	for _, op := range run.Ops {
		w.RPS += op.ThroughputRPS
	}
	for _, win := range ws {
		if v, ok := win.GaugeMax(metrics.DBTotal, nil); ok && int64(v) > w.DataBytes {
			w.DataBytes = int64(v)
		}
	}
	return w
}

// scrapeTime formats a time as Scrape.Time does.
func scrapeTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
