package analyze

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// roundRun is a 3-member run (m1 leads) whose endpoints served their puts in
// served[m] and measured their read rounds in rounds[m]; follower m3's WAL
// fsyncs take walMs (≤ 1 ms when 0), the others' ≤ 1 ms; with changed, the
// leader changes once half-way; follower m3 uses followerCPU CPU-seconds a
// second.
func roundRun(t *testing.T, served, rounds []spread, walMs float64, changed bool, followerCPU float64) *results.Run {
	t.Helper()
	run := endpointRun(t, served, func(m, i int) string {
		n, le := float64(i*100), 0.001
		if m == 2 && walMs > 0 {
			le = walMs / 1000
		}
		l, changes := 0.0, 1.0
		if m == 0 {
			l = 1
		}
		if changed && i >= 6 {
			changes = 2
		}
		cpu := 0.0
		if m == 2 {
			cpu = followerCPU * float64(i*5)
		}
		return etcdBase().gauge(metrics.IsLeader, l).counter(metrics.LeaderChanges, changes).counter(metrics.CPUSeconds, cpu).gauge(metrics.DBTotal, 2*mib).gauge(metrics.Quota, 2*gib).
			hist(metrics.WALFsync, "", diskBuckets, cumAt(0, n, le), n*le/2).String()
	})
	for m := range run.EndpointLoads {
		run.EndpointLoads[m].ReadRounds, run.EndpointLoads[m].ReadRoundHist = 600, rounds[m].hist(t, 600)
	}
	return run
}

// TestReadRoundRule: the round between the members through the load is graded
// per endpoint at the p99 of the requests it served: a link that holds a few
// percent of its packets fails, a shorter hold warns, a busy loopback's
// few-ms tail is no fault, and neither is a round that a member's slow WAL
// fsync explains or one measured while a CPU was saturated.
func TestReadRoundRule(t *testing.T) {
	ok, fast := spread{fast: 3000, slow: 9000, tail: 0.02}, spread{fast: 300, slow: 4000, tail: 0.02}
	held := spread{fast: 3000, slow: 230_000, tail: 0.03}
	for _, tc := range []struct {
		name    string
		served  []spread
		rounds  []spread
		walMs   float64
		changed bool    // the leader changes half-way
		fCPU    float64 // follower m3's CPU-s a second, on 1 core
		genCPU  float64 // the generator's CPU-s over the 60 s on 2 cores
		sev     finding.Severity
		want    string
		network bool // named the bottleneck, its share at p99
	}{
		{"healthy loopback, a busy host's tail", []spread{ok, ok, ok}, []spread{fast, fast, fast}, 0, false, 0, 0, finding.OK, "p99 4 ms", false},
		{"the leader's peer link holds 3% of its packets 200 ms", []spread{held, held, held}, []spread{{300, 200_000, 0.03}, {300, 200_000, 0.03}, {300, 200_000, 0.03}}, 0, false, 0, 0,
			finding.Fail, "read round through m1 127.0.0.1:2379 during the load (600 pairs of reads): p50 300 µs, p99 200 ms, 200 ms over its median = 87% of its requests' p99 230 ms", true},
		{"a follower's link holds 40 ms", []spread{ok, ok, {3000, 50_000, 0.03}}, []spread{fast, fast, {300, 40_000, 0.03}}, 0, false, 0, 0,
			finding.Warn, "read round through m3 127.0.0.1:32379 during the load (600 pairs of reads): p50 300 µs, p99 40 ms, 39.7 ms over its median = 79%", true},
		{"a follower's slow WAL fsync", []spread{ok, ok, {3000, 300_000, 0.03}}, []spread{fast, fast, {300, 200_000, 0.03}}, 256, false, 0, 0,
			finding.OK, "the slowest disk: m3 127.0.0.1:32379 WAL fsync and backend commit p99, and the apply's, 255 ms", false},
		{"a loaded host's steady round: its tail over its median is no link's", []spread{{6000, 12_700, 0.02}, {6000, 12_700, 0.02}, {6000, 12_700, 0.02}},
			[]spread{{6200, 11_100, 0.02}, {6200, 11_100, 0.02}, {6200, 11_100, 0.02}}, 0, false, 0, 0, finding.OK, "p50 6.2 ms, p99 11.1 ms, 4.9 ms over its median", false},
		{"a tail while the leader changed: the election's", []spread{held, held, held}, []spread{{300, 200_000, 0.03}, {300, 200_000, 0.03}, {300, 200_000, 0.03}}, 0, true, 0, 0,
			finding.OK, "the leader changed 1 time(s) in the window, and the reads waited for the election", false},
		{"a follower at its CPU quota answers late", []spread{ok, ok, {3000, 200_000, 0.03}}, []spread{fast, fast, {300, 190_000, 0.03}}, 0, false, 0.95, 0,
			finding.OK, "m3 127.0.0.1:32379's CPU 95% busy, so the members' answers wait for it too", false},
		{"the held link with the generator's CPU 95% busy", []spread{held, held, held}, []spread{{300, 200_000, 0.03}, {300, 200_000, 0.03}, {300, 200_000, 0.03}}, 0, false, 0, 114,
			finding.OK, "generator CPU 95% busy, so the members' answers wait for it too", false},
	} {
		run := roundRun(t, tc.served, tc.rounds, tc.walMs, tc.changed, tc.fCPU)
		run.Client.CPUSeconds, run.Client.Cores = tc.genCPU, 2
		rep, err := Run(run, Options{Cores: 1})
		if err != nil {
			t.Fatal(err)
		}
		e := evidenceOf(t, rep, ruleBy(t, "read round").Signal)
		if e.Severity != tc.sev || !strings.Contains(e.Observed, tc.want) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, e.Severity, e.Observed, tc.sev, tc.want)
		}
		f := findingOf(t, rep, finding.ClassNetwork)
		if named := rep.Verdict.Bottleneck == string(finding.ClassNetwork); named != tc.network {
			t.Errorf("%s: bottleneck %s, network named %v", tc.name, rep.Verdict.Bottleneck, tc.network)
		}
		if tc.network && (f.Share == nil || f.ShareAt != "p99" || *f.Share < riskShare) {
			t.Errorf("%s: network share %v at %q, want the round's at p99", tc.name, ptrVal(f.Share), f.ShareAt)
		}
	}
}
