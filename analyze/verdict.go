package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"

	"github.com/etcdperf/etcdperf/results"
)

// verdict names the primary bottleneck whenever any class is at warn or fail
// (the status may still be pass), and "none" only when every class is ok or
// unknown. Status is fail when a class fails, invalid when the generator could not
// produce the load — unless a failing class explains why (a full quota refuses
// the writes: that is the cluster's answer, not a bad measurement).
func verdict(run *results.Run, fs []finding.Finding) finding.Verdict {
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	var unknowns []finding.Finding
	healthFail := false
	for _, f := range fs {
		switch {
		case f.Class.Context():
			if f.Severity == finding.Fail {
				healthFail = true
			}
		case f.Severity == finding.Unknown:
			unknowns = append(unknowns, f)
		}
	}
	ranked := Rank(fs)
	for _, f := range ranked {
		v.Ranked = append(v.Ranked, string(f.Class))
	}
	var fails, warns []finding.Finding
	for _, f := range ranked {
		if f.Severity == finding.Fail {
			fails = append(fails, f)
		} else {
			warns = append(warns, f)
		}
	}
	if len(ranked) > 0 {
		v.Bottleneck = string(ranked[0].Class)
	}
	if len(fails) > 0 || healthFail {
		v.Status = finding.StatusFail
	}
	invalid := run != nil && !run.Valid
	if len(fails) > 0 && fails[0].Class == finding.ClassClient {
		invalid = true
	}
	if invalid && len(fails) > 0 && fails[0].Class == finding.ClassQuota {
		invalid = false // the quota explains the missing load
	}
	// Requests held back (late or never sent) because every client waited on a
	// reply are the server's shortfall once a server class fails: 4 clients cannot carry 20 puts/s of
	// 1 MB values that each take 250 ms, and the value size says why. Without
	// such a class (2 clients at 100,000/s on a healthy member) they are the
	// generator's, and the run stays invalid.
	explained := invalid && run != nil && !run.Valid && heldBack(run) && len(fails) > 0 && !slices.ContainsFunc(fails, func(f finding.Finding) bool { return f.Class == finding.ClassClient })
	if explained {
		invalid = false
	}
	if invalid {
		v.Status = finding.StatusInvalid
	}

	var parts []string
	switch {
	case invalid && run != nil && !run.Valid && (len(fails) == 0 || fails[0].Class != finding.ClassClient):
		reason := run.InvalidReason
		if reason == "" {
			reason = "the run did not meet its measurement rules"
		}
		parts = append(parts, "invalid: "+reason)
	case invalid:
		parts = append(parts, "invalid: the load generator was saturated, so the run measured it rather than the server")
	case explained:
		parts = append(parts, fmt.Sprintf("fail: the rate was not kept (%s), and the failing %s explains it", run.InvalidReason, fails[0].Class))
	case v.Status == finding.StatusFail && len(fails) == 0:
		parts = append(parts, "fail: cluster health (no resource class found at fault)")
	case v.Status == finding.StatusPass:
		parts = append(parts, "pass: the cluster kept up; no signal over its fail threshold")
	}
	if len(ranked) > 0 {
		lead := fmt.Sprintf("bottleneck %s (%s%s) — %s", ranked[0].Class, ranked[0].Severity, shareText(ranked[0]), ranked[0].Summary)
		if v.Status == finding.StatusFail && len(fails) > 0 && !explained {
			lead = "fail: " + lead
		}
		parts = append(parts, lead)
		if len(fails) > 1 {
			parts = append(parts, "also failing: "+classList(fails[1:]))
		}
	}
	for _, f := range fs {
		if f.Class.Context() && f.Severity == finding.Fail {
			parts = append(parts, string(f.Class)+": "+f.Summary)
		}
	}
	if rest := without(warns, ranked); len(rest) > 0 {
		parts = append(parts, "warnings: "+classList(rest))
	}
	var risks []string
	for _, f := range fs {
		if f.Risk != "" {
			v.Risks = append(v.Risks, string(f.Class))
			risks = append(risks, fmt.Sprintf("%s (%s%s)", f.Class, f.Severity, shareText(f)))
		}
	}
	if len(risks) > 0 {
		parts = append(parts, "risks, not the bottleneck: "+strings.Join(risks, ", "))
	}
	if len(unknowns) > 0 {
		parts = append(parts, "not measured: "+classList(unknowns))
	}
	v.Summary = strings.Join(parts, "; ")
	return v
}

// without is fs minus the primary finding (already named as the bottleneck).
func without(fs, ranked []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if len(ranked) > 0 && f.Class == ranked[0].Class {
			continue
		}
		out = append(out, f)
	}
	return out
}

func shareText(f finding.Finding) string {
	if f.Share == nil {
		return ""
	}
	return fmt.Sprintf(", %s of the client %s", pct(*f.Share), f.ShareAt)
}

// Rank is the findings of fs at warn or fail, but the cluster-health context and
// the risks (Finding.Risk), in the order every verdict names them (analyze's, check's, plan's: the first
// is the bottleneck); fs is left as it was.
func Rank(fs []finding.Finding) []finding.Finding {
	var ranked []finding.Finding
	for _, f := range fs {
		if !f.Class.Context() && f.Severity.Bad() && f.Risk == "" {
			ranked = append(ranked, f)
		}
	}
	rankFindings(ranked)
	return ranked
}

// rankFindings orders the warn and fail classes: fail before warn; then a saturated
// generator first (it invalidates the rest); then the classes that cause latency
// elsewhere (quota, value and range size, CPU, memory: large values slow the WAL,
// a starved CPU slows every fsync) in class order; then the latency classes (disk,
// network) by the share of the client latency they explain in the budget, larger
// first; then what clients saw happen (stall, election, watch), which the
// resource classes before them explain when they fail too.
func rankFindings(fs []finding.Finding) {
	latency := func(c finding.Class) bool { return c == finding.ClassDisk || c == finding.ClassNetwork }
	pos := map[finding.Class]int{}
	for i, c := range finding.Classes {
		pos[c] = i
	}
	// group: 0 the causes, 1 the latency classes, 2 what clients saw happen
	// (a stall, an election, late watch events: the resources explain them).
	group := func(f finding.Finding) int {
		switch {
		case f.Class.Symptom():
			return 2
		case latency(f.Class):
			return 1
		}
		return 0
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if ga, gb := group(a), group(b); ga != gb {
			return ga < gb
		}
		if latency(a.Class) && a.Share != nil && b.Share != nil && *a.Share != *b.Share {
			return *a.Share > *b.Share
		}
		return pos[a.Class] < pos[b.Class]
	})
}

// riskShare: a class that explains less than a fifth of the client latency is
// not what held the clients back, whatever its severity: removing it entirely
// makes requests less than 1.25× faster (Amdahl's law). The same fifth from which
// the client round trip is named (netShareLargest).
const riskShare = netShareLargest

// shareOf sets the share of the client latency that the disk and the network
// explain in the budget, from measured parts only and at the quantile where the
// class is graded: the disk at p99 (the hardware guide's WAL fsync bound; the
// leader's fsync and the queueing behind it, no share while that queueing is
// unknown, since a saturated disk's wait lands there; a follower whose own
// requests were measured slow, slowServer, by its own fsync against its
// requests' p99), the network where its round trip was graded (the worst
// endpoint's PINGs through the load at p50 or p99, see pingWorst; the worst
// endpoint's read rounds at p99 where they are bad, see readRoundWorst; at p50
// the replication round too in a multi-member cluster; else the round trip
// measured before the load, at p50; unknown unless every part is measured).
func shareOf(fs []finding.Finding, b *finding.Budget, in *Input) {
	if b == nil {
		return
	}
	client := map[string]*float64{"p50": b.ClientP50Ms, "p99": b.ClientP99Ms}
	part := func(name, at string) (float64, bool) {
		for _, p := range b.Parts {
			v := p.P50Ms
			if at == "p99" {
				v = p.P99Ms
			}
			if p.Component == name && v != nil {
				return *v, true
			}
		}
		return 0, false
	}
	slow := slowServer(in.Run)
	for i := range fs {
		var v float64
		var ok bool
		at := "p50"
		switch fs[i].Class {
		case finding.ClassDisk:
			at = "p99"
			if s, ok := memberDiskShare(in, slow); ok && badOn(fs[i].Evidence, slow) {
				fs[i].Share, fs[i].ShareAt = &s, at
				continue
			}
			w, ok1 := part(finding.PartWAL, at)
			q, ok2 := part(finding.PartWALQueue, at)
			v, ok = w+q, ok1 && ok2
		case finding.ClassNetwork:
			r, okR := part(finding.PartReplication, at)
			if in.PeersKnown && in.Peers > 0 {
				// etcd samples peer RTT every 30 s, so the replication part is often
				// unknown or stale: the round measured through the endpoints counts
				// instead (see replicationRule), never the unexplained rest.
				if m, ok3 := replicationRound(in.Run); ok3 {
					r, okR = m, true
				}
			}
			// The read rounds are graded in the tail only: their share there,
			// where they are bad.
			round := -1.0
			if c, g := readRoundWorst(in, b); g.ok && c.Severity.Bad() {
				round = g.share
			}
			if ps := endpointPings(in.Run, b.Op); len(ps) > 0 {
				c, g := pingWorst(in, b, ps)
				switch {
				case g.at == "p99" && c.Severity.Bad():
					// Graded in the tail: the share there, from the PINGs alone.
					fs[i].Share, fs[i].ShareAt = ptr(max(g.share, round)), "p99"
				case round >= 0:
					fs[i].Share, fs[i].ShareAt = ptr(round), "p99"
				case g.at != "" && okR && b.ClientP50Ms != nil && *b.ClientP50Ms > 0:
					fs[i].Share, fs[i].ShareAt = ptr(min(g.share50 + r / *b.ClientP50Ms, 1)), "p50"
				}
				continue
			}
			if round >= 0 {
				fs[i].Share, fs[i].ShareAt = ptr(round), "p99"
				continue
			}
			n, ok1 := part(finding.PartNetwork, at)
			// Both parts measured, or the share is a lower bound that could
			// make a network the clients wait on look small.
			v, ok = n+r, ok1 && okR
		}
		if c := client[at]; ok && c != nil && *c > 0 {
			s := min(v / *c, 1)
			fs[i].Share, fs[i].ShareAt = &s, at
		}
	}
}

// memberDiskShare is the share of member's (a window name) own requests' p99
// that its WAL fsync p99 and the queueing behind it explain: the disk of a
// follower whose clients wait for it (slowServer) is graded against the
// requests it served, not the leader's path; ok false when either is unknown.
func memberDiskShare(in *Input, member string) (float64, bool) {
	if member == "" || in.Run == nil {
		return 0, false
	}
	var w *Window
	for _, m := range in.Members {
		if m.Member == member {
			w = m
		}
	}
	if w == nil {
		return 0, false
	}
	client := 0.0
	for _, p := range memberP99s(in.Run) {
		if memberName(p.endpoint) == member {
			client = p.ms
		}
	}
	_, wal := histMs(w, metrics.WALFsync)
	if wal == nil || client <= 0 {
		return 0, false
	}
	rest := max(client-*wal, 0)
	q := walQueuePart(w, in.Seconds, rest, rest)
	if q.P99Ms == nil {
		return 0, false
	}
	return min((*wal+*q.P99Ms)/client, 1), true
}

// markRisks sets Risk on the classes at warn or fail that cannot be what held the
// clients back: one whose measured share of the client latency is under
// riskShare, and a disk that only the host's fsync probe found slow while the
// members' own WAL fsyncs were within bounds (the probe measures the host's disk,
// the members measure what etcd waited for).
//
// The share is the leader's path; a class bad on slowMember (the member whose
// own requests were measured slow, slowServer), or through a follower's own link
// (offPath), is in some clients' path and is no risk by share.
func markRisks(fs []finding.Finding, slowMember string) {
	for i := range fs {
		f := &fs[i]
		if !f.Severity.Bad() || f.Class.Context() {
			continue
		}
		switch {
		case f.Share != nil && *f.Share < riskShare && !badOn(f.Evidence, slowMember) && !offPath(f.Evidence):
			f.Risk = fmt.Sprintf("explains %s of the client %s: under a fifth, so removing it would make requests less than 1.25× faster (Amdahl's law)", pct(*f.Share), f.ShareAt)
		case f.Class == finding.ClassDisk && probeOnly(f.Evidence):
			f.Risk = "only the fsync probe of this host found the disk slow; the members' own WAL fsyncs were within bounds, so a risk of the host, not what slowed the clients"
		}
	}
}

// offPathSignals are the evidence whose delay lies outside the budget's path to
// the leader: a follower's own link is paid by the clients connected through it,
// so the share of the leader's path cannot show it small.
var offPathSignals = []string{"follower link"}

// offPath reports whether bad evidence of a finding is off the budget's path.
func offPath(ev []finding.Evidence) bool {
	return slices.ContainsFunc(ev, func(e finding.Evidence) bool {
		return e.Severity.Bad() && slices.ContainsFunc(offPathSignals, func(p string) bool { return strings.HasPrefix(e.Signal, p) })
	})
}

// badOn reports whether evidence graded warn or fail on member (a window name).
func badOn(ev []finding.Evidence, member string) bool {
	return member != "" && slices.ContainsFunc(ev, func(e finding.Evidence) bool { return e.Member == member && e.Severity.Bad() })
}

// probeOnly reports whether the disk probe is the only bad disk evidence and the
// members' WAL fsyncs were graded ok.
func probeOnly(ev []finding.Evidence) bool {
	probe, walOK := false, false
	for _, e := range ev {
		switch {
		case strings.HasPrefix(e.Signal, "wal fsync") && e.Severity == finding.OK:
			walOK = true
		case strings.HasPrefix(e.Signal, "disk probe") && e.Severity.Bad():
			probe = true
		case e.Severity.Bad():
			return false
		}
	}
	return probe && walOK
}

func classList(fs []finding.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Class))
	}
	return strings.Join(s, ", ")
}

// heldBack reports whether requests of the run waited for a client: sent late
// or never sent because every client was waiting on a reply. (A pacer that woke
// late makes late starts too; the client class grades that, and its failing
// keeps the run invalid.)
func heldBack(run *results.Run) bool {
	for _, o := range run.Ops {
		if o.Unsent > 0 || o.LateStarts > 0 {
			return true
		}
	}
	return false
}
