package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Evidence is graded signal by signal; adjust then applies what one signal alone
// cannot know: where in the cluster it was seen, and what else was saturated.

// graded is one piece of evidence and the member window it was graded on (nil
// for run-wide evidence).
type graded struct {
	e   *finding.Evidence
	win *Window
}

// label names a member window for reading: its name when the run file lists it,
// the endpoint it was scraped at, and whether it led the cluster.
func (in *Input) label(w *Window) string {
	return finding.Evidence{Member: w.Member, MemberName: in.names[w.Member], Role: roleOf(w)}.Where()
}

// roleOf is "leader" or "follower" from the member's newest is_leader; "" when unknown.
func roleOf(w *Window) string {
	v, ok := w.Gauge(metrics.IsLeader, nil)
	switch {
	case !ok:
		return ""
	case v == 1:
		return "leader"
	}
	return "follower"
}

// isLeaderWindow reports whether the member's newest scrape says it leads.
func isLeaderWindow(w *Window) bool { return roleOf(w) == "leader" }

// followerRisk is what a capped follower finding says.
const followerRisk = "on a follower: not in every write's path while the other members keep quorum, so a risk rather than the clients' bottleneck — one more failure and every write waits for it"

// riskClasses are the per-member resource classes whose failure on a follower is a
// risk: raft commits once a quorum has the entry, so a slow follower is waited
// for only when it is needed for the quorum.
var riskClasses = []finding.Class{finding.ClassDisk, finding.ClassCPU, finding.ClassMemory}

// adjust caps follower findings to the risk they are, and does not let disk
// figures inflated by a starved CPU make the disk primary.
func adjust(evs map[finding.Class][]graded, in *Input) {
	settleStraddles(evs, in)
	capFollowers(evs, in)
	corroborateDisk(evs)
}

// capFollowers turns a fail on followers into a warning when the members left
// still form a quorum with the leader (at most n - quorum of them fail the signal)
// and the follower's own requests were not measured slow.
func capFollowers(evs map[finding.Class][]graded, in *Input) {
	n := len(in.Members)
	if n < 2 || in.Leader == nil || !isLeaderWindow(in.Leader) {
		return
	}
	spare := n - (n/2 + 1)
	// A follower whose own requests were measured slow is in its clients' path:
	// they wait for its apply, whatever the quorum does.
	slow := slowServer(in.Run)
	for _, cl := range riskClasses {
		failing := map[string]int{}
		for _, g := range evs[cl] {
			if g.win != nil && g.win != in.Leader && g.e.Severity == finding.Fail {
				failing[g.e.Signal]++
			}
		}
		for _, g := range evs[cl] {
			if g.win == nil || g.win == in.Leader || g.e.Severity != finding.Fail || failing[g.e.Signal] > spare || g.win.Member == slow {
				continue
			}
			g.e.Severity, g.e.Observed = finding.Warn, g.e.Observed+"; "+followerRisk
		}
	}
}

// inflatableDisk are the disk signals measured inside the server process: a member
// starved of CPU takes longer to finish each fsync and commit, so they inflate.
var inflatableDisk = []string{"wal fsync", "backend commit", "slow applies"}

// corroborateDisk: under CPU saturation (the member's own CPU or the host's at warn
// or fail) a disk signal measured inside the server does not make the disk the
// bottleneck unless an independent disk measurement (the disk probe of the run)
// agrees; the disk evidence is then capped at warn and says why, and the CPU,
// which outranks the disk at one severity, is named. Both causes give the same
// symptom: etcd's "apply request took too long" warning names a slow disk or an
// overloaded member (CPU), and fsync timings are taken by the starved process itself.
func corroborateDisk(evs map[finding.Class][]graded) {
	hostBusy := false
	busy := map[*Window]string{}
	unknownCPU := map[*Window]bool{}
	for _, g := range evs[finding.ClassCPU] {
		if g.win != nil && g.e.Severity == finding.Unknown && strings.HasPrefix(g.e.Signal, "server CPU") {
			unknownCPU[g.win] = true
		}
		if !g.e.Severity.Bad() {
			continue
		}
		if g.win == nil {
			hostBusy = true
			continue
		}
		busy[g.win] = g.e.Observed
	}
	for _, g := range evs[finding.ClassDisk] {
		if g.win == nil && g.e.Severity.Bad() {
			return // the probe agrees: the disk is slow whatever the CPU does
		}
	}
	for _, g := range evs[finding.ClassDisk] {
		if g.win == nil || g.e.Severity != finding.Fail || !inflatable(g.e.Signal) {
			continue
		}
		cpu, own := busy[g.win]
		if !own && !hostBusy {
			if unknownCPU[g.win] {
				g.e.Observed += "; the member's CPU is not known, and a starved CPU inflates these figures too"
			}
			continue
		}
		why := "the host's CPU is saturated"
		if own {
			why = "the member's CPU is saturated (" + cpu + ")"
		}
		g.e.Severity = finding.Warn
		g.e.Observed += fmt.Sprintf("; inflated: %s and no independent disk measurement agrees (probe the data dir with `etcdperf disk`)", why)
	}
}

func inflatable(signal string) bool {
	for _, p := range inflatableDisk {
		if strings.HasPrefix(signal, p) {
			return true
		}
	}
	return false
}

// settleStraddles grades a WAL fsync p99 whose bucket straddles the threshold
// from the light fsync probe that ran on the member's filesystem during the same
// load, which measures to the microsecond what the bucket cannot tell.
func settleStraddles(evs map[finding.Class][]graded, in *Input) {
	for _, g := range evs[finding.ClassDisk] {
		if g.win == nil || !strings.HasPrefix(g.e.Signal, "wal fsync") || !strings.Contains(g.e.Observed, StraddleNote) {
			continue
		}
		d := inLoadProbe(in, g.win)
		if d == nil || d.SyncP99() <= 0 {
			continue
		}
		g.e.Severity = limWAL.Grade(d.SyncP99() / 1000)
		g.e.Observed += fmt.Sprintf("; settled by the fsync probe of its filesystem during the load: p99 %s (n=%d)", units.Duration(d.SyncP99()/1000), d.Fdatasyncs)
		if note := d.WaitNote(); note != "" {
			g.e.Observed += ", " + note
		}
	}
}

// inLoadProbe is the light probe that ran during the load on the filesystem of
// the member scraped as w; nil when none did.
func inLoadProbe(in *Input, w *Window) *results.DiskResult {
	if in.Run == nil {
		return nil
	}
	name := in.names[w.Member]
	if m := memberOf(in.Run, w.Member); name == "" && m != nil {
		name = m.Name
	}
	var only *results.DiskResult
	n := 0
	for i, d := range in.Run.Disk {
		if d.IntervalMs <= 0 || d.Member == "" {
			continue
		}
		if name != "" && (d.Member == name || slices.Contains(d.SharedWith, name)) {
			return &in.Run.Disk[i]
		}
		only, n = &in.Run.Disk[i], n+1
	}
	if n == 1 && len(in.Members) == 1 {
		return only // one member, one probe: its metrics URL need not be its client URL
	}
	return nil
}
