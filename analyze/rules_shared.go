package analyze

import (
	"fmt"

	"github.com/etcdperf/etcdperf/finding"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// hostPressureRule grades the host's CPU pressure over the run (Linux PSI): the
// share of the time in which some runnable task waited for a CPU. Utilisation of
// the members and the generator cannot see other work crowding them out; this
// can. It applies to members on the measuring host only (a remote member does
// not share this host's PSI: its host's is node_exporter's), and needs a window of
// minCPUWindow as the CPU rules do: over a few milliseconds the share is one
// scheduler instant (a 0.02 s run on a busy host read 100%), not the run's
// condition.
func hostPressureRule(in *Input, lim Limits) Observation {
	r := in.Run
	if r == nil || r.HostCPUPressure == nil || !membersHere(r, false) {
		return Observation{}
	}
	if r.DurationS < minCPUWindow {
		return unknown("the run (%.2f s) is shorter than the %g s a pressure share needs", r.DurationS, minCPUWindow)
	}
	p := *r.HostCPUPressure
	obs := fmt.Sprintf("some task waited for a CPU %s of the run", pct(p))
	sev := lim.Grade(p)
	// Waits while the CPUs still had idle time under limCPU's warn level are the
	// wake-up latency of many short-lived threads (a closed loop of one client
	// switches tens of thousands of times a second), not a want of CPU.
	if b := r.HostCPUBusy; b != nil {
		obs += fmt.Sprintf(", the host's CPUs busy %s", pct(*b))
		if top := r.HostCPUBusiest; top != nil {
			obs += fmt.Sprintf(" (the busiest %s)", pct(*top))
		}
		if why := waitExcused(in); sev.Bad() && why != "" {
			sev = finding.OK
			obs += " (" + why + ")"
		}
	}
	return Observation{Severity: sev, Observed: obs}
}

// waitExcused says why a wait for a CPU on this host is no want of CPU; "" when
// it is one or the host's busy share is unknown. Waits while every CPU still had
// idle time under limCPU's warn level are the wake-up latency of many
// short-lived threads (a closed loop of one client switches tens of thousands of
// times a second); and a closed loop takes whatever CPU there is: the members and
// the generator wait for each other, and only work beside them crowds the
// cluster out. The busiest CPU, where it was read, stands for every CPU: tasks
// pinned to one (a cpuset, taskset) wait for it while the others idle.
func waitExcused(in *Input) string {
	b, what, ok := hostBusiest(in.Run)
	if !ok {
		return ""
	}
	if b < limCPU.Warn {
		return fmt.Sprintf("%s under %s: wake-up latency, not a want of CPU", what, pct(limCPU.Warn))
	}
	if other, ok := othersCPU(in); !openLoop(in) && ok && other < limCPU.Warn {
		return fmt.Sprintf("a closed loop's own: work besides the members and the generator took %s of the CPUs, under %s", pct(other), pct(limCPU.Warn))
	}
	return ""
}

// hostBusiest is the busy share of the measuring host's busiest CPU where it
// was read, else of all its CPUs, and which of the two it is.
func hostBusiest(r *results.Run) (float64, string, bool) {
	switch {
	case r.HostCPUBusiest != nil:
		return *r.HostCPUBusiest, "the busiest CPU", true
	case r.HostCPUBusy != nil:
		return *r.HostCPUBusy, "the CPUs", true
	}
	return 0, "", false
}

// othersCPU is the share of the host's CPUs that work besides the members and
// the generator took over the run: the host's busy share less theirs. ok is
// false where a member's CPU or the host's is not known.
func othersCPU(in *Input) (float64, bool) {
	r := in.Run
	if r.HostCPUBusy == nil || r.Host == nil || r.Host.CPUs <= 0 || r.DurationS <= 0 {
		return 0, false
	}
	server, ok := membersCPU(in)
	if !ok {
		return 0, false
	}
	if in.embedded() {
		server = 0 // the generator's own CPU time holds the in-process member's
	}
	own := (server + r.Client.CPUSeconds/r.DurationS) / float64(r.Host.CPUs)
	return max(*r.HostCPUBusy-own, 0), true
}

// membersCPU is the members' CPU over their windows, in cores.
func membersCPU(in *Input) (float64, bool) {
	var server float64
	for _, w := range in.Members {
		if !w.Usable() || w.Seconds() < minCPUWindow {
			return 0, false
		}
		d, ok := w.CounterDelta(metrics.CPUSeconds, nil)
		if !ok {
			return 0, false
		}
		server += d / w.Seconds()
	}
	return server, len(in.Members) > 0
}

// sharedHostCPURule grades the CPU of a host that runs the members and the
// generator as separate processes (loopback endpoints): each may look fine alone
// while together they saturate the cores, as etcdctl check perf --load=l does on
// 2 cores. It does not apply to an in-process etcd (one process: the server CPU
// rule counts both) or to a remote cluster.
func sharedHostCPURule(in *Input, lim Limits) Observation {
	r := in.Run
	if r == nil || in.embedded() || !hardware.AllLoopback(r.Target.Endpoints) || !membersHere(r, true) || r.Host == nil || r.DurationS <= 0 {
		return Observation{}
	}
	// The host facts are the generator's. Members etcdperf started (embedded) are its
	// children and share its cgroup, so its CPU quota bounds them all; members it
	// did not start are outside that cgroup and share the machine's cores with it.
	cores := r.Host.EffectiveCPUs()
	if !r.Target.Embedded {
		cores = float64(r.Host.CPUs)
	}
	if cores <= 0 || r.Client.CPUSeconds <= 0 {
		return unknown("the host's cores or the generator's CPU time are not recorded")
	}
	if len(in.Members) == 0 {
		return unknown("no member was scraped")
	}
	server, ok := membersCPU(in)
	if !ok {
		return unknown("a member's %s over the window is not known", metrics.CPUSeconds)
	}
	client := r.Client.CPUSeconds / r.DurationS
	u := (server + client) / cores
	obs := fmt.Sprintf("members %.2f + generator %.2f cores of %s = %s", server, client, units.Trim(cores), pct(u))
	if sev := lim.Grade(u); sev.Bad() && !openLoop(in) {
		// A closed loop sends as fast as the cores let it: saturating the host is
		// what it does, and says how much this host carries with etcdperf on it,
		// not that the cluster wants CPU (an open loop at a rate says that).
		return Observation{Severity: finding.OK, Observed: obs + "; a closed loop takes whatever CPU the host has: its throughput is this host's with the generator on it, not a want of CPU by the members (give a --rate to grade the cluster at a load)"}
	}
	return Observation{Severity: lim.Grade(u), Observed: obs}
}

// membersHere reports whether the run's members run on the measuring host: any of
// them, or all of them with all. A member is here when embedded, when its process
// was found (Pid) or when it advertises loopback client URLs; a run file that
// lists no members goes by its endpoints.
func membersHere(r *results.Run, all bool) bool {
	if r.Target.Embedded {
		return true
	}
	if len(r.Target.Members) == 0 {
		return hardware.AllLoopback(r.Target.Endpoints)
	}
	n := 0
	for _, m := range r.Target.Members {
		if m.Pid > 0 || (len(m.ClientURLs) > 0 && hardware.AllLoopback(m.ClientURLs)) {
			n++
		}
	}
	if all {
		return n == len(r.Target.Members)
	}
	return n > 0
}
