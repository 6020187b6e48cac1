package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// rssRule grades the member's peak RSS against the memory it really has.
func rssRule(in *Input, lim Limits) Observation {
	c, ok := memoryShare(in, lim, metrics.RSS, "peak RSS ", "")
	if ok && in.embedded() {
		c.Observed += "; embedded: RSS includes the generator"
	}
	return c
}

// dbRAMRule grades the db size against memory: bbolt mmaps the file, and reads of
// pages not in memory go to disk.
func dbRAMRule(in *Input, lim Limits) Observation {
	c, _ := memoryShare(in, lim, metrics.DBTotal, "db ", "db ")
	return c
}

// memoryShare grades a gauge's peak over the window as a share of the member's
// memory; label names the value where its memory is unknown, prefix heads the
// observation. ok is false when the share is not known.
func memoryShare(in *Input, lim Limits, gauge, label, prefix string) (Observation, bool) {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member"), false
	}
	v, ok := in.W.GaugeMax(gauge, nil)
	if !ok {
		return unknown("%s absent", gauge), false
	}
	if in.MemoryBytes <= 0 {
		if in.Unseen != "" {
			return unknown("%s%s; the member's memory limit is unknown: %s, and it exposes no %s (give --memory, or --prometheus with its container's cAdvisor series)",
				label, units.Bytes(v), in.Unseen, metrics.GoMemLimit), false
		}
		return unknown("%s%s; the member's memory is unknown (give --memory)", label, units.Bytes(v)), false
	}
	r := v / float64(in.MemoryBytes)
	return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("%s%s of %s (%s) = %s", prefix, units.Bytes(v), units.Bytes(float64(in.MemoryBytes)), in.MemorySource, pct(r))}, true
}

// minCPUWindow is the shortest window whose CPU rate is graded: process CPU time
// comes in 10 ms clock ticks, ±2% of a core over one second.
const minCPUWindow = 1.0

// serverCPU is the member process's CPU utilisation over the window, as a fraction
// of its cores.
func serverCPU(in *Input) (float64, bool) {
	if !in.W.Usable() || in.Cores <= 0 {
		return 0, false
	}
	secs := in.seconds()
	d, ok := in.W.CounterDelta(metrics.CPUSeconds, nil)
	if !ok || secs < minCPUWindow {
		return 0, false
	}
	return d / secs / in.Cores, true
}

func serverCPURule(in *Input, lim Limits) Observation {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if _, ok := in.W.CounterDelta(metrics.CPUSeconds, nil); !ok {
		return unknown("%s absent", metrics.CPUSeconds)
	}
	if in.Cores <= 0 {
		if in.Unseen != "" {
			return unknown("the member's CPU count is unknown: %s, and it exposes no %s (give --cores)", in.Unseen, metrics.GoMaxProcs)
		}
		return unknown("the member's CPU count is unknown (give --cores)")
	}
	if in.seconds() <= 0 {
		return unknown("the window length is unknown (scrape times missing)")
	}
	if in.seconds() < minCPUWindow {
		return unknown("window of %.2f s is too short to measure CPU (process CPU time moves in 10 ms ticks)", in.seconds())
	}
	u, _ := serverCPU(in)
	d, _ := in.W.CounterDelta(metrics.CPUSeconds, nil)
	obs := fmt.Sprintf("%.1f CPU-s in %.1f s on %s cores (%s) = %s", d, in.seconds(), units.Trim(in.Cores), in.CoresSource, pct(u))
	if in.embedded() {
		obs += "; embedded: server and generator share the process"
	}
	sev := lim.Grade(u)
	if in.CoresAtMost && sev == finding.OK {
		// Busy against its GOMAXPROCS is busy; idle against it proves nothing,
		// since a CPU quota under GOMAXPROCS is not exposed.
		return unknown("%s; %s, and a CPU quota under its GOMAXPROCS does not show in its metrics (give --cores, or --prometheus with its container's cAdvisor series)", obs, in.Unseen)
	}
	return Observation{Severity: sev, Observed: obs}
}

// clientCPU is the generator's CPU utilisation over the run, with its core count.
// It is not known for an embedded target: the process's CPU time then covers the
// server too, and the cpu class grades the pair.
func clientCPU(in *Input) (float64, float64, bool) {
	r := in.Run
	if r == nil || in.embedded() || r.Client.CPUSeconds <= 0 || r.DurationS <= 0 {
		return 0, 0, false
	}
	// The host facts are the generator's own (its cgroup's CPU quota), and they
	// win when smaller: Go rounds a quota under 2 CPUs up to GOMAXPROCS 2, so a
	// generator throttled to 0.2 CPU would otherwise look 90% idle.
	cores := float64(r.Client.Cores)
	if hc := r.Host.EffectiveCPUs(); hc > 0 && (cores <= 0 || hc < cores) {
		cores = hc
	}
	if cores <= 0 {
		return 0, 0, false
	}
	return r.Client.CPUSeconds / r.DurationS / cores, cores, true
}

func clientCPURule(in *Input, lim Limits) Observation {
	if in.Run == nil || in.embedded() {
		return Observation{} // bare dumps have no generator; embedded: the cpu class grades both
	}
	u, cores, ok := clientCPU(in)
	if !ok {
		return unknown("the run does not record the generator's CPU time or cores")
	}
	obs := fmt.Sprintf("%.1f CPU-s in %.1f s on %s cores = %s", in.Run.Client.CPUSeconds, in.Run.DurationS, units.Trim(cores), pct(u))
	if w := in.Run.Client.CPUWaitS; w > 0 {
		// Measured, not graded: time the generator's threads were runnable and
		// waited for a CPU is in every latency it timed.
		obs += fmt.Sprintf("; its threads waited %.2f s for a CPU (schedstat run-queue delay), %s of their runnable time", w, pct(w/(w+in.Run.Client.CPUSeconds)))
	}
	return Observation{Severity: lim.Grade(u), Observed: obs}
}

// memberWaitRule grades how long a local member's threads waited for a CPU over
// the window (results.Member.CPUWaitS, their schedstat run-queue delay) beside
// the CPU time they used. The share of runnable time spent waiting is an M/M/1
// queue's utilisation ρ (its wait is ρ/(1−ρ) service times), so it fails at
// limCPU's fail level, where that work goes: only when work besides the members
// and the generator took more CPU than the member itself (a neighbour on its
// cores, which the host's PSI dilutes: the kernel weighs each CPU's pressure by
// its busy time, so a neighbour pinned to one CPU of two read 77-88%). It never
// warns: members and the generator sharing a host wait for each other at any
// load (a 2-core host running 3 or 5 members and the generator at a healthy
// rate: 66-78% of their runnable time, make truth's baselines), which the shared
// host CPU rule grades.
func memberWaitRule(in *Input, _ Limits) Observation {
	if in.Run == nil || in.W == nil {
		return Observation{}
	}
	m := memberOfWindow(in.Run, in.Members, in.W)
	if m == nil || m.CPUWaitS == nil {
		return Observation{}
	}
	d, ok := in.W.CounterDelta(metrics.CPUSeconds, nil)
	if !ok || *m.CPUWaitS+d <= 0 {
		return unknown("%s absent: the share of its runnable time is unknown", metrics.CPUSeconds)
	}
	share := *m.CPUWaitS / (*m.CPUWaitS + d)
	obs := fmt.Sprintf("its threads waited %.2f s for a CPU beside %.1f CPU-s used = %s of their runnable time", *m.CPUWaitS, d, pct(share))
	if b := in.Run.HostCPUBusy; b != nil {
		obs += fmt.Sprintf(", the host's CPUs busy %s", pct(*b))
	}
	if share < limCPU.Fail {
		return Observation{Severity: finding.OK, Observed: obs}
	}
	other, ok := othersCPU(in)
	if !ok || in.Run.Host == nil || in.seconds() < minCPUWindow {
		return Observation{Severity: finding.OK, Observed: obs + "; the CPU of work besides the members and the generator is unknown"}
	}
	others, own := other*float64(in.Run.Host.CPUs), d/in.seconds()
	if others < own {
		return Observation{Severity: finding.OK, Observed: obs + fmt.Sprintf("; work besides the members and the generator took %s cores, less than the member's %s: they wait for each other", units.Trim(others), units.Trim(own))}
	}
	return Observation{Severity: finding.Fail, Observed: obs + fmt.Sprintf("; work besides the members and the generator took %s cores, more than the member's own %s: other work takes its CPU", units.Trim(others), units.Trim(own))}
}

// openLoop reports whether any op had a target rate (a pacer ran).
func openLoop(in *Input) bool { return in.Run.Paced().TargetRPS > 0 }

func pacingRule(in *Input, lim Limits) Observation {
	if in.Run == nil || !openLoop(in) {
		return Observation{} // closed loop: no pacer
	}
	lag := in.Run.Client.PacingLagP99Ms
	if lag == 0 && in.Run.Client.PacingWakeups == 0 {
		// The pacer never slept (always behind, or a run file that did not keep
		// its lag): nothing was measured, which is not a lag of zero.
		return unknown("the pacer's lag was not measured")
	}
	return Observation{Severity: lim.Grade(lag), Observed: units.Duration(lag / 1000)}
}

// Late starts warn from lateMinor of the requests where the generator is shown
// busy, and from lateMajority whatever else is known: most of the load did not
// start on schedule.
const (
	lateMinor    = 0.01
	lateMajority = 0.5
)

// lateStartRule never fails: with a fixed worker pool, a slow server delays starts
// as surely as a slow generator does. Response time counts from the intended
// start, so a few late starts hide nothing; they warn when most requests started
// late, or where the generator itself is shown busy (its pacer lags or its CPU is
// at the warn level); otherwise they are a symptom of whatever slows the requests.
func lateStartRule(in *Input, _ Limits) Observation {
	if in.Run == nil || !openLoop(in) {
		return Observation{}
	}
	var late, reqs int64
	for _, op := range in.Run.Ops {
		late += op.LateStarts
		reqs += op.Requests
	}
	if reqs == 0 {
		return unknown("no requests")
	}
	r := float64(late) / float64(reqs)
	obs := fmt.Sprintf("%d of %d = %.1f%%", late, reqs, r*100)
	sev := finding.OK
	if r >= lateMinor {
		sev = finding.Warn
		u, _, cpuKnown := clientCPU(in)
		if r < lateMajority && in.Run.Client.PacingLagP99Ms < limPacerLag.Warn && (!cpuKnown || u < limCPU.Warn) {
			sev = finding.OK
			obs += "; the generator is not shown busy (pacer lag, CPU), so a symptom: response times count from the intended start and hide nothing"
		}
	}
	return Observation{Severity: sev, Observed: obs}
}

// requestErrorsRule fails on any failed request of the run, naming the codes:
// errors are the server's answer, so they fail the verdict (the run stays valid).
func requestErrorsRule(in *Input, lim Limits) Observation {
	if in.Run == nil || len(in.Run.Ops) == 0 {
		return Observation{}
	}
	var errs, reqs int64
	byCode := map[string]int64{}
	for _, op := range in.Run.Ops {
		errs += op.Errors
		reqs += op.Requests
		for c, n := range op.ErrorsByCode {
			byCode[c] += n
		}
	}
	if reqs == 0 {
		return unknown("no requests")
	}
	sev := lim.Grade(float64(errs))
	if sev == finding.OK {
		return Observation{Severity: sev, Observed: fmt.Sprintf("%d of %d", errs, reqs)}
	}
	codes := make([]string, 0, len(byCode))
	for c := range byCode {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if byCode[codes[i]] != byCode[codes[j]] {
			return byCode[codes[i]] > byCode[codes[j]]
		}
		return codes[i] < codes[j]
	})
	for i, c := range codes {
		codes[i] = fmt.Sprintf("%s %d", c, byCode[c])
	}
	return Observation{Severity: sev, Observed: fmt.Sprintf("%d of %d requests failed (%s)", errs, reqs, strings.Join(codes, ", "))}
}

// overMaxRule fails when a request (sent or charged unsent) took 60 s or more.
func overMaxRule(in *Input, lim Limits) Observation {
	if in.Run == nil || len(in.Run.Ops) == 0 {
		return Observation{}
	}
	var n int64
	for _, op := range in.Run.Ops {
		n += op.OverMaxLatency
	}
	sev := lim.Grade(float64(n))
	if sev == finding.OK {
		return Observation{Severity: sev, Observed: fmt.Sprintf("%d", n)}
	}
	return Observation{Severity: sev, Observed: fmt.Sprintf("%d requests took ≥ 60 s", n)}
}

// The rules below read the series of a member's host (node_exporter) and
// container (cAdvisor) that a Prometheus stored next to the member's own
// (Prometheus.Scrapes adds them): absent, they do not apply.

// throttleRule grades the share of the container's CFS periods in which it was
// throttled: the quota, not the machine, bounded the member's CPU.
func throttleRule(in *Input, lim Limits) Observation {
	if !in.W.Usable() {
		return Observation{}
	}
	periods, ok1 := in.W.CounterDelta(metrics.ContainerCFSPeriods, nil)
	throttled, ok2 := in.W.CounterDelta(metrics.ContainerThrottled, nil)
	if !ok1 || !ok2 {
		return Observation{}
	}
	if periods <= 0 {
		return unknown("no CFS period elapsed in the window (the container ran no quota-bound work)")
	}
	r := throttled / periods
	return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("throttled in %.0f of %.0f CFS periods = %s", throttled, periods, pct(r))}
}

// workingSetRule grades the container's peak working set against its memory
// limit: the kernel reclaims and then OOM-kills the container against that limit,
// and the kubelet evicts on the working set.
func workingSetRule(in *Input, lim Limits) Observation {
	if in.W == nil || in.W.Last() == nil {
		return Observation{}
	}
	ws, ok := in.W.GaugeMax(metrics.ContainerWorkingSet, nil)
	if !ok {
		return Observation{}
	}
	limit, ok := in.W.Gauge(metrics.ContainerMemLimit, nil)
	if !ok || limit <= 0 || limit >= noLimit {
		return unknown("working set %s; the container has no memory limit (%s is 0)", units.Bytes(ws), metrics.ContainerMemLimit)
	}
	r := ws / limit
	return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("working set %s of %s = %s", units.Bytes(ws), units.Bytes(limit), pct(r))}
}

// diskBusyRule grades the busiest block device of the member's host: the share
// of the window in which it had I/O in flight (iostat's %util). Which device
// holds the data dir is not in the series, so the busiest one is named.
func diskBusyRule(in *Input, lim Limits) Observation {
	if !in.W.Usable() || in.W.Last().Families[metrics.NodeDiskIOTime] == nil {
		return Observation{}
	}
	secs := in.seconds()
	if secs < minCPUWindow {
		return unknown("the window (%.2f s) is too short for a busy share", secs)
	}
	busiest, share := "", -1.0
	for _, dev := range in.W.Last().LabelValues(metrics.NodeDiskIOTime, "device") {
		d, ok := in.W.CounterDelta(metrics.NodeDiskIOTime, Labels{"device": dev})
		if ok && d/secs > share {
			busiest, share = dev, d/secs
		}
	}
	if share < 0 {
		return unknown("%s has no device series in the window", metrics.NodeDiskIOTime)
	}
	share = min(share, 1)
	return Observation{Severity: lim.Grade(share), Observed: fmt.Sprintf("%s busy %s of the window", busiest, pct(share))}
}

// hostPSIRule grades the share of the window in which some task of the member's
// host waited for the resource (PSI "some", as node_exporter exports it). It
// applies to a member that does not run here: this host's own PSI is graded by
// hostPressureRule.
func hostPSIRule(counter string) func(*Input, Limits) Observation {
	return func(in *Input, lim Limits) Observation {
		if !in.W.Usable() || in.W.Last().Families[counter] == nil || in.Unseen == "" {
			return Observation{}
		}
		secs := in.seconds()
		if secs < minCPUWindow {
			return unknown("the window (%.2f s) is shorter than the %g s a pressure share needs", secs, minCPUWindow)
		}
		d, ok := in.W.CounterDelta(counter, nil)
		if !ok {
			return unknown("%s absent", counter)
		}
		r := min(d/secs, 1)
		return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("some task of the member's host waited %s of the window", pct(r))}
	}
}
