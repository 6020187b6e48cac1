package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// cadvisorText is a container's series as cAdvisor exposes them
// (metrics/prometheus.go; names and labels as in its testdata/prometheus_metrics),
// for the cgroup of the member: CFS periods and throttled periods so far, the CPU
// quota and period in µs (quota 0: none), the memory limit (0: none) and the
// working set.
func cadvisorText(periods, throttled, quotaUs, limit, workingSet float64) string {
	l := `id="/kubepods/pod1/etcd",image="registry.k8s.io/etcd:3.6.16-0",name="k8s_etcd_etcd-node1"`
	var b strings.Builder
	for _, s := range []struct {
		name, typ string
		v         float64
	}{
		{metrics.ContainerCFSPeriods, "counter", periods},
		{metrics.ContainerThrottled, "counter", throttled},
		{metrics.ContainerCPUQuota, "gauge", quotaUs},
		{metrics.ContainerCPUPeriod, "gauge", 100000},
		{metrics.ContainerMemLimit, "gauge", limit},
		{metrics.ContainerWorkingSet, "gauge", workingSet},
	} {
		if s.name == metrics.ContainerCPUQuota && s.v == 0 {
			continue // cAdvisor leaves the quota out when none is set
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n%s{%s} %g\n", s.name, s.typ, s.name, l, s.v)
	}
	return b.String()
}

// nodeText is node_exporter's series of a 4-CPU host with 16 GiB, with the PSI
// "some" totals and one disk's I/O time so far.
func nodeText(cpuWait, ioWait, ioTime float64) string {
	var b strings.Builder
	b.WriteString("# TYPE node_cpu_seconds_total counter\n")
	for cpu := range 4 {
		for _, mode := range []string{"idle", "user"} {
			fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"%s\"} 100\n", cpu, mode)
		}
	}
	fmt.Fprintf(&b, "# TYPE %s gauge\n%s %g\n", metrics.NodeMemTotal, metrics.NodeMemTotal, float64(16<<30))
	fmt.Fprintf(&b, "# TYPE %s counter\n%s %g\n", metrics.NodePressureCPU, metrics.NodePressureCPU, cpuWait)
	fmt.Fprintf(&b, "# TYPE %s counter\n%s %g\n", metrics.NodePressureIO, metrics.NodePressureIO, ioWait)
	fmt.Fprintf(&b, "# TYPE %s counter\n%s{device=\"nvme0n1\"} %g\n", metrics.NodeDiskIOTime, metrics.NodeDiskIOTime, ioTime)
	return b.String()
}

// remoteRun is a 10 s run against one member that advertises 10.0.0.5:2379, an
// address that is no listener on the measuring host (reached through a tunnel
// on 127.0.0.1): before and after are its scrapes' texts.
func remoteRun(before, after string) *results.Run {
	sc := func(phase, tm, text string) results.Scrape {
		return results.Scrape{Member: "127.0.0.1:2379", URL: "http://127.0.0.1:2379/metrics", Phase: phase, Time: tm, Text: text}
	}
	return &results.Run{Version: results.Version, Command: "bench put", Valid: true, DurationS: 10,
		Target: results.ClusterInfo{Endpoints: []string{"127.0.0.1:2379"},
			Members: []results.Member{{Name: "m1", ClientURLs: []string{"http://10.0.0.5:2379"}}}},
		Ops:    []results.Op{{Op: "put", Requests: 20000, ThroughputRPS: 2000, Service: results.Summary{P50: 4, P99: 12}}},
		Client: results.Client{CPUSeconds: 2, Cores: 2},
		Host:   &results.Host{CPUs: 2, MemoryBytes: 8 << 30, HostMemoryBytes: 8 << 30},
		Scrapes: []results.Scrape{
			sc(results.PhaseBefore, "2026-01-01T00:00:00Z", before),
			sc(results.PhaseAfter, "2026-01-01T00:00:10Z", after),
		}}
}

// remoteMember is a member's own /metrics: CPU seconds so far, GOMAXPROCS, GOMEMLIMIT
// (0: unset, math.MaxInt64 as Go exposes it) and RSS.
func remoteMember(cpu, procs, memLimit, rss float64) string {
	if memLimit == 0 {
		memLimit = 9.223372036854776e+18
	}
	return etcdBase().counter(metrics.CPUSeconds, cpu).gauge(metrics.GoMaxProcs, procs).
		gauge(metrics.GoMemLimit, memLimit).gauge(metrics.RSS, rss).String()
}

// TestRemoteMember: a member etcdperf cannot see into is graded from what it
// exposes, and a limit it cannot know reads unknown with the reason, never ok
// against this host's 2 cores.
func TestRemoteMember(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		class         finding.Class
		want          finding.Severity
		observed      string // a substring of the class's evidence
	}{
		{"pinned to one core and saturated: its GOMAXPROCS says so",
			remoteMember(0, 1, 0, 50<<20), remoteMember(9.6, 1, 0, 50<<20), finding.ClassCPU, finding.Fail, "on 1 cores (its GOMAXPROCS"},
		{"idle against its GOMAXPROCS proves nothing: a quota may lie under it",
			remoteMember(0, 2, 0, 50<<20), remoteMember(3, 2, 0, 50<<20), finding.ClassCPU, finding.Unknown, "a CPU quota under its GOMAXPROCS does not show"},
		{"cAdvisor gives the quota: 0.3 CPU-s a second of 0.3 cores",
			remoteMember(0, 2, 0, 50<<20) + cadvisorText(0, 0, 30000, 0, 50<<20), remoteMember(3, 2, 0, 50<<20) + cadvisorText(100, 95, 30000, 0, 50<<20),
			finding.ClassCPU, finding.Fail, "throttled in 95 of 100 CFS periods = 95%"},
		{"RSS near its GOMEMLIMIT",
			remoteMember(0, 2, 100<<20, 90<<20), remoteMember(1, 2, 100<<20, 90<<20), finding.ClassMemory, finding.Fail, "of 100 MiB (its GOMEMLIMIT"},
		{"no memory limit exposed: unknown, not this host's RAM",
			remoteMember(0, 2, 0, 90<<20), remoteMember(1, 2, 0, 90<<20), finding.ClassMemory, finding.Unknown, "no listener on this host"},
		{"working set near the container's limit",
			remoteMember(0, 2, 0, 400<<20) + cadvisorText(0, 0, 0, 500<<20, 300<<20), remoteMember(1, 2, 0, 400<<20) + cadvisorText(100, 0, 0, 500<<20, 450<<20),
			finding.ClassMemory, finding.Fail, "working set 450 MiB of 500 MiB = 90%"},
		{"its host's CPU pressure (node_exporter)",
			remoteMember(0, 2, 0, 50<<20) + nodeText(0, 0, 0), remoteMember(3, 2, 0, 50<<20) + nodeText(9, 0, 1),
			finding.ClassCPU, finding.Fail, "some task of the member's host waited 90% of the window"},
		{"its host's disk busy all the time (node_exporter)",
			remoteMember(0, 2, 0, 50<<20) + nodeText(0, 0, 0), remoteMember(1, 2, 0, 50<<20) + nodeText(0, 6, 9.8),
			finding.ClassDisk, finding.Warn, "nvme0n1 busy 98% of the window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(remoteRun(tc.before, tc.after), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var f *finding.Finding
			for i := range rep.Findings {
				if rep.Findings[i].Class == tc.class {
					f = &rep.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no %s finding", tc.class)
			}
			var ev []string
			found := false
			for _, e := range f.Evidence {
				ev = append(ev, fmt.Sprintf("%s %s: %s", e.Severity, e.Signal, e.Observed))
				found = found || strings.Contains(e.Observed, tc.observed)
				if strings.Contains(e.Observed, "(host CPUs)") || strings.Contains(e.Observed, "(host RAM)") {
					t.Errorf("graded against this host: %s", e.Observed)
				}
			}
			if f.Severity != tc.want || !found {
				t.Errorf("%s = %s, want %s with %q:\n%s", tc.class, f.Severity, tc.want, tc.observed, strings.Join(ev, "\n"))
			}
		})
	}
}

// TestProbeSettlesStraddle: a WAL fsync p99 in the 8–16 ms bucket warns from the
// bucket alone; the light probe that ran on the member's filesystem during the
// load settles it, either way.
func TestProbeSettlesStraddle(t *testing.T) {
	walText := func(n float64) string {
		// 985 fast, 15 in (8, 16 ms]: the p99 lies in the bucket that holds 10 ms.
		return etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(98.5*n, 1.5*n, 0.016), 1).String()
	}
	for _, tc := range []struct {
		name     string
		probeP99 float64 // ms; 0: no probe
		want     finding.Severity
	}{
		{"no probe: the bucket cannot tell", 0, finding.Warn},
		{"probe p99 3 ms", 3, finding.OK},
		{"probe p99 14 ms", 14, finding.Warn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := remoteRun(walText(0), walText(10))
			run.Target.Members[0].ClientURLs = []string{"http://127.0.0.1:2379"}
			if tc.probeP99 > 0 {
				run.Disk = []results.DiskResult{{Pattern: "wal", Dir: "/var/lib/etcd", Member: "m1", IntervalMs: 100, Fdatasyncs: 100,
					Fdatasync: results.Summary{P50: 1, P99: tc.probeP99}}}
			}
			rep, err := Run(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				for _, e := range f.Evidence {
					if strings.HasPrefix(e.Signal, "wal fsync") && e.Severity != tc.want {
						t.Errorf("wal fsync %s (%s), want %s", e.Severity, e.Observed, tc.want)
					}
				}
			}
		})
	}
}

// TestReplicationMeasured: the replication round is the one measured through
// the endpoints (a linearizable read beyond its round trip), never what the
// other parts leave over: a 4 ms p50 on loopback, whose rounds are a third of a
// millisecond, is queueing however little the server-side figures explain; a
// 20 ms round that every write pays is the network between the members.
func TestReplicationMeasured(t *testing.T) {
	leader := func() *Window {
		// WAL fsyncs of (0, 1 ms]: p50 0.5 ms.
		return snapsAt(t, etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(0, 0, 1), 0).String(),
			etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(1000, 0, 1), 0.5).String())
	}
	runOf := func(p50Ms float64, reads ...float64) *results.Run {
		r := &results.Run{Version: results.Version, Valid: true, DurationS: 10,
			Ops: []results.Op{{Op: "put", Requests: 100, Service: results.Summary{P50: p50Ms, P99: p50Ms * 2}}}}
		if len(reads) > 0 {
			r.Network = &results.Network{PingRTTMs: 0.05}
			for i, ms := range reads {
				r.Network.Endpoints = append(r.Network.Endpoints, results.EndpointRound{Endpoint: fmt.Sprintf("127.0.0.1:%d", 2379+100*i), StatusRTTMs: 0.1, ReadMs: 0.1 + ms})
			}
		}
		return r
	}
	for _, tc := range []struct {
		name string
		run  *results.Run
		want finding.Severity
	}{
		{"queueing on loopback", runOf(4, 0.2, 0.3, 0.35), finding.OK},
		{"queueing on loopback, a big remainder", runOf(40, 0.2, 0.3, 0.35), finding.OK},
		{"a 20 ms round every write pays", runOf(23, 20), finding.Warn},
		{"20 ms to the leader, twice through followers", runOf(43, 20, 40, 40), finding.Warn},
		{"60 ms rounds", runOf(65, 60, 120, 120), finding.Fail},
		{"one slow follower: the median write does not wait", runOf(5, 0.3, 0.4, 20), finding.OK},
		{"not measured", runOf(23), finding.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := leader()
			in := &Input{Run: tc.run, W: w, Members: []*Window{w}, Leader: w, NetworkRTTMs: 0.2, PeersKnown: true, Peers: 2}
			if c := replicationRule(in, Limits{}); c.Severity != tc.want {
				t.Errorf("%s (%s), want %s", c.Severity, c.Observed, tc.want)
			}
		})
	}
}

// TestFollowerLink: a linearizable read through each endpoint before the load
// shows a slow link between one follower and the leader, which the median write
// (the quorum's) never waits for: 20 ms more through one endpoint of three is
// most of a 5 ms p50; a quarter of a millisecond on loopback is nothing.
func TestFollowerLink(t *testing.T) {
	leader := snapsAt(t, etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(0, 0, 1), 0).String(),
		etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(1000, 0, 1), 0.5).String())
	for _, tc := range []struct {
		name  string
		reads []float64 // the read through each endpoint, ms (Status 0.1 ms each)
		p50   float64
		want  finding.Severity
	}{
		{"loopback", []float64{0.5, 0.7, 0.75}, 3, finding.OK},
		{"one follower 10 ms each way", []float64{0.5, 0.7, 20.7}, 5, finding.Warn},
		{"one follower 30 ms each way", []float64{0.5, 0.7, 60.7}, 5, finding.Fail},
		{"one endpoint measured", []float64{20}, 5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &results.Run{Version: results.Version, Valid: true, DurationS: 10, Network: &results.Network{PingRTTMs: 0.05},
				Ops: []results.Op{{Op: "put", Requests: 100, Service: results.Summary{P50: tc.p50, P99: tc.p50 * 2}}}}
			for i, r := range tc.reads {
				run.Network.Endpoints = append(run.Network.Endpoints, results.EndpointRound{Endpoint: fmt.Sprintf("127.0.0.1:%d", 2379+i), StatusRTTMs: 0.1, ReadMs: r})
			}
			in := &Input{Run: run, W: leader, Members: []*Window{leader}, Leader: leader, NetworkRTTMs: 0.05, PeersKnown: true, Peers: 2}
			if c := followerLinkRule(in, Limits{}); c.Severity != tc.want {
				t.Errorf("%q (%s), want %q", c.Severity, c.Observed, tc.want)
			}
		})
	}
}

// TestClientRoundTrip: the measured round trip to the leader is the network's
// once it is more than the server's own p50 (here a WAL fsync p50 of 0.5 ms),
// the largest measured part, and at least a fifth of the client p50: 2.4 times
// it is, as a 1 ms delay each way before the leader of three members read; a
// loopback's tens of µs are not.
func TestClientRoundTrip(t *testing.T) {
	leader := snapsAt(t, etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(0, 0, 1), 0).String(),
		etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(1000, 0, 1), 0.5).String())
	for _, tc := range []struct {
		name           string
		rtt, p50, host float64
		want           finding.Severity
	}{
		{"loopback", 0.05, 1.66, 0, finding.OK},
		{"most of the p50, 2.4 times the server's", 1.2, 2, 0, finding.Warn},
		{"most of the p50, under the server's", 0.4, 0.7, 0, finding.OK},
		{"a minority of the p50, the largest part", 1.2, 3, 0, finding.Warn},
		{"under a fifth of the p50", 0.7, 4, 0, finding.OK},
		{"150 ms each way", 300, 301, 0, finding.Fail},
		// The same 1.2 ms PING on a host whose PING to itself takes 1 ms: the
		// network's 0.2 ms is under the server's own time.
		{"most of the p50, much of it the host's own", 1.2, 2, 1, finding.OK},
		{"most of the p50, little of it the host's own", 1.2, 2, 0.05, finding.Warn},
		{"a host's own round trip longer than the measured one", 0.3, 0.5, 0.4, finding.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &results.Run{Version: results.Version, Valid: true, DurationS: 10,
				Ops: []results.Op{{Op: "put", Requests: 100, Service: results.Summary{P50: tc.p50, P99: tc.p50 * 2}}}}
			in := &Input{Run: run, W: leader, Members: []*Window{leader}, Leader: leader, NetworkRTTMs: tc.rtt, hostRTTMs: tc.host}
			if c := clientRTTRule(in, Limits{}); c.Severity != tc.want {
				t.Errorf("%q (%s), want %q", c.Severity, c.Observed, tc.want)
			}
		})
	}
	// A closed-loop range on loopback, the server side not known: 168 µs of a
	// 237 µs p50 is most of it, but under a round trip within one datacenter.
	bare := snapsAt(t, etcdBase().String(), etcdBase().String())
	run := &results.Run{Version: results.Version, Valid: true, DurationS: 10,
		Ops: []results.Op{{Op: "range", Requests: 100, Service: results.Summary{P50: 0.237, P99: 0.5}}}}
	in := &Input{Run: run, W: bare, Members: []*Window{bare}, Leader: bare, NetworkRTTMs: 0.2, hostRTTMs: 0.032}
	if c := clientRTTRule(in, Limits{}); c.Severity != finding.OK {
		t.Errorf("loopback round trip of a sub-millisecond request: %q (%s), want ok", c.Severity, c.Observed)
	}
	in.NetworkRTTMs, run.Ops[0].Service = 1.1, results.Summary{P50: 1.3, P99: 3}
	if c := clientRTTRule(in, Limits{}); c.Severity != finding.Warn {
		t.Errorf("1.07 ms of a 1.3 ms p50, server side unknown: %q (%s), want warn", c.Severity, c.Observed)
	}
}
