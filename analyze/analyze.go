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
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/metrics"
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
	// Clients is the number of clients, for the workload tier; 0 reads the run's
	// "clients" flag.
	Clients int
	// Rules replaces the rule table; nil uses Rules.
	Rules []Rule
}

// Result is the analysis, shaped for JSON output.
type Result struct {
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
func Run(run *results.Run, opts Options) (Result, error) {
	if run == nil {
		return Result{}, errors.New("analyze: no run")
	}
	if run.Version != results.Version {
		return Result{}, fmt.Errorf("analyze: run file version %d; this build reads version %d", run.Version, results.Version)
	}
	windows, notes := windowsFromScrapes(run.Scrapes)
	in := Input{Run: run, Members: windows}
	if run.Network != nil {
		in.NetworkRTTMs, in.rttSource = run.Network.RTTMs(), "Status call"
		if run.Network.PingRTTMs > 0 {
			in.rttSource, in.hostRTTMs = "HTTP/2 PING", run.Network.HostPingRTTMs
		}
	}
	in.Leader = leaderOf(windows)
	switch {
	case len(run.Target.Members) > 0:
		in.PeersKnown, in.Peers = true, len(run.Target.Members)-1
	case len(windows) > 1:
		in.PeersKnown, in.Peers = true, len(windows)-1
	default:
		in.PeersKnown, in.Peers = inferPeers(in.Leader)
	}
	in.use(resourcesOf(opts, run, memberOfWindow(run, windows, in.Leader), in.Leader))
	in.perMember = map[string]resources{}
	in.names = map[string]string{}
	for _, w := range windows {
		m := memberOfWindow(run, windows, w)
		if m != nil {
			in.names[w.Member] = m.Name
		}
		in.perMember[w.Member] = resourcesOf(opts, run, m, w)
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
func Dumps(before, after string, opts Options) (Result, error) {
	var snaps []*Snapshot
	for i, text := range []string{before, after} {
		s, err := Parse(text)
		if err != nil {
			return Result{}, fmt.Errorf("%s dump: %w", []string{"before", "after"}[i], err)
		}
		if !s.IsEtcd() {
			return Result{}, fmt.Errorf("%s dump: %w", []string{"before", "after"}[i], ErrNotEtcd)
		}
		s.Member = "member"
		snaps = append(snaps, s)
	}
	w := &Window{Member: "member", Snaps: snaps}
	in := Input{Members: []*Window{w}, Leader: w, Seconds: opts.WindowSeconds}
	in.PeersKnown, in.Peers = inferPeers(w)
	in.use(resourcesOf(opts, nil, nil, w))
	rep := report(in, opts)
	if opts.WindowSeconds <= 0 {
		rep.Notes = append(rep.Notes, "the time between the dumps is unknown: CPU utilisation is not graded (give the window)")
	}
	return rep, nil
}

// report grades the input and builds the verdict and budget.
func report(in Input, opts Options) Result {
	rules := opts.Rules
	if rules == nil {
		rules = Rules
	}
	findings := evaluate(rules, in)
	rep := Result{Findings: findings, Budget: computeBudget(&in)}
	shareOf(findings, rep.Budget, &in)
	markRisks(findings, slowServer(in.Run))
	rep.Verdict = verdict(in.Run, findings)
	rep.Verdict.Versions = versionsOf(&in)
	return rep
}

// resources is what a member has to run on, and where each figure came from.
type resources struct {
	cores       float64
	coresSource string
	// coresAtMost: cores is only an upper bound (the member's GOMAXPROCS): a CPU
	// quota below it is not in the member's metrics.
	coresAtMost  bool
	memoryBytes  int64
	memorySource string
	// unseen says why the member's machine is not this host's ("" when it is, or
	// for bare dumps): its resources then come from what it exposes, or are unknown.
	unseen string
}

// unseenMember is why a listed member whose process was not found on this host is
// graded from its own metrics only.
const unseenMember = "its client URL is no listener on this host, so its machine is not etcdperf's"

// resourcesOf decides the cores and memory of member m of run, scraped as window
// w (m nil: a member the run file says nothing of; run nil: bare dumps). The options
// win. Then a member whose process the run found on this host (m.Pid) has its own
// cgroup's limits, or the machine's CPUs and RAM where it has none; an embedded
// member has the host facts, which are etcdperf's own process's. Any other member
// runs where etcdperf cannot see: its container's limits (cAdvisor) and its host's
// CPUs and RAM (node_exporter) where a Prometheus gave them, else what it exposes
// itself (GOMAXPROCS, an upper bound of its cores; GOMEMLIMIT), else unknown.
// A member is local only when proven: embedded, or the process found on its
// client port here started when the member says it did (notTheMember). Loopback
// URLs, advertised or dialled, do not make a member local (a port-forward, a
// proxy, an ssh tunnel or a network namespace lead elsewhere, and etcd advertises
// localhost by default), except in run files that list no members. Bare dumps
// (run nil) are graded from what they expose.
func resourcesOf(opts Options, run *results.Run, m *results.Member, w *Window) resources {
	var host *results.Host
	local := false
	unseen := unseenMember
	if run != nil {
		host = run.Host
		local = run.Target.Embedded || (len(run.Target.Members) == 0 && hardware.AllLoopback(run.Target.Endpoints))
		if m != nil && m.Pid > 0 && !local {
			if why := notTheMember(m, w); why != "" {
				m, unseen = nil, why
			}
		}
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
	if !local && m == nil {
		r = exposed(w)
		if run != nil {
			r.unseen = unseen
		}
	}
	switch {
	case opts.Cores > 0:
		r.cores, r.coresSource, r.coresAtMost = opts.Cores, "--cores", false
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

// notTheMember says why the process found listening on member m's client port
// here (m.Pid) is not shown to be the member; "" when its start equals the
// process_start_time_seconds the member exports (client_golang computes both
// from proc/PID/stat, to 1/USER_HZ: a second's tolerance absorbs the rounding),
// or when the run file predates the start being kept.
func notTheMember(m *results.Member, w *Window) string {
	if m.ProcessStartS == 0 {
		return ""
	}
	v, ok := w.Gauge(metrics.ProcessStart, nil)
	switch {
	case !ok:
		return fmt.Sprintf("pid %d listens on its client port here, but the member exports no %s to show that it is that process, so its machine is not known to be etcdperf's", m.Pid, metrics.ProcessStart)
	case math.Abs(v-m.ProcessStartS) > 1:
		return fmt.Sprintf("pid %d listens on its client port here but started at %s, the member at %s: another process (a tunnel, a proxy, a port-forward), so its machine is not known to be etcdperf's",
			m.Pid, time.Unix(int64(m.ProcessStartS), 0).UTC().Format(time.RFC3339), time.Unix(int64(v), 0).UTC().Format(time.RFC3339))
	}
	return ""
}

// noLimit is where a limit gauge means "none set": Go's GOMEMLIMIT default is
// math.MaxInt64, and cgroup v1 reports an unlimited memory.limit_in_bytes near it.
const noLimit = 1 << 62

// exposed is what a member's own window says of its resources: its container's
// CPU quota and memory limit (cAdvisor) and its host's CPUs and RAM (node_exporter)
// where a Prometheus stored them, else its GOMAXPROCS (an upper bound of its cores:
// a CFS quota under it is not visible) and its GOMEMLIMIT.
func exposed(w *Window) resources {
	var r resources
	if w == nil || w.Last() == nil {
		return r
	}
	last := w.Last()
	hostCPUs := float64(len(last.LabelValues(metrics.NodeCPUSeconds, "cpu")))
	_, container := last.Families[metrics.ContainerCFSPeriods]
	quota, okQ := last.Value(metrics.ContainerCPUQuota, nil)
	period, okP := last.Value(metrics.ContainerCPUPeriod, nil)
	procs, okG := last.Value(metrics.GoMaxProcs, nil)
	switch {
	case okQ && okP && quota > 0 && period > 0:
		r.cores, r.coresSource = quota/period, "container CPU quota (cAdvisor)"
	case container && hostCPUs > 0:
		// cAdvisor sees the container and it has no quota: the host's CPUs are its own.
		r.cores, r.coresSource = hostCPUs, "member host CPUs (node_exporter; its container has no CPU quota)"
	case okG && procs > 0:
		r.cores, r.coresSource, r.coresAtMost = procs, "its GOMAXPROCS ("+metrics.GoMaxProcs+")", true
		if hostCPUs > 0 && hostCPUs < procs {
			r.cores, r.coresSource = hostCPUs, "member host CPUs (node_exporter)"
		}
	}
	limit, okL := last.Value(metrics.ContainerMemLimit, nil)
	memLimit, okM := last.Value(metrics.GoMemLimit, nil)
	total, okT := last.Value(metrics.NodeMemTotal, nil)
	switch {
	case okL && limit > 0 && limit < noLimit && (!okT || limit < total):
		r.memoryBytes, r.memorySource = int64(limit), "container memory limit (cAdvisor)"
	case okM && memLimit > 0 && memLimit < noLimit:
		r.memoryBytes, r.memorySource = int64(memLimit), "its GOMEMLIMIT ("+metrics.GoMemLimit+")"
	case okT && total > 0 && (container || okL):
		// cAdvisor sees the container and it has no limit: the host's RAM is its own.
		r.memoryBytes, r.memorySource = int64(total), "member host RAM (node_exporter; its container has no memory limit)"
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

// memberOfWindow is memberOf for window w, or the one member of a one-member run
// scraped at one URL (its metrics may be served on another port,
// --listen-metrics-urls); nil when none is.
func memberOfWindow(run *results.Run, windows []*Window, w *Window) *results.Member {
	if w == nil {
		return nil
	}
	if m := memberOf(run, w.Member); m != nil {
		return m
	}
	if len(run.Target.Members) == 1 && len(windows) == 1 {
		return &run.Target.Members[0]
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
