package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Localization: which member the clients' slow requests and silences were on,
// from the requests each endpoint's load connection carried (results.Op.Members,
// results.Run.EndpointLoads).

// memberQuantile is the quantile the members' requests are compared at: the
// p99, as the run's own response time is graded.
const memberQuantile = 0.99

// A member's requests are slower than the others' when, at memberQuantile,
// they take memberSlowRatio times the others' (their upper median) and
// memberSlowFloorMs more; a failure needs memberFailRatio times and
// memberFailMs. etcdperf's own: the members of one cluster serve the same
// requests, every write through the same leader, so their times differ by a
// follower's extra round to the leader and by noise; twice the others' is more
// than both. The floor is etcd's p99 fdatasync (etcd FAQ: < 10 ms), the spread
// one member's disk may add to its requests and still be healthy; the failure
// is ten times the others' and past etcd's slow-request bound (100 ms, "apply
// request took too long"), a member its clients should be moved off.
const (
	memberSlowRatio   = 2.0
	memberSlowFloorMs = 10.0
	memberFailRatio   = 10.0
	memberFailMs      = 100.0
)

const srcMemberSlow = "etcdperf: the members of one cluster serve the same requests, so a member ≥ 2× slower than the others is the member, not the cluster; the floor is the etcd FAQ's p99 fdatasync (10 ms), the failure etcd's slow-request bound (100 ms, 'apply request took too long') at ≥ 10×"

// ruleMemberSlow localizes slow requests to the member that served them.
var ruleMemberSlow = Rule{Class: finding.ClassHealth, Signal: "requests by member: the slowest member's service p99 / the others' (run, lean transport)",
	Threshold: fmt.Sprintf("the others' is their upper median, each member with ≥ %d requests; warn: ≥ %s× and ≥ %s more; fail: ≥ %s× and ≥ %s",
		minSamples, units.Trim(memberSlowRatio), units.Duration(memberSlowFloorMs/1000), units.Trim(memberFailRatio), units.Duration(memberFailMs/1000)),
	Source: srcMemberSlow,
	Advice: "Requests served by one member are much slower than the others': look at that member's disk, CPU and link to the leader (its findings), and keep clients off it until it is fixed.",
	Eval:   memberSlowRule}

// ruleMemberStall names the member whose connection had a silence.
var ruleMemberStall = Rule{Class: finding.ClassStall, Signal: "longest span with no reply on one member's connection (run, lean transport)",
	Limits: &limStall, Source: srcStall,
	Advice: "One member answered nothing for half a second or more while its clients waited: the cause named (a defragmentation, a snapshot, a compaction pause, an election) or a frozen process (SIGSTOP, a VM pause, swap) or a blocked disk; move its clients to the others while it is looked at.",
	Eval:   memberStallRule}

// memberP99 is one member's requests at memberQuantile.
type memberP99 struct {
	endpoint string
	ms       float64
	n        int64
}

// memberP99s are the members' quantiles of the service time (from the send:
// the member's own, where the response time also holds the wait for a client
// that all members share) of the run's requests (every op but watch events),
// for members with minSamples requests or more.
func memberP99s(run *results.Run) []memberP99 {
	hs := map[string]*memberP99{}
	var order []string
	merged := map[string][]results.Hist{}
	for _, op := range run.Ops {
		if op.Events > 0 || op.Watchers > 0 {
			continue
		}
		for _, m := range op.Members {
			if hs[m.Endpoint] == nil {
				hs[m.Endpoint] = &memberP99{endpoint: m.Endpoint}
				order = append(order, m.Endpoint)
			}
			hs[m.Endpoint].n += m.Requests
			merged[m.Endpoint] = append(merged[m.Endpoint], m.ServiceHist)
		}
	}
	var out []memberP99
	for _, ep := range order {
		h := results.NewHist()
		for _, x := range merged[ep] {
			if d, err := x.Decode(); err == nil {
				h.Merge(d)
			}
		}
		if h.TotalCount() < minSamples {
			continue
		}
		p := hs[ep]
		p.ms = float64(h.ValueAtQuantile(memberQuantile*100)) / 1000
		out = append(out, *p)
	}
	return out
}

// slowServer is the member (its window name) whose own requests were graded
// slow against the others' by memberSlowRule; "" when none was. Its clients wait
// for it, so a resource of its that is slow is in their path, follower or not.
func slowServer(run *results.Run) string {
	if run == nil {
		return ""
	}
	slow, _, sev := slowestMember(memberP99s(run))
	if !sev.Bad() {
		return ""
	}
	return memberName(slow.endpoint)
}

// slowestMember is the member of ps whose requests were slowest, the others
// (fastest first), and its grade against their upper median; OK with fewer than
// two members.
func slowestMember(ps []memberP99) (memberP99, []memberP99, finding.Severity) {
	if len(ps) < 2 {
		return memberP99{}, nil, finding.OK
	}
	slow := slices.MaxFunc(ps, func(a, b memberP99) int { return cmp.Compare(a.ms, b.ms) })
	var others []memberP99
	for _, p := range ps {
		if p.endpoint != slow.endpoint {
			others = append(others, p)
		}
	}
	slices.SortFunc(others, func(a, b memberP99) int { return cmp.Compare(a.ms, b.ms) })
	base := others[len(others)/2].ms
	sev := finding.OK
	switch {
	case slow.ms >= memberFailRatio*base && slow.ms >= memberFailMs && slow.ms-base >= memberSlowFloorMs:
		sev = finding.Fail
	case slow.ms >= memberSlowRatio*base && slow.ms-base >= memberSlowFloorMs:
		sev = finding.Warn
	}
	return slow, others, sev
}

// memberSlowRule grades the slowest member's requests against the others'.
func memberSlowRule(in *Input, _ Limits) Observation {
	if in.Run == nil || len(in.Run.Ops) == 0 {
		return Observation{}
	}
	ps := memberP99s(in.Run)
	if len(ps) < 2 {
		if len(in.Run.Target.Endpoints) < 2 {
			return Observation{} // one endpoint: the run's own figures are that member's
		}
		return unknown("fewer than two members with %d requests or more of their own (the grpc transport does not say which member served a request)", minSamples)
	}
	slow, others, sev := slowestMember(ps)
	names := make([]string, len(others))
	for i, o := range others {
		names[i] = in.describe(memberName(o.endpoint))
	}
	obs := fmt.Sprintf("requests served by %s: service p99 %s (n=%d); %s: %s", in.describe(memberName(slow.endpoint)), units.Duration(slow.ms/1000), slow.n,
		joinAnd(names), othersP99(others))
	return Observation{Severity: sev, Observed: obs}
}

// othersP99 prints the others' p99s: one figure when they agree to the
// millisecond, else each.
func othersP99(others []memberP99) string {
	lo, hi := others[0].ms, others[len(others)-1].ms
	if hi-lo < 1 {
		return units.Duration(hi / 1000)
	}
	var parts []string
	for _, o := range others {
		parts = append(parts, units.Duration(o.ms/1000))
	}
	return strings.Join(parts, ", ")
}

// joinAnd joins names as prose: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// memberStallRule grades the longest silence on one member's connection, and
// says what caused it where etcd exposes it.
func memberStallRule(in *Input, lim Limits) Observation {
	if in.Run == nil || len(in.Run.EndpointLoads) < 2 {
		return Observation{} // none measured, or one endpoint: the run's own stall is its
	}
	var worst *results.EndpointLoad
	var rest []results.EndpointLoad
	for i, e := range in.Run.EndpointLoads {
		if e.Stall != nil && (worst == nil || e.Stall.Seconds > worst.Stall.Seconds) {
			worst = &in.Run.EndpointLoads[i]
		}
	}
	if worst == nil {
		return unknown("no request was timed per member")
	}
	longest := 0.0
	for _, e := range in.Run.EndpointLoads {
		if e.Endpoint != worst.Endpoint {
			rest = append(rest, e)
			if e.Stall != nil {
				longest = max(longest, e.Stall.Seconds)
			}
		}
	}
	st := worst.Stall
	who := in.describe(memberName(worst.Endpoint))
	obs := fmt.Sprintf("requests sent to %s had no reply for %s from +%.1f s (%s); the other %d member(s)' longest wait %s",
		who, units.Duration(st.Seconds), st.OffsetS, clock(st.At), len(rest), units.Duration(longest))
	sev := lim.Grade(st.Seconds)
	if sev.Bad() {
		obs += "; " + stallCause(in, worst.Endpoint, st)
	}
	return Observation{Severity: sev, Observed: obs}
}

// frozenMember names the member whose connection had no reply through most of
// the run's stall st while every other member's longest silence was under
// limStall: "on m2 host:port (...)"; "" when the run has no such member.
func frozenMember(in *Input, st *results.Stall) string {
	var frozen *results.EndpointLoad
	others := 0.0
	for i, e := range in.Run.EndpointLoads {
		if e.Stall == nil {
			continue
		}
		overlap := minTime(e.Stall.End(), st.End()).Sub(maxTime(e.Stall.At, st.At)).Seconds()
		if e.Stall.Seconds >= limStall.Fail && overlap >= st.Seconds/2 && frozen == nil {
			frozen = &in.Run.EndpointLoads[i]
			continue
		}
		others = max(others, e.Stall.Seconds)
	}
	if frozen == nil || others >= limStall.Fail || len(in.Run.EndpointLoads) < 2 {
		return ""
	}
	return fmt.Sprintf("on %s (its own requests had no reply for %s; the other members' longest wait %s)",
		in.describe(memberName(frozen.Endpoint)), units.Duration(frozen.Stall.Seconds), units.Duration(others))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// stallCause names what etcd exposed as a cause of a silence of the member at
// endpoint ("" for every member: a run's stall), from the scrapes that bracket
// it: a defragmentation, a snapshot save, a backend snapshot sent to a
// follower, a compaction pause, an election, a /metrics that stopped
// answering. Else "cause unknown", with what was seen.
func stallCause(in *Input, endpoint string, st *results.Stall) string {
	from, to := st.At, st.End()
	var causes, seen []string
	for _, w := range in.Members {
		if !in.isMember(w, endpoint) {
			continue
		}
		name := in.describe(w.Member)
		sw := spanWindow(w, from, to)
		if !sw.Usable() {
			seen = append(seen, fmt.Sprintf("no scrapes of %s bracket it", name))
			continue
		}
		seen = append(seen, fmt.Sprintf("%s scraped %s to %s", name, clock(sw.Snaps[0].Time), clock(sw.Last().Time)))
		if v, ok := sw.GaugeMax(metrics.DefragInflight, nil); ok && v > 0 {
			causes = append(causes, "a defragmentation on "+name+" ("+metrics.DefragInflight+" 1)")
		} else if h, ok := sw.HistDelta(metrics.DefragDuration, nil); ok && h.Count > 0 {
			causes = append(causes, fmt.Sprintf("a defragmentation on %s (%s: %.0f, %s)", name, metrics.DefragDuration, h.Count, units.Duration(h.Sum)))
		}
		if h, ok := sw.HistDelta(metrics.SnapSave, nil); ok && h.Count > 0 {
			causes = append(causes, fmt.Sprintf("a snapshot save on %s (%s: %.0f, %s)", name, metrics.SnapSave, h.Count, units.Duration(h.Sum)))
		}
		if h, ok := sw.HistDelta(metrics.BackendSnapshot, nil); ok && h.Count > 0 {
			causes = append(causes, fmt.Sprintf("a snapshot sent to a follower from %s (%s: %.0f, %s)", name, metrics.BackendSnapshot, h.Count, units.Duration(h.Sum)))
		}
		if h, ok := sw.HistDelta(metrics.CompactionPause, nil); ok && h.Count > 0 {
			causes = append(causes, fmt.Sprintf("compaction pauses on %s (%s: %.0f, %s in all)", name, metrics.CompactionPause, h.Count, units.Duration(h.Sum/1000)))
		}
	}
	elected := 0.0
	for _, w := range in.Members {
		if v, ok := spanWindow(w, from, to).Increases(metrics.LeaderChanges, nil); ok {
			elected = max(elected, v)
		}
	}
	if elected > 0 {
		causes = append(causes, fmt.Sprintf("an election (%s rose by %.0f)", metrics.LeaderChanges, elected))
	}
	for _, sc := range in.Run.Scrapes {
		at := parseTime(sc.Time)
		name := sc.Member
		if name == "" {
			name = memberName(sc.URL)
		}
		if sc.Error == "" || at.Before(from) || at.After(to.Add(time.Second)) || (endpoint != "" && !in.isMember(&Window{Member: name}, endpoint)) {
			continue
		}
		causes = append(causes, fmt.Sprintf("%s stopped answering /metrics (%s at %s)", in.describe(name), sc.Error, clock(at)))
		break
	}
	if len(causes) > 0 {
		return "cause: " + strings.Join(causes, "; ")
	}
	if len(seen) == 0 {
		return "cause unknown: no scrapes of the member"
	}
	return "cause unknown: no defragmentation, snapshot, compaction pause or election in its scrapes and none of them failed (" + strings.Join(seen, "; ") + ")"
}

// isMember says whether window w is the member at client endpoint; every
// window is when endpoint is "".
func (in *Input) isMember(w *Window, endpoint string) bool {
	if endpoint == "" {
		return true
	}
	if w.Member == memberName(endpoint) {
		return true
	}
	m := memberOf(in.Run, memberName(endpoint))
	return m != nil && memberOfWindow(in.Run, in.Members, w) == m
}

// spanWindow is w from its last scrape at or before from to its first at or
// after to: the scrapes that bracket the span; nil when none does on a side.
func spanWindow(w *Window, from, to time.Time) *Window {
	if w == nil {
		return nil
	}
	first, last := -1, -1
	for i, s := range w.Snaps {
		if !s.Time.After(from) {
			first = i
		}
		if last < 0 && !s.Time.Before(to) {
			last = i
		}
	}
	if first < 0 || last < 0 || last <= first {
		return nil
	}
	return &Window{Member: w.Member, Snaps: w.Snaps[first : last+1]}
}
