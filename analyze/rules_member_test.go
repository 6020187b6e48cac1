package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// evidenceOf is the evidence of signal in rep; fails the test when none.
func evidenceOf(t *testing.T, rep Result, signal string) finding.Evidence {
	t.Helper()
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if e.Signal == signal {
				return e
			}
		}
	}
	t.Fatalf("no evidence %q in %+v", signal, rep.Findings)
	return finding.Evidence{}
}

// withMembers splits the run's put op over its endpoints, 1,000 requests each,
// with the response times (µs) of each endpoint as p(m).
func withMembers(t *testing.T, run *results.Run, p func(m int) int64) {
	t.Helper()
	op := &run.Ops[0]
	for m, ep := range run.Target.Endpoints {
		h := results.NewHist()
		for range 1000 {
			_ = h.RecordValue(p(m))
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		op.Members = append(op.Members, results.MemberOp{Endpoint: ep, Requests: 1000, ResponseHist: enc, ServiceHist: enc, Latency: results.Summarize(h)})
	}
}

// TestMemberSlow: requests served by one member much slower than the others'
// are localized to it, warn or fail by how much; two slow followers of three
// (a far leader's round) are not one slow member.
func TestMemberSlow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	for _, tc := range []struct {
		name string
		us   []int64
		sev  finding.Severity
		want string
	}{
		{"one frozen", []int64{3000, 3000, 340_000}, finding.Fail, "requests served by m3 127.0.0.1:32379: service p99 340 ms (n=1000); m1 127.0.0.1:2379 and m2 127.0.0.1:22379: 3 ms"},
		{"one slow", []int64{3000, 4000, 30_000}, finding.Warn, "requests served by m3 127.0.0.1:32379: service p99 30 ms (n=1000); m1 127.0.0.1:2379 and m2 127.0.0.1:22379: 3 ms, 4 ms"},
		{"under the floor", []int64{1000, 1000, 5000}, finding.OK, "requests served by m3"},
		{"two slow followers", []int64{1000, 40_000, 41_000}, finding.OK, "requests served by m3"},
	} {
		run := healthRun(t0, eps, func(m, _ int) string { return member(m == 0, 1) })
		withMembers(t, run, func(m int) int64 { return tc.us[m] })
		rep, err := Run(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := evidenceOf(t, rep, ruleMemberSlow.Signal)
		if e.Severity != tc.sev || !strings.Contains(e.Observed, tc.want) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, e.Severity, e.Observed, tc.sev, tc.want)
		}
	}
	// One endpoint: nothing to compare, the rule stays out of the verdict.
	run := healthRun(t0, eps[:1], func(m, _ int) string { return member(true, 1) })
	if c := memberSlowRule(&Input{Run: run}, Limits{}); c.Severity != "" {
		t.Errorf("one endpoint: %+v, want no check", c)
	}
}

// TestMemberStallCause: a silence on one member's connection names the member
// and what etcd showed of its cause in the scrapes that bracket it, else says
// the cause is unknown with what was seen.
func TestMemberStallCause(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	defrag := func(m, i int) string {
		txt := etcdBase().gauge(metrics.IsLeader, b2f(m == 0)).counter(metrics.LeaderChanges, 1).
			gauge(metrics.DBTotal, 2*mib).gauge(metrics.Quota, 2*gib)
		// m3 defragments in the scrape at +31 s (i = 6).
		txt.gauge(metrics.DefragInflight, b2f(m == 2 && i == 6))
		return txt.String()
	}
	quiet := func(m, _ int) string { return member(m == 0, 1) }
	elected := func(m, i int) string {
		changes := 1.0
		if i >= 7 {
			changes = 2
		}
		return member(m == 0, changes)
	}
	for _, tc := range []struct {
		name string
		text func(m, i int) string
		want []string
	}{
		{"defrag", defrag, []string{"cause: a defragmentation on m3 127.0.0.1:32379 (etcd_disk_defrag_inflight 1)"}},
		{"election", elected, []string{"cause: an election (etcd_server_leader_changes_seen_total rose by 1)"}},
		{"unknown", quiet, []string{"cause unknown: no defragmentation, snapshot, compaction pause or election in its scrapes and none of them failed", "m3 127.0.0.1:32379 scraped 21:00:26.000 UTC to 21:00:36.000 UTC"}},
	} {
		run := healthRun(t0, eps, tc.text)
		run.Stall = &results.Stall{At: t0.Add(29 * time.Second), OffsetS: 28, Seconds: 0.2}
		for i, ep := range eps {
			st := &results.Stall{At: t0.Add(29 * time.Second), OffsetS: 28, Seconds: 0.004}
			if i == 2 {
				st.Seconds = 3
			}
			run.EndpointLoads = append(run.EndpointLoads, results.EndpointLoad{Endpoint: ep, Stall: st})
		}
		rep, err := Run(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The run's own stall names the member whose requests alone went unanswered.
		if e := evidenceOf(t, rep, "longest span with no reply (run)"); !strings.Contains(e.Observed, "on m3 127.0.0.1:32379 (its own requests had no reply for 3 s; the other members' longest wait 4 ms)") {
			t.Errorf("%s: the run's stall %q does not name m3", tc.name, e.Observed)
		}
		e := evidenceOf(t, rep, ruleMemberStall.Signal)
		if e.Severity != finding.Fail {
			t.Errorf("%s: %s, want fail", tc.name, e.Severity)
		}
		want := append([]string{"requests sent to m3 127.0.0.1:32379 had no reply for 3 s from +28.0 s (21:00:29.000 UTC); the other 2 member(s)' longest wait 4 ms"}, tc.want...)
		for _, w := range want {
			if !strings.Contains(e.Observed, w) {
				t.Errorf("%s: %q does not say %q", tc.name, e.Observed, w)
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
