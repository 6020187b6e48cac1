package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// healthRun is a run of 60 s against the members at eps, with one put op, and
// scrapes of each member every 5 s made by text(member, i) (an error where text
// returns "").
func healthRun(t0 time.Time, eps []string, text func(m, i int) string) *results.Run {
	run := &results.Run{Version: results.Version, Command: "check", Valid: true, StartedAt: t0, EndedAt: t0.Add(61 * time.Second),
		WarmupS: 1, DurationS: 60, Target: results.ClusterInfo{Endpoints: eps}}
	for m, ep := range eps {
		run.Target.Members = append(run.Target.Members, results.Member{ID: "id", Name: "m" + string(rune('1'+m)), ClientURLs: []string{"http://" + ep}})
	}
	op := results.Op{Op: "put", Requests: 9000, TargetRPS: 150, ThroughputRPS: 150, Latency: results.Summary{P50: 2, P99: 40}}
	for s := range 61 {
		op.Intervals = append(op.Intervals, results.Interval{Start: t0.Add(time.Duration(s+1) * time.Second), Seconds: 1, Requests: 150})
	}
	run.Ops = []results.Op{op}
	for i := 0; i <= 12; i++ {
		phase := results.PhaseDuring
		switch i {
		case 0:
			phase = results.PhaseBefore
		case 12:
			phase = results.PhaseAfter
		}
		for m, ep := range eps {
			sc := results.Scrape{Member: ep, URL: "http://" + ep + "/metrics", Phase: phase,
				Time: scrapeTime(t0.Add(time.Second + time.Duration(i)*5*time.Second)), Seconds: 0.01}
			if tx := text(m, i); tx != "" {
				sc.Text = tx
			} else {
				sc.Error = "Get \"http://" + ep + "/metrics\": dial tcp " + ep + ": connect: connection refused"
			}
			run.Scrapes = append(run.Scrapes, sc)
		}
	}
	return run
}

func member(leader bool, changes float64) string {
	l := 0.0
	if leader {
		l = 1
	}
	return etcdBase().gauge(metrics.IsLeader, l).counter(metrics.LeaderChanges, changes).
		gauge(metrics.DBTotal, 2*mib).gauge(metrics.Quota, 2*gib).String()
}

func findingOf(t *testing.T, rep Result, c finding.Class) finding.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Class == c {
			return f
		}
	}
	t.Fatalf("no %s finding in %+v", c, rep.Findings)
	return finding.Finding{}
}

// TestStallNamed: a 2 s stall on the only endpoint fails the run with the stall
// named (when, how long, which member) and the bottleneck stall; from check
// perf's 500 ms to a second it warns, still named; under 500 ms it is ok.
func TestStallNamed(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		secs       float64
		sev        finding.Severity
		bottleneck string
	}{{2.0, finding.Fail, "stall"}, {0.9, finding.Warn, "stall"}, {0.4, finding.OK, "none"}} {
		run := healthRun(t0, []string{"127.0.0.1:2379"}, func(int, int) string { return member(true, 1) })
		run.Stall = &results.Stall{At: t0.Add(31 * time.Second), OffsetS: 30, Seconds: tc.secs}
		rep, err := Run(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := findingOf(t, rep, finding.ClassStall)
		if f.Severity != tc.sev || rep.Verdict.Bottleneck != tc.bottleneck {
			t.Errorf("%gs: stall %s, bottleneck %s (%s), want %s, %s", tc.secs, f.Severity, rep.Verdict.Bottleneck, rep.Verdict.Summary, tc.sev, tc.bottleneck)
		}
		if tc.sev == finding.Fail {
			for _, want := range []string{"no reply for 2 s from +30.0 s (21:00:31.000 UTC)", "on m1 127.0.0.1:2379, the only endpoint", "clients in 21:00:31..21:00:33"} {
				if !strings.Contains(rep.Verdict.Summary, want) {
					t.Errorf("verdict %q does not say %q", rep.Verdict.Summary, want)
				}
			}
			if rep.Verdict.Status != finding.StatusFail {
				t.Errorf("status %s, want fail", rep.Verdict.Status)
			}
		}
	}
	// A run file from before stalls were measured: unknown, never ok.
	run := healthRun(t0, []string{"127.0.0.1:2379"}, func(int, int) string { return member(true, 1) })
	rep, _ := Run(run, Options{})
	if f := findingOf(t, rep, finding.ClassStall); f.Severity != finding.Unknown {
		t.Errorf("no stall measurement: %s, want unknown", f.Severity)
	}
}

// TestStallNamesTheMemberWhoseScrapeWaited: of three endpoints, the member whose
// /metrics answered only when the span ended is the one named.
func TestStallNamesTheMemberWhoseScrapeWaited(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	run := healthRun(t0, eps, func(m, _ int) string { return member(m == 0, 1) })
	run.Stall = &results.Stall{At: t0.Add(30 * time.Second), OffsetS: 29, Seconds: 3}
	for i := range run.Scrapes {
		sc := &run.Scrapes[i]
		// Asked at +31.0 s, answered at +33.0 s, when the member came back.
		if sc.Member == eps[1] && sc.Time == scrapeTime(t0.Add(31*time.Second)) {
			sc.Time, sc.Seconds = scrapeTime(t0.Add(32*time.Second)), 2
		}
	}
	rep, _ := Run(run, Options{})
	f := findingOf(t, rep, finding.ClassStall)
	if !strings.Contains(f.Summary, "on m2 127.0.0.1:22379 (its /metrics, asked at 21:00:31.000 UTC, answered only at 21:00:33.000 UTC)") {
		t.Errorf("stall summary %q does not name m2", f.Summary)
	}
}

// TestLeaderChangeTimeline: a change between two scrapes is named with where
// it happened, which member took over and what clients saw meanwhile.
func TestLeaderChangeTimeline(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	run := healthRun(t0, eps, func(m, i int) string {
		changes := 1.0
		if i >= 6 {
			changes = 2
		}
		lead := m == 0
		if i >= 6 {
			lead = m == 1
		}
		return member(lead, changes)
	})
	// The seconds of the change: 12 errors, one request of 1.2 s.
	h := results.NewHist()
	_ = h.RecordValue(1_200_000)
	enc, _ := results.EncodeHist(h)
	for i := range run.Ops[0].Intervals {
		if iv := &run.Ops[0].Intervals[i]; iv.Start.Equal(t0.Add(28 * time.Second)) {
			iv.Errors, iv.Response = 12, enc
		}
	}
	rep, _ := Run(run, Options{})
	f := findingOf(t, rep, finding.ClassElection)
	if f.Severity != finding.Fail {
		t.Fatalf("election %s, want fail: %s", f.Severity, f.Summary)
	}
	for _, want := range []string{"leader changes", "1: between 21:00:26.000 UTC and 21:00:31.000 UTC (+25.0 s)",
		"m1 127.0.0.1:2379 lost the leadership", "m2 127.0.0.1:22379 became leader", "12 errors", "response p99 1200ms (run p99 40.0ms)"} {
		if !strings.Contains(f.Summary, want) {
			t.Errorf("election summary %q does not say %q", f.Summary, want)
		}
	}
	if rep.Verdict.Bottleneck != string(finding.ClassElection) {
		t.Errorf("bottleneck %s, want election (%s)", rep.Verdict.Bottleneck, rep.Verdict.Summary)
	}
}

// TestLeaderChangeGradedByCost: one planned transfer the clients did not feel
// is a warning with its timeline, and the run passes; a restarted member whose
// counter starts over saw no change; four changes in a minute are the etcd
// mixin's alerting rate and fail, felt or not.
func TestLeaderChangeGradedByCost(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	eps := []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"}
	for _, tc := range []struct {
		name    string
		changes func(m, i int) float64
		sev     finding.Severity
		status  finding.Status
		want    string
	}{
		{"one transfer", func(_, i int) float64 { return 1 + float64(min(i/6, 1)) }, finding.Warn, finding.StatusPass, "no error, no stall and no response past"},
		{"a restart's reset", func(m, i int) float64 {
			if m == 2 && i >= 6 {
				return 1 // restarted: its counter starts over at the leader it found
			}
			return 3
		}, finding.OK, finding.StatusPass, "within thresholds"},
		{"four in a minute", func(_, i int) float64 { return 1 + float64(min(i/2, 4)) }, finding.Fail, finding.StatusFail, "at the etcd mixin's alerting rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := healthRun(t0, eps, func(m, i int) string { return member(m == 0, tc.changes(m, i)) })
			rep, _ := Run(run, Options{})
			f := findingOf(t, rep, finding.ClassElection)
			if f.Severity != tc.sev || rep.Verdict.Status != tc.status || !strings.Contains(f.Summary, tc.want) {
				t.Errorf("election %s (%s), verdict %s; want %s, %s, saying %q", f.Severity, f.Summary, rep.Verdict.Status, tc.sev, tc.status, tc.want)
			}
		})
	}
}

// TestLostMember: a member whose scrapes fail from some point on is named with
// its last good scrape and the error; the run's findings are still made.
func TestLostMember(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	run := healthRun(t0, []string{"127.0.0.1:2379"}, func(_, i int) string {
		if i >= 7 {
			return ""
		}
		return member(true, 1)
	})
	rep, _ := Run(run, Options{})
	f := findingOf(t, rep, finding.ClassHealth)
	for _, want := range []string{"m1 127.0.0.1:2379 stopped answering after 21:00:31.000 UTC (+30.0 s)", "connection refused",
		"its last scrape said has leader 1, it led, db 2 MiB of 2 GiB quota"} {
		if !strings.Contains(f.Summary, want) {
			t.Errorf("health summary %q does not say %q", f.Summary, want)
		}
	}
	if rep.Verdict.Status != finding.StatusFail {
		t.Errorf("status %s, want fail", rep.Verdict.Status)
	}
}
