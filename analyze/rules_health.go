package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// hasLeaderRule fails when any scrape of the member saw no leader.
func hasLeaderRule(in *Input, _ Limits) Observation {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	seen, without := 0, 0
	for _, s := range in.W.Snaps {
		v, ok := s.Value(metrics.HasLeader, nil)
		if !ok {
			continue
		}
		seen++
		if v == 0 {
			without++
		}
	}
	if seen == 0 {
		return unknown("%s absent", metrics.HasLeader)
	}
	if without > 0 {
		return Observation{Severity: finding.Fail, Observed: fmt.Sprintf("no leader in %d of %d scrapes", without, seen)}
	}
	return Observation{Severity: finding.OK, Observed: fmt.Sprintf("leader present in all %d scrapes", seen)}
}

func quotaRule(in *Input, lim Limits) Observation {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	r, ok := quotaShare(in.W)
	if !ok {
		return unknown("%s or %s absent", metrics.DBTotal, metrics.Quota)
	}
	db, _ := in.W.GaugeMax(metrics.DBTotal, nil)
	quota, _ := in.W.Gauge(metrics.Quota, nil)
	return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("%s of %s = %s", units.Bytes(db), units.Bytes(quota), pct(r))}
}

// FragMinInUse is the db size in use up to which fragmentation is not graded:
// a small db defragments in moments whatever its share of free pages.
const FragMinInUse = 100 * mib

// fragRule warns when less than half of a large db is in use: the rest is free pages
// that only a defragmentation returns.
func fragRule(in *Input, lim Limits) Observation {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	total, ok1 := in.W.Gauge(metrics.DBTotal, nil)
	inUse, ok2 := in.W.Gauge(metrics.DBInUse, nil)
	if !ok1 || !ok2 || total <= 0 {
		return unknown("%s or %s absent", metrics.DBInUse, metrics.DBTotal)
	}
	r := inUse / total
	obs := fmt.Sprintf("%s of %s in use = %.2f", units.Bytes(inUse), units.Bytes(total), r)
	if inUse <= FragMinInUse {
		return Observation{Severity: finding.OK, Observed: obs}
	}
	return Observation{Severity: lim.Grade(r), Observed: obs}
}

func dbSizeRule(in *Input, lim Limits) Observation {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	db, ok := in.W.GaugeMax(metrics.DBTotal, nil)
	if !ok {
		return unknown("%s absent", metrics.DBTotal)
	}
	return Observation{Severity: lim.Grade(db), Observed: units.Bytes(db)}
}

// probeRule grades the fdatasync p99 of the disk probes in the run, when any ran.
func probeRule(in *Input, lim Limits) Observation {
	if in.Run == nil || len(in.Run.Disk) == 0 {
		return Observation{}
	}
	worst := Observation{Severity: finding.Unknown, Observed: "no probe recorded fdatasync latencies"}
	worstMs := -1.0
	for _, d := range in.Run.Disk {
		p99 := d.SyncP99()
		if p99 <= 0 || p99 <= worstMs {
			continue
		}
		worstMs = p99
		obs := fmt.Sprintf("%s pattern on %s: %s", d.Pattern, d.Dir, units.Duration(p99/1000))
		if d.IntervalMs > 0 {
			obs = fmt.Sprintf("%s pattern on the filesystem of %s's data dir during the load, one fdatasync every %s: p99 %s (n=%d)",
				d.Pattern, d.Member, units.Duration(d.IntervalMs/1000), units.Duration(p99/1000), d.Fdatasyncs)
		}
		if note := d.WaitNote(); note != "" {
			obs += ", " + note
		}
		worst = Observation{Severity: gradeProbe(d, lim, &obs), Observed: obs}
	}
	return worst
}

// limStall fails a run in which a member answered nothing for as long as etcd's
// default election timeout: a follower that hears nothing from its leader that
// long starts an election, so a silence that long is one etcd itself treats as
// a lost member, not as latency. It warns from etcdctl check perf's bound on
// the slowest request (500 ms): a silence that long already fails that check.
var limStall = Limits{Warn: stallWarnSeconds, Fail: results.StallSeconds, Unit: UnitSeconds}

// stallWarnSeconds is etcdctl check perf's bound on the slowest request.
const stallWarnSeconds = 0.5

const srcStall = "etcd docs (tuning.md: the default election timeout is 1000 ms — how long a follower waits without hearing from the leader before it starts an election); etcdctl check perf (fails a run whose slowest request took over 500 ms)"

// stallRule grades the longest span of the run in which a request waited and no
// reply came (results.Run.Stall): when it began (offset in the window and wall
// clock), how long it lasted and which member it was.
func stallRule(in *Input, lim Limits) Observation {
	if in.Run == nil || len(in.Run.Ops) == 0 {
		return Observation{}
	}
	st := in.Run.Stall
	if st == nil {
		return unknown("not measured (a run file from before etcdperf measured stalls, or no request was timed)")
	}
	obs := fmt.Sprintf("no reply for %s from +%.1f s (%s)", units.Duration(st.Seconds), st.OffsetS, clock(st.At))
	if who := stalledMember(in, st); who != "" {
		obs += " " + who
	}
	if cost, ok := clientCost(in.Run, st.At, st.End()); ok && lim.Grade(st.Seconds) != finding.OK {
		obs += "; " + cost.String()
	}
	if lim.Grade(st.Seconds).Bad() {
		obs += "; " + stallCause(in, "", st)
	}
	return Observation{Severity: lim.Grade(st.Seconds), Observed: obs}
}

// clock is a wall-clock time as the findings print it.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") + " UTC" }

// stalledMember says which member the clients waited on: the one whose own
// requests had no reply through the span while the others' had (see
// frozenMember), else the one whose /metrics scrape waited through the span or
// failed in it, else the run's only endpoint, else every endpoint (with the
// leader, on which every write waits).
func stalledMember(in *Input, st *results.Stall) string {
	if who := frozenMember(in, st); who != "" {
		return who
	}
	from, to := st.At, st.End()
	var order []string
	why := map[string][]string{}
	for _, sc := range in.Run.Scrapes {
		at := parseTime(sc.Time)
		if at.IsZero() {
			continue
		}
		name := sc.Member
		if name == "" {
			name = memberName(sc.URL)
		}
		half := time.Duration(sc.Seconds * float64(time.Second) / 2)
		start, end := at.Add(-half), at.Add(half)
		var w string
		switch {
		case sc.Error != "" && !end.Before(from) && !start.After(to):
			w = fmt.Sprintf("its /metrics failed at %s: %s", clock(at), sc.Error)
		case sc.Error == "" && !start.Before(from) && start.Before(to) && end.Sub(start) >= to.Sub(start)/2:
			// Asked during the span, and waited through most of what was left of it.
			w = fmt.Sprintf("its /metrics, asked at %s, answered only at %s", clock(start), clock(end))
		default:
			continue
		}
		if len(why[name]) == 0 {
			order = append(order, name)
		}
		why[name] = append(why[name], w)
	}
	var named []string
	for _, name := range order {
		s := in.describe(name) + " (" + why[name][0]
		if n := len(why[name]) - 1; n > 0 {
			s += fmt.Sprintf("; %d more scrape(s) of it failed or waited", n)
		}
		named = append(named, s+")")
	}
	switch {
	case len(named) > 0:
		return "on " + strings.Join(named, "; ")
	case len(in.Run.Target.Endpoints) == 1:
		return "on " + in.describe(memberName(in.Run.Target.Endpoints[0])) + ", the only endpoint"
	case in.Leader != nil && len(in.Members) > 1:
		return fmt.Sprintf("on every client of %d endpoints; the leader, on which every write waits, was %s", len(in.Run.Target.Endpoints), in.describe(in.Leader.Member))
	}
	return ""
}

// describe names a member window: its name in the run file and host:port.
func (in *Input) describe(window string) string {
	if n := in.names[window]; n != "" {
		return n + " " + window
	}
	if in.Run != nil {
		if m := memberOf(in.Run, window); m != nil && m.Name != "" {
			return m.Name + " " + window
		}
	}
	return window
}

func uniq(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// spanCost is what the clients saw in a span of the run: the requests due in
// its seconds (sent and held back), their errors and response p99, and the
// run's p99 beside them.
type spanCost struct {
	from, to      time.Time
	reqs, errs    int64
	p99Ms, runP99 float64
}

// clientCost sums the run's per-second intervals that overlap from..to; false
// when no request fell in them.
func clientCost(run *results.Run, from, to time.Time) (spanCost, bool) {
	c := spanCost{from: from, to: to}
	h := results.NewHist()
	for _, op := range run.Ops {
		if op.Events > 0 || op.Watchers > 0 {
			continue // watch events are not requests
		}
		c.runP99 = max(c.runP99, op.Latency.P99)
		for _, iv := range op.Intervals {
			if iv.Start.Add(time.Second).Before(from) || iv.Start.After(to) {
				continue
			}
			c.reqs += iv.Requests + iv.Unsent
			c.errs += iv.Errors
			if iv.Response == "" {
				continue
			}
			if ih, err := iv.Response.Decode(); err == nil {
				h.Merge(ih)
			}
		}
	}
	if c.reqs == 0 {
		return c, false
	}
	c.p99Ms = results.Summarize(h).P99
	return c, true
}

func (c spanCost) String() string {
	return fmt.Sprintf("clients in %s..%s: %d requests, %d errors, response p99 %s (run p99 %s)",
		c.from.UTC().Format("15:04:05"), c.to.UTC().Add(time.Second-1).Format("15:04:05"), c.reqs, c.errs, units.Ms(c.p99Ms), units.Ms(c.runP99))
}

// felt: the clients paid for the span past what etcd calls a healthy request,
// with errors or with responses slower than etcd's slow-request bound.
func (c spanCost) felt() bool { return c.errs > 0 || c.p99Ms >= slowRequestMs }

// slowRequestMs is etcd's expected request duration: past it the server logs
// "request took too long" (etcd server, warnApplyDuration 100 ms).
const slowRequestMs = 100.0

// mixinLeaderChanges per mixinLeaderWindow: the etcd mixin's
// etcdHighNumberOfLeaderChanges alert (increase over 15 minutes ≥ 4).
const (
	mixinLeaderChanges = 4
	mixinLeaderWindow  = 15 * time.Minute
)

// leaderChanges is the most leader changes any member counted in the window
// (a restarted member's counter starting over is none); known false when no
// member's counter was read.
func leaderChanges(in *Input) (most float64, known bool) {
	for _, w := range in.Members {
		if d, ok := w.Increases(metrics.LeaderChanges, nil); ok {
			most, known = max(most, d), true
		}
	}
	return most, known
}

// leaderChangesRule grades the leader changes of the window, the most any member
// counted (each counts the changes it saw; a restarted member's counter starts
// over, which is no change), with their timeline from the scrapes during the run
// (which member led at each) and what the clients saw meanwhile. A change the
// clients did not feel is a warning (a planned transfer, as a rolling restart
// makes); it fails when the clients paid for it (errors, a stall, responses past
// etcd's slow-request bound in its span) or at the etcd mixin's rate.
func leaderChangesRule(in *Input, _ Limits) Observation {
	most, known := leaderChanges(in)
	if !known {
		if len(in.Members) == 0 {
			return unknown("no /metrics scrape of the members")
		}
		if c, ok := needWindow(in.Members[0]); !ok {
			return c
		}
		return unknown("%s absent", metrics.LeaderChanges)
	}
	if most == 0 {
		return Observation{Severity: finding.OK, Observed: "0"}
	}
	obs := fmt.Sprintf("%.0f", most)
	tl, felt := leaderTimeline(in)
	if tl != "" {
		obs += ": " + tl
	}
	// The mixin's rate over the window, and never fewer than its count: a run
	// shorter than 15 minutes fails at 4.
	span := in.Members[0].Last().Time.Sub(in.Members[0].Snaps[0].Time)
	rate := mixinLeaderChanges * max(1, span.Seconds()/mixinLeaderWindow.Seconds())
	switch {
	case most >= rate:
		return Observation{Severity: finding.Fail, Observed: obs + fmt.Sprintf("; at the etcd mixin's alerting rate (%d in %s)", mixinLeaderChanges, units.Duration(mixinLeaderWindow.Seconds()))}
	case felt:
		return Observation{Severity: finding.Fail, Observed: obs + "; the clients paid for it"}
	case in.Run == nil:
		return Observation{Severity: finding.Warn, Observed: obs + "; what the clients saw is not known (no run file)"}
	}
	return Observation{Severity: finding.Warn, Observed: obs + fmt.Sprintf("; the clients saw no error, no stall and no response past etcd's %s slow-request bound", units.Duration(slowRequestMs/1000))}
}

// leaderTimeline lists, from consecutive scrapes, where the leadership moved or
// was lost, and what the clients saw in each such span; felt when they paid
// for one (see spanCost.felt, and a stall as long as the election timeout).
func leaderTimeline(in *Input) (timeline string, felt bool) {
	type change struct {
		from, to time.Time
		what     []event
	}
	var changes []*change
	at := func(from, to time.Time) *change {
		for _, c := range changes {
			if !c.to.Before(from) && !to.Before(c.from) { // overlapping spans are one change
				c.from, c.to = minT(c.from, from), maxT(c.to, to)
				return c
			}
		}
		c := &change{from: from, to: to}
		changes = append(changes, c)
		return c
	}
	for _, w := range in.Members {
		for i := 1; i < len(w.Snaps); i++ {
			a, b := w.Snaps[i-1], w.Snaps[i]
			if a.Time.IsZero() || b.Time.IsZero() {
				continue
			}
			ca, ok1 := a.Value(metrics.LeaderChanges, nil)
			cb, ok2 := b.Value(metrics.LeaderChanges, nil)
			la, _ := a.Value(metrics.IsLeader, nil)
			lb, _ := b.Value(metrics.IsLeader, nil)
			hb, hok := b.Value(metrics.HasLeader, nil)
			// One item per member, ranked so the timeline reads in order: who
			// lost the leadership, who took it, who was left without one, who
			// only saw it change.
			var what []event
			switch {
			case la == 1 && lb == 0:
				what = append(what, event{0, w.Member, in.describe(w.Member) + " lost the leadership"})
			case la == 0 && lb == 1:
				what = append(what, event{1, w.Member, in.describe(w.Member) + " became leader"})
			case hok && hb == 0:
				what = append(what, event{2, w.Member, in.describe(w.Member) + " had no leader"})
			case ok1 && ok2 && cb > ca:
				what = append(what, event{3, w.Member, fmt.Sprintf("%s saw %.0f change(s)", in.describe(w.Member), cb-ca)})
			}
			if len(what) > 0 {
				c := at(a.Time, b.Time)
				c.what = append(c.what, what...)
			}
		}
	}
	slices.SortFunc(changes, func(a, b *change) int { return a.from.Compare(b.from) })
	var parts []string
	for _, c := range changes {
		slices.SortStableFunc(c.what, func(a, b event) int { return a.rank - b.rank })
		var what, seen []string
		for _, e := range c.what {
			if !slices.Contains(seen, e.who) { // a member's first (most telling) item
				what, seen = append(what, e.text), append(seen, e.who)
			}
		}
		p := fmt.Sprintf("between %s and %s%s %s", clock(c.from), clock(c.to), offsetText(in.Run, c.from), strings.Join(uniq(what), ", "))
		if in.Run != nil {
			if st := in.Run.Stall; st != nil && st.Seconds >= limStall.Fail && !st.At.After(c.to) && !st.End().Before(c.from) {
				p += fmt.Sprintf("; in it the clients had no reply for %s from %s", units.Duration(st.Seconds), clock(st.At))
				felt = true
			}
			if cost, ok := clientCost(in.Run, c.from, c.to); ok {
				p += " (" + cost.String() + ")"
				felt = felt || cost.felt()
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; "), felt
}

// event is one line of a leader change, ranked for reading.
type event struct {
	rank int
	who  string
	text string
}

// offsetText is t as an offset into the run's measured window, " (+12.3 s)", or "".
func offsetText(run *results.Run, t time.Time) string {
	if run == nil || run.StartedAt.IsZero() {
		return ""
	}
	return fmt.Sprintf(" (+%.1f s)", max(t.Sub(run.StartedAt).Seconds()-run.WarmupS, 0))
}

func minT(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxT(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// lostMemberRule fails a run in which a member stopped answering its /metrics
// before the run ended: it names the member, when it was last seen, what its
// last good scrape said (leader, db size against the quota) and the error of
// the first scrape that failed. What the run measured until then is kept.
func lostMemberRule(in *Input, _ Limits) Observation {
	if in.Run == nil || len(in.Run.Scrapes) == 0 {
		return Observation{}
	}
	type state struct {
		last     *results.Scrape // last good scrape
		firstErr *results.Scrape // first failure after it
	}
	byMember := map[string]*state{}
	var order []string
	for i := range in.Run.Scrapes {
		sc := &in.Run.Scrapes[i]
		name := sc.Member
		if name == "" {
			name = memberName(sc.URL)
		}
		st := byMember[name]
		if st == nil {
			st = &state{}
			byMember[name] = st
			order = append(order, name)
		}
		switch {
		case sc.Error == "":
			st.last, st.firstErr = sc, nil
		case st.firstErr == nil:
			st.firstErr = sc
		}
	}
	var lost []string
	for _, name := range order {
		st := byMember[name]
		if st.firstErr == nil || st.last == nil {
			continue // answered to the end, or never (a scrape problem the notes say)
		}
		s := fmt.Sprintf("%s stopped answering after %s%s: %s", in.describe(name), clock(parseTime(st.last.Time)),
			offsetText(in.Run, parseTime(st.last.Time)), st.firstErr.Error)
		if said := lastSaid(st.last); said != "" {
			s += "; its last scrape said " + said
		}
		lost = append(lost, s)
	}
	if len(lost) == 0 {
		return Observation{Severity: finding.OK, Observed: "every member answered its /metrics to the end of the run"}
	}
	return Observation{Severity: finding.Fail, Observed: strings.Join(lost, "; ")}
}

// lastSaid is what a member's last good scrape says of its state.
func lastSaid(sc *results.Scrape) string {
	s, err := Parse(sc.Text)
	if err != nil {
		return ""
	}
	var parts []string
	if v, ok := s.Value(metrics.HasLeader, nil); ok {
		parts = append(parts, fmt.Sprintf("has leader %.0f", v))
	}
	if v, ok := s.Value(metrics.IsLeader, nil); ok && v == 1 {
		parts = append(parts, "it led")
	}
	db, ok1 := s.Value(metrics.DBTotal, nil)
	quota, ok2 := s.Value(metrics.Quota, nil)
	if ok1 && ok2 && quota > 0 {
		parts = append(parts, fmt.Sprintf("db %s of %s quota", units.Bytes(db), units.Bytes(quota)))
	}
	if v, ok := s.Value(metrics.RSS, nil); ok {
		parts = append(parts, "RSS "+units.Bytes(v))
	}
	return strings.Join(parts, ", ")
}

// limPerThousand grades events etcd warns about one at a time (a slow apply, a
// failed send to a peer) as a rate per 1,000 of the run's requests: at 10 per
// 1,000 (1%) they reach the p99 the verdict grades. Below it they are no
// pattern, and even above it they make a warning only together with another
// signal of their class (see rareEventRule): one event alone never names a
// bottleneck.
var limPerThousand = Limits{Warn: 10, Fail: math.Inf(1), Unit: UnitCount, Note: "per 1,000 requests, and only with another signal of the class"}

const (
	srcSlowApply = "etcd server warning 'apply request took too long' (expected-duration 100 ms; etcd_server_slow_apply_total: 'likely overloaded from slow disk', server/etcdserver/txn); etcdperf: 10 per 1,000 reach the p99, and one event alone is a hiccup"
	srcPeerFail  = "etcd server warning on a failed or dropped peer message ('sending buffer is full', etcd_network_peer_sent_failures_total, server/etcdserver/api/rafthttp); etcdperf: 10 per 1,000 reach the p99, and one event alone is a hiccup"
)

// rareEventRule grades the growth of counter as a rate per 1,000 of the run's
// requests, with the count as context. A rate at the warning level warns only
// when agree names another signal of the class that is at warn or fail on the
// same member; otherwise it stays ok and says so (see corroborated).
func rareEventRule(counter string, agree func(*Input) string) func(*Input, Limits) Observation {
	return func(in *Input, lim Limits) Observation {
		if c, ok := needWindow(in.W); !ok {
			return c
		}
		d, ok := in.W.CounterDelta(counter, nil)
		if !ok {
			if in.W.Last().IsEtcd() {
				return Observation{Severity: finding.OK, Observed: "0 (no event recorded)"} // etcd creates the series on the first event
			}
			return unknown("%s absent", counter)
		}
		if d == 0 {
			return Observation{Severity: finding.OK, Observed: "0"}
		}
		reqs := runRequests(in.Run)
		if reqs == 0 {
			// Bare dumps: no request count, so no rate; still never a bottleneck alone.
			obs := fmt.Sprintf("%.0f (no request count: not a rate)", d)
			return corroborated(Observation{Severity: finding.Warn, Observed: obs}, agree(in))
		}
		rate := d / float64(reqs) * 1000
		obs := fmt.Sprintf("%.0f in %d requests = %s per 1,000", d, reqs, units.Trim(rate))
		sev := lim.Grade(rate)
		if sev == finding.OK {
			return Observation{Severity: finding.OK, Observed: obs + ": under the p99, not a pattern"}
		}
		return corroborated(Observation{Severity: sev, Observed: obs}, agree(in))
	}
}

// corroborated keeps c's warning or failure only together with why, another
// signal of its class at warn or fail on the same member, which it names as
// context; without one, c is ok and says so. A signal that other causes give
// too (a slow apply, a failed peer send, a slow range) names its class only
// with a signal that only that class gives.
func corroborated(c Observation, why string) Observation {
	if c.Severity != finding.Warn && c.Severity != finding.Fail {
		return c
	}
	if why == "" {
		return Observation{Severity: finding.OK, Observed: c.Observed + "; no other signal agrees: alone, not a bottleneck"}
	}
	return Observation{Severity: c.Severity, Observed: c.Observed + "; with " + why}
}

// runRequests counts the run's requests (watch events are not requests).
func runRequests(run *results.Run) int64 {
	if run == nil {
		return 0
	}
	var n int64
	for _, op := range run.Ops {
		n += op.Requests + op.Unsent
	}
	return n
}

// diskAgrees names the WAL fsync or backend commit p99 of the member when it
// is at warn or fail: what makes slow applies a disk pattern.
func diskAgrees(in *Input) string {
	for _, r := range []struct {
		name   string
		metric string
		lim    Limits
	}{{"wal fsync p99", metrics.WALFsync, limWAL}, {"backend commit p99", metrics.BackendCommit, limBackend}} {
		if c := histRule(r.metric, nil, 0.99)(in, r.lim); c.Severity == finding.Warn || c.Severity == finding.Fail {
			return r.name + " " + c.Observed
		}
	}
	return ""
}

// networkAgrees names the member's peer round trip p99 or heartbeat send
// failures when they are bad: what makes failed peer sends a network pattern.
func networkAgrees(in *Input) string {
	if c := peerRTTRule(in, limPeerRTT); c.Severity == finding.Warn || c.Severity == finding.Fail {
		return "peer round trip p99 " + c.Observed
	}
	if d, ok := in.W.CounterDelta(metrics.HeartbeatFailures, nil); ok && d > 0 {
		return fmt.Sprintf("%.0f heartbeat send failures", d)
	}
	return ""
}

// gradeProbe grades a probe's fdatasync p99 against lim, as gradeHist grades a
// histogram: a probe of fewer than minSamples fdatasyncs (a light probe over a
// short run) warns or fails only when at least minSlow of them, counted exactly
// in its histogram, exceed the threshold; one hiccup is not a pattern.
//
// A probe of more is graded by the bounds of its p99 (boundedGrade), so a disk
// whose p99 sits within its own sampling noise of a threshold reads the same
// run after run.
func gradeProbe(d results.DiskResult, lim Limits, obs *string) finding.Severity {
	sev := lim.Grade(d.SyncP99() / 1000)
	h, err := d.SyncHistGraded().Decode()
	if err != nil || h.TotalCount() == 0 {
		return sev
	}
	if d.Fdatasyncs >= minSamples {
		lo, hi := quantileBounds(h, 0.99)
		b, straddles := boundedGrade(lim, lo/1e6, hi/1e6)
		if straddles {
			*obs += fmt.Sprintf("; its 95%% interval %s–%s (n=%d) straddles a threshold: graded %s by its bounds", units.Duration(lo/1e6), units.Duration(hi/1e6), h.TotalCount(), b)
			return b
		}
		return sev
	}
	if sev == finding.OK {
		return sev
	}
	over := func(sec float64) (n int64) {
		for _, bar := range h.Distribution() {
			if float64(bar.From) >= sec*1e6 {
				n += bar.Count
			}
		}
		return n
	}
	for _, t := range []struct {
		sev finding.Severity
		at  float64
	}{{finding.Fail, lim.Fail}, {finding.Warn, lim.Warn}} {
		if n := over(t.at); n >= minSlow && t.sev.Rank() <= sev.Rank() {
			return t.sev
		}
	}
	*obs += fmt.Sprintf("; fewer than %d fdatasyncs and under %d above %s: a hiccup, not a pattern", minSamples, minSlow, units.Duration(lim.Warn))
	return finding.OK
}

// quantileBounds is a distribution-free 95% confidence interval of quantile q of
// the samples in h (µs): the values at the order statistics n·q ∓ 1.96·√(n·q·(1−q))
// (the normal approximation to the binomial count of samples under the true
// quantile; Conover, Practical Nonparametric Statistics, 3rd ed., §3.2).
func quantileBounds(h *hdr.Histogram, q float64) (lo, hi float64) {
	n := float64(h.TotalCount())
	half := 1.96 * math.Sqrt(n*q*(1-q))
	at := func(rank float64) float64 {
		rank = min(max(rank, 1), n)
		return float64(h.ValueAtQuantile(100 * rank / n))
	}
	return at(math.Floor(n*q - half)), at(math.Ceil(n*q+half) + 1)
}

// boundedGrade grades a figure by its interval [lo, hi]: the grade both bounds
// share, else warn — within its own noise of a threshold a figure is neither
// shown ok nor shown failing, as a histogram bucket that straddles the warn
// threshold is graded (StraddleNote).
func boundedGrade(lim Limits, lo, hi float64) (finding.Severity, bool) {
	a, b := lim.Grade(lo), lim.Grade(hi)
	if a == b {
		return a, false
	}
	return finding.Warn, true
}
