package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"

	"github.com/etcdperf/etcdperf/results"
)

// member texts for the verdict cases: a single member's before/after pair.
func walText(fast, n, le, cpu float64) *mtext {
	return etcdBase().gauge(metrics.IsLeader, 1).hist(metrics.WALFsync, "", diskBuckets, cumAt(fast, n, le), 1).counter(metrics.CPUSeconds, cpu)
}

func runOf(i *Input) Result {
	rep := report(*i, Options{})
	return rep
}

// TestIssue14Cases pins the verdicts of the five cases of issue 14 that the
// analyzer decides (case 5, the receive limit, is the client's: cmd/etcdperf).
func TestIssue14Cases(t *testing.T) {
	t.Run("1: a few ms of client delay is the network", func(t *testing.T) {
		// Client p50 12 ms; the measured round trip 10 ms; the server ~0.5 ms.
		i := withRun(single(in(t, walText(0, 0, 1, 0), walText(0, 1000, 0.001, 1))), putRun(12))
		i.NetworkRTTMs = 10
		rep := runOf(i)
		if rep.Verdict.Bottleneck != string(finding.ClassNetwork) || rep.Verdict.Status != finding.StatusPass {
			t.Errorf("verdict %s/%s, want pass/network: %s", rep.Verdict.Status, rep.Verdict.Bottleneck, rep.Verdict.Summary)
		}
		f := findingIn(rep, finding.ClassNetwork)
		if f.Severity != finding.Warn || f.Share == nil || *f.Share < 0.8 {
			t.Errorf("network %s share %v, want warn with ~83%%", f.Severity, ptrVal(f.Share))
		}
	})
	t.Run("1: the loopback round trip is not the network", func(t *testing.T) {
		// A PING on loopback: tens of µs, a tenth of the client's 0.4 ms.
		i := withRun(single(in(t, walText(0, 0, 1, 0), walText(0, 1000, 0.001, 1))), putRun(0.4))
		i.NetworkRTTMs = 0.04
		if rep := runOf(i); rep.Verdict.Bottleneck != finding.BottleneckNone {
			t.Errorf("bottleneck %s on loopback: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
		}
	})
	t.Run("1: a distant client fails", func(t *testing.T) {
		i := withRun(single(in(t, walText(0, 0, 1, 0), walText(0, 1000, 0.001, 1))), putRun(205))
		i.NetworkRTTMs = 200
		if rep := runOf(i); rep.Verdict.Bottleneck != string(finding.ClassNetwork) || rep.Verdict.Status != finding.StatusFail {
			t.Errorf("verdict %s/%s, want fail/network", rep.Verdict.Status, rep.Verdict.Bottleneck)
		}
	})
	t.Run("3: a CPU-starved member's inflated fsync does not blame the disk", func(t *testing.T) {
		// 19 CPU-s in 10 s on 2 cores = 95% busy; WAL fsync p99 in (64, 128] ms.
		i := withRun(single(in(t, walText(0, 0, 1, 0), walText(900, 100, 0.128, 19))), putRun(30))
		rep := runOf(i)
		if rep.Verdict.Bottleneck != string(finding.ClassCPU) {
			t.Errorf("bottleneck %s, want cpu: %s", rep.Verdict.Bottleneck, rep.Verdict.Summary)
		}
		if d := findingIn(rep, finding.ClassDisk); d.Severity != finding.Warn || !strings.Contains(d.Summary, "inflated") {
			t.Errorf("disk %s %q, want warn and inflated", d.Severity, d.Summary)
		}
	})
	t.Run("3: a probe that agrees keeps the disk primary", func(t *testing.T) {
		run := putRun(30)
		run.Disk = []results.DiskResult{{Pattern: "wal", Dir: "/d", Fdatasync: results.Summary{P99: 90}}}
		i := withRun(single(in(t, walText(0, 0, 1, 0), walText(900, 100, 0.128, 19))), run)
		rep := runOf(i)
		if d := findingIn(rep, finding.ClassDisk); d.Severity != finding.Fail {
			t.Errorf("disk %s, want fail: the probe measured the disk slow", d.Severity)
		}
	})
	t.Run("4: a full quota fails with recovery steps, not invalid", func(t *testing.T) {
		quota := func(db float64) *mtext {
			return etcdBase().gauge(metrics.IsLeader, 1).gauge(metrics.DBTotal, db).gauge(metrics.Quota, 16*mib)
		}
		run := putRun(2)
		run.Valid, run.InvalidReason = false, "achieved 41% of the target rate"
		run.Ops[0].Errors, run.Ops[0].ErrorsByCode = 600, map[string]int64{"ResourceExhausted": 600}
		run.Alarms = []results.Alarm{{Member: "8e9e05c52164694d", Type: "NOSPACE"}}
		rep := runOf(withRun(single(in(t, quota(8*mib), quota(16*mib+4096))), run))
		if rep.Verdict.Status != finding.StatusFail || rep.Verdict.Bottleneck != string(finding.ClassQuota) {
			t.Errorf("verdict %s/%s, want fail/quota: %s", rep.Verdict.Status, rep.Verdict.Bottleneck, rep.Verdict.Summary)
		}
		if f := findingIn(rep, finding.ClassQuota); !strings.Contains(f.Advice, "alarm disarm") || !strings.Contains(f.Advice, "defrag") {
			t.Errorf("quota advice lacks the recovery: %q", f.Advice)
		}
		if d := findingIn(rep, finding.ClassDisk); d.Severity == finding.Fail {
			t.Errorf("a full quota blamed on the disk: %s", d.Summary)
		}
	})
}

func TestPeerRTTMinority(t *testing.T) {
	b := []float64{0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096}
	rtt := func(m *mtext, to string, n, le float64) *mtext {
		cum := make([]float64, len(b))
		for i, x := range b {
			if x >= le {
				cum[i] = n
			}
		}
		return m.hist(metrics.PeerRTT, `To="`+to+`"`, b, cum, 1)
	}
	r := ruleBy(t, "peer round trip")
	one := in(t, rtt(rtt(etcdBase(), "b", 0, 1), "c", 0, 1), rtt(rtt(etcdBase(), "b", 100, 0.0004), "c", 100, 0.4096))
	one.PeersKnown, one.Peers = true, 2
	if c := r.check(one); c.Severity != finding.Warn || !strings.Contains(c.Observed, "risk") {
		t.Errorf("one slow peer of two: %s %q, want a warned risk", c.Severity, c.Observed)
	}
	both := in(t, rtt(rtt(etcdBase(), "b", 0, 1), "c", 0, 1), rtt(rtt(etcdBase(), "b", 100, 0.4096), "c", 100, 0.4096))
	both.PeersKnown, both.Peers = true, 2
	if c := r.check(both); c.Severity != finding.Fail {
		t.Errorf("both peers slow: %s, want fail", c.Severity)
	}
}

func TestVersionNotes(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want []string // substrings, in order; none: nil
	}{
		{"3.6.16", nil},
		{"3.7.3", nil},
		{"3.5.21", []string{"end of support", "snapshot-count"}},
		{"3.5.1", []string{"end of support", "snapshot-count", "watch streams starve"}},
		{"3.4.23", []string{"end of support", "snapshot-count"}},
		{"3.3.27", []string{"end of support", "long read blocks writes", "snapshot-count"}},
		{"garbage", nil},
	} {
		got := versionNotes(tc.v)
		if len(got) != len(tc.want) {
			t.Errorf("%s: notes %q, want %d", tc.v, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: note %d = %q, want %q", tc.v, i, got[i], w)
			}
		}
	}
}

func TestMixedVersions(t *testing.T) {
	mk := func(v, cv string, leader float64) *Window {
		s := etcdBase().gauge(metrics.IsLeader, leader).String() +
			"# TYPE etcd_server_version gauge\netcd_server_version{server_version=\"" + v + "\"} 1\n" +
			"# TYPE etcd_cluster_version gauge\netcd_cluster_version{cluster_version=\"" + cv + "\"} 1\n"
		w := snapsAt(t, s, s)
		return w
	}
	a, b := mk("3.6.16", "3.5", 1), mk("3.5.21", "3.5", 0)
	a.Member, b.Member = "127.0.0.1:2379", "127.0.0.1:22379"
	vs := versionsOf(&Input{Members: []*Window{a, b}})
	if len(vs) != 2 {
		t.Fatalf("versions %+v", vs)
	}
	joined := strings.Join(vs[0].Notes, "|")
	if !strings.Contains(joined, "mixed versions") || !strings.Contains(joined, "cluster version 3.5 is below") {
		t.Errorf("leader notes %q: want mixed versions and the cluster version below", joined)
	}
	if vs[0].Member != "127.0.0.1:2379 (leader)" {
		t.Errorf("member %q", vs[0].Member)
	}
}

func findingIn(rep Result, c finding.Class) finding.Finding {
	for _, f := range rep.Findings {
		if f.Class == c {
			return f
		}
	}
	return finding.Finding{}
}

// TestRisks: a class that explains under a fifth of the client latency, and a
// disk only the host's probe found slow, are risks — never the bottleneck, and
// they do not fail the run — whatever their severity.
func TestRisks(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	wal := func(s finding.Severity) finding.Evidence {
		return finding.Evidence{Signal: "wal fsync p99 (x)", Member: "m0", Severity: s}
	}
	probe := func(s finding.Severity) finding.Evidence {
		return finding.Evidence{Signal: "disk probe fdatasync p99", Severity: s}
	}
	cases := []struct {
		name       string
		fs         []finding.Finding
		status     finding.Status
		bottleneck string
		risks      []string
	}{
		{"peer links: a disk at 1% of the p99 does not outrank the network at 99%",
			[]finding.Finding{
				{Class: finding.ClassDisk, Severity: finding.Fail, Share: share(0.01), ShareAt: "p99", Evidence: []finding.Evidence{wal(finding.Fail)}},
				{Class: finding.ClassNetwork, Severity: finding.Warn, Share: share(0.99), ShareAt: "p50"},
			}, finding.StatusPass, "network", []string{"disk"}},
		{"a disk at a fifth is a bottleneck",
			[]finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail, Share: share(0.2), ShareAt: "p99", Evidence: []finding.Evidence{wal(finding.Fail)}}},
			finding.StatusFail, "disk", nil},
		{"an unknown share is no risk",
			[]finding.Finding{{Class: finding.ClassDisk, Severity: finding.Warn, Evidence: []finding.Evidence{wal(finding.Warn)}}},
			finding.StatusPass, "disk", nil},
		{"the probe alone, with fast WAL fsyncs, is a risk of the host",
			[]finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail, Evidence: []finding.Evidence{wal(finding.OK), probe(finding.Fail)}}},
			finding.StatusPass, "none", []string{"disk"}},
		{"the probe and a slow WAL agree",
			[]finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail, Evidence: []finding.Evidence{wal(finding.Fail), probe(finding.Fail)}}},
			finding.StatusFail, "disk", nil},
		{"the probe without the members' fsyncs is the only disk evidence",
			[]finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail, Evidence: []finding.Evidence{probe(finding.Fail)}}},
			finding.StatusFail, "disk", nil},
		{"a cause without a share is never a risk",
			[]finding.Finding{{Class: finding.ClassCPU, Severity: finding.Fail}},
			finding.StatusFail, "cpu", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			markRisks(c.fs, "")
			v := verdict(nil, c.fs)
			if v.Status != c.status || v.Bottleneck != c.bottleneck || !slices.Equal(v.Risks, c.risks) {
				t.Errorf("got %s/%s risks %v, want %s/%s risks %v: %s", v.Status, v.Bottleneck, v.Risks, c.status, c.bottleneck, c.risks, v.Summary)
			}
		})
	}
}

// TestSlowServerNoRisk: a class bad on the member whose own requests were slow is
// in its clients' path, so a small share of the leader's path makes it no risk.
func TestSlowServerNoRisk(t *testing.T) {
	s := 0.02
	fs := []finding.Finding{{Class: finding.ClassDisk, Severity: finding.Warn, Share: &s, ShareAt: "p99",
		Evidence: []finding.Evidence{{Signal: "wal fsync p99 (x)", Member: "127.0.0.1:2379", Severity: finding.Warn}}}}
	markRisks(fs, "127.0.0.1:2379")
	if fs[0].Risk != "" {
		t.Errorf("disk on the slow-serving member marked a risk: %s", fs[0].Risk)
	}
	markRisks(fs, "127.0.0.1:2381")
	if fs[0].Risk == "" {
		t.Error("disk on another member not marked a risk")
	}
}

// TestNetworkShareNeedsItsRoundTrip: without a measured round trip the network's
// share is unknown (not the replication part alone), so a network the gap rule
// fails is never made a risk by a share of 0.
func TestNetworkShareNeedsItsRoundTrip(t *testing.T) {
	zero, client := 0.0, 200.0
	b := &finding.Budget{ClientP50Ms: &client, ClientP99Ms: &client, Parts: []finding.BudgetPart{
		{Component: finding.PartNetwork},
		{Component: finding.PartReplication, P50Ms: &zero, P99Ms: &zero},
	}}
	fs := []finding.Finding{{Class: finding.ClassNetwork, Severity: finding.Fail}}
	shareOf(fs, b, &Input{PeersKnown: true})
	markRisks(fs, "")
	if fs[0].Share != nil || fs[0].Risk != "" {
		t.Errorf("share %v, risk %q; want no share and no risk", ptrVal(fs[0].Share), fs[0].Risk)
	}
}

// TestFollowerLinkNoRisk: a follower's slow link is paid by the clients that
// reach the cluster through it, off the leader's path the share measures.
func TestFollowerLinkNoRisk(t *testing.T) {
	s := 0.14
	fs := []finding.Finding{{Class: finding.ClassNetwork, Severity: finding.Warn, Share: &s, ShareAt: "p50",
		Evidence: []finding.Evidence{{Signal: "follower link / client p50 (x)", Severity: finding.Warn}}}}
	markRisks(fs, "")
	if fs[0].Risk != "" {
		t.Errorf("a slow follower link marked a risk: %s", fs[0].Risk)
	}
}
