package analyze

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// TestRuleTable checks every rule is complete data: a signal, threshold, source and func.
func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if r.Class == "" || r.Signal == "" || r.Threshold == "" || r.Source == "" || r.Advice == "" || r.Eval == nil {
			t.Errorf("incomplete rule %+v", r)
		}
		if seen[r.Signal] {
			t.Errorf("duplicate signal %q", r.Signal)
		}
		seen[r.Signal] = true
	}
}

func ruleBy(t *testing.T, prefix string) Rule {
	t.Helper()
	for _, r := range Rules {
		if strings.HasPrefix(r.Signal, prefix) {
			return r
		}
	}
	t.Fatalf("no rule %q", prefix)
	return Rule{}
}

// etcdBase is the minimum that makes text an etcd member's.
func etcdBase() *mtext { return newText().gauge(metrics.HasLeader, 1) }

// in builds an input for one member from two texts 10 s apart.
func in(t *testing.T, before, after *mtext) *Input {
	t.Helper()
	w := snapsAt(t, before.String(), after.String())
	return &Input{W: w, Members: []*Window{w}, Leader: w, Cores: 2, CoresSource: "test", MemoryBytes: 1 << 30, MemorySource: "test"}
}

func single(i *Input) *Input { i.PeersKnown, i.Peers = true, 0; return i }

func withRun(i *Input, r *results.Run) *Input { i.Run = r; return i }

func putRun(p50ms float64) *results.Run {
	return &results.Run{Version: results.Version, Valid: true, DurationS: 10,
		Ops: []results.Op{{Op: "put", Requests: 1000, BytesSent: 1000 * 1024, Service: results.Summary{P50: p50ms, P99: p50ms * 2}}}}
}

func TestRules(t *testing.T) {
	wal := func(fast, n, le float64) *mtext {
		return etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(fast, n, le), 1)
	}
	rtt := func(to string, fast, n, le float64) *mtext {
		b := []float64{0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096}
		cum := make([]float64, len(b))
		for i, x := range b {
			cum[i] = fast
			if x >= le {
				cum[i] += n
			}
		}
		return etcdBase().hist(metrics.PeerRTT, `To="`+to+`"`, b, cum, 1)
	}
	cpu := func(v float64) *mtext { return etcdBase().counter(metrics.CPUSeconds, v) }
	counter := func(name string, v float64) *mtext { return etcdBase().counter(name, v) }

	for _, tc := range []struct {
		name, rule string
		in         *Input
		want       finding.Severity // "" = not applicable
		observed   string           // substring of Observation.Observed
	}{
		// disk
		{"wal p99 in 64-128 ms fails", "wal fsync", in(t, wal(0, 0, 1), wal(90, 10, 0.128)), finding.Fail, "(64 ms, 128 ms]"},
		{"wal healthy", "wal fsync", in(t, wal(0, 0, 1), wal(1000, 0, 1)), finding.OK, "(0, 1 ms]"},
		{"two slow of twenty: a hiccup", "wal fsync", in(t, wal(0, 0, 1), wal(18, 2, 0.128)), finding.OK, "a hiccup"},
		{"three slow of twenty warn", "wal fsync", in(t, wal(0, 0, 1), wal(17, 3, 0.032)), finding.Warn, "certainly above 10 ms"},
		{"wal p99 in 8-16 ms against 10 ms: between the bounds, warn", "wal fsync", in(t, wal(0, 0, 1), wal(90, 10, 0.016)), finding.Warn, "p99 between 8 ms and 16 ms; ok needs < 10 ms"},
		{"wal p99 certainly in 16-32 ms warns", "wal fsync", in(t, wal(0, 0, 1), wal(90, 10, 0.032)), finding.Warn, "certainly above 10 ms"},
		{"wal absent is unknown", "wal fsync", in(t, etcdBase(), etcdBase()), finding.Unknown, "absent"},
		{"wal without observations is unknown", "wal fsync", in(t, wal(5, 0, 1), wal(5, 0, 1)), finding.Unknown, "no observations"},
		{"wal with one scrape is unknown", "wal fsync", &Input{W: snapsAt(t, wal(1, 0, 1).String())}, finding.Unknown, "before and after"},
		{"backend commit p99 in (32 ms, 64 ms] only warns: cannot tell against 50 ms", "backend commit", in(t,
			etcdBase().hist(metrics.BackendCommit, "", diskBuckets, cumAt(0, 0, 1), 0),
			etcdBase().hist(metrics.BackendCommit, "", diskBuckets, cumAt(90, 10, 0.064), 1)), finding.Warn, "(32 ms, 64 ms]"},
		{"backend commit p99 certainly over 64 ms fails", "backend commit", in(t,
			etcdBase().hist(metrics.BackendCommit, "", diskBuckets, cumAt(0, 0, 1), 0),
			etcdBase().hist(metrics.BackendCommit, "", diskBuckets, cumAt(90, 10, 0.128), 1)), finding.Fail, "certainly above 50 ms"},
		// Slow applies are a rate over the run's requests, and warn only with another disk signal.
		{"slow applies alone never warn", "slow applies", in(t, counter(metrics.SlowApply, 1), counter(metrics.SlowApply, 4)), finding.OK, "3 (no request count: not a rate); no other signal agrees"},
		{"slow applies with a slow wal warn", "slow applies", in(t, wal(0, 0, 1).counter(metrics.SlowApply, 1), wal(90, 10, 0.032).counter(metrics.SlowApply, 4)), finding.Warn, "with wal fsync p99"},
		{"one slow apply in 1,000 requests: under the p99", "slow applies", withRun(in(t, wal(0, 0, 1).counter(metrics.SlowApply, 1), wal(90, 10, 0.032).counter(metrics.SlowApply, 2)), putRun(1)), finding.OK, "1 in 1000 requests = 1 per 1,000: under the p99"},
		{"30 per 1,000 alone stay ok", "slow applies", withRun(in(t, counter(metrics.SlowApply, 0), counter(metrics.SlowApply, 30)), putRun(1)), finding.OK, "30 per 1,000; no other signal agrees"},
		{"30 per 1,000 with a slow wal warn", "slow applies", withRun(in(t, wal(0, 0, 1).counter(metrics.SlowApply, 0), wal(90, 10, 0.032).counter(metrics.SlowApply, 30)), putRun(1)), finding.Warn, "30 per 1,000; with wal fsync p99"},
		{"no slow applies", "slow applies", in(t, counter(metrics.SlowApply, 1), counter(metrics.SlowApply, 1)), finding.OK, "0"},
		{"probe 98 ms fails", "disk probe", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Disk: []results.DiskResult{{Pattern: "fio", Dir: "/d", Fdatasync: results.Summary{P99: 98}}}}), finding.Fail, "98 ms"},
		{"no probe: not applicable", "disk probe", withRun(in(t, etcdBase(), etcdBase()), putRun(1)), "", ""},

		// network
		{"peer rtt p99 in (102 ms, 205 ms] warns", "peer round trip", in(t, rtt("b", 0, 0, 1), rtt("b", 90, 10, 0.2048)), finding.Warn, "to b"},
		{"peer rtt p99 certainly over 150 ms fails", "peer round trip", in(t, rtt("b", 0, 0, 1), rtt("b", 90, 10, 0.4096)), finding.Fail, "to b"},
		{"peer rtt healthy", "peer round trip", in(t, rtt("b", 0, 0, 1), rtt("b", 200, 0, 1)), finding.OK, "to b"},
		{"single member has no peers", "peer round trip", single(in(t, etcdBase(), etcdBase())), finding.OK, "single member"},
		{"peer rtt not sampled in a short window", "peer round trip", in(t, rtt("b", 2, 0, 1), rtt("b", 2, 0, 1)), finding.Unknown, "every 30 s"},
		{"peer rtt absent, member count unknown", "peer round trip", in(t, etcdBase(), etcdBase()), finding.Unknown, "absent"},
		{"peer send failures absent on etcd read as 0", "peer send failures", in(t, etcdBase(), etcdBase()), finding.OK, "0"},
		{"one peer send failure alone stays ok", "peer send failures", in(t,
			etcdBase().counter(metrics.PeerSentFailures, 1), etcdBase().counter(metrics.PeerSentFailures, 2)), finding.OK, "1 (no request count: not a rate); no other signal agrees"},
		{"peer send failures with heartbeat failures warn", "peer send failures", withRun(in(t,
			etcdBase().counter(metrics.PeerSentFailures, 1).counter(metrics.HeartbeatFailures, 0),
			etcdBase().counter(metrics.PeerSentFailures, 21).counter(metrics.HeartbeatFailures, 3)), putRun(1)), finding.Warn, "20 per 1,000; with 3 heartbeat send failures"},
		{"peer send failures with a slow peer rtt warn", "peer send failures", withRun(in(t,
			rtt("b", 0, 0, 1).counter(metrics.PeerSentFailures, 0), rtt("b", 90, 10, 0.2048).counter(metrics.PeerSentFailures, 50)), putRun(1)), finding.Warn, "50 per 1,000; with peer round trip p99"},
		{"a gap is unexplained, never the network", "client p50 minus", withRun(single(in(t, wal(0, 0, 1).counter(metrics.CPUSeconds, 0), wal(1000, 0, 1).counter(metrics.CPUSeconds, 1))), putRun(200)), finding.Unknown, "200 ms unexplained"},
		{"a small gap is unexplained too", "client p50 minus", withRun(single(in(t, wal(0, 0, 1), wal(1000, 0, 1))), putRun(2)), finding.Unknown, "1.5 ms unexplained"},
		{"gap without server metrics is unknown", "client p50 minus", withRun(single(in(t, etcdBase(), etcdBase())), putRun(200)), finding.Unknown, "server-side"},
		{"gap on bare dumps: not applicable", "client p50 minus", in(t, etcdBase(), etcdBase()), "", ""},

		// memory
		{"rss 900 MiB of 1 GiB fails", "peak RSS", in(t, etcdBase().gauge(metrics.RSS, 100*mib), etcdBase().gauge(metrics.RSS, 900*mib)), finding.Fail, "88%"},
		{"rss small", "peak RSS", in(t, etcdBase().gauge(metrics.RSS, 100*mib), etcdBase().gauge(metrics.RSS, 120*mib)), finding.OK, "12%"},
		{"rss with unknown memory", "peak RSS", func() *Input {
			i := in(t, etcdBase().gauge(metrics.RSS, 1), etcdBase().gauge(metrics.RSS, 1))
			i.MemoryBytes = 0
			return i
		}(), finding.Unknown, "--memory"},
		{"db larger than memory fails", "db size / memory", in(t, etcdBase().gauge(metrics.DBTotal, 1), etcdBase().gauge(metrics.DBTotal, 2*gib)), finding.Fail, "200%"},

		// cpu
		{"server cpu 95% fails", "server CPU", in(t, cpu(10), cpu(29)), finding.Fail, "95%"},
		{"server cpu 20%", "server CPU", in(t, cpu(10), cpu(14)), finding.OK, "20%"},
		{"server cpu without cores", "server CPU", func() *Input { i := in(t, cpu(1), cpu(2)); i.Cores = 0; return i }(), finding.Unknown, "--cores"},

		// client
		{"generator saturated", "generator CPU", withRun(in(t, etcdBase(), etcdBase()), &results.Run{DurationS: 10, Client: results.Client{CPUSeconds: 9.5, Cores: 1}}), finding.Fail, "95%"},
		{"generator embedded: graded under cpu", "generator CPU", withRun(in(t, etcdBase(), etcdBase()), &results.Run{DurationS: 10, Target: results.ClusterInfo{Embedded: true, InProcess: true}, Client: results.Client{CPUSeconds: 9.5, Cores: 1}}), "", ""},
		{"generator under a CPU quota: graded on the quota, not GOMAXPROCS", "generator CPU", withRun(in(t, etcdBase(), etcdBase()), &results.Run{DurationS: 10, Host: &results.Host{CPUs: 2, CgroupCPUQuota: 0.2}, Client: results.Client{CPUSeconds: 1.9, Cores: 2}}), finding.Fail, "on 0.2 cores = 95%"},
		{"generator cpu not recorded", "generator CPU", withRun(in(t, etcdBase(), etcdBase()), &results.Run{DurationS: 10}), finding.Unknown, "does not record"},
		{"pacer lag fails", "pacer lag", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put", TargetRPS: 100}}, Client: results.Client{PacingLagP99Ms: 150}}), finding.Fail, "150 ms"},
		{"closed loop has no pacer", "pacer lag", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put"}}}), "", ""},
		{"late starts with a lagging pacer warn", "late starts", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put", TargetRPS: 100, Requests: 100, LateStarts: 50}}, Client: results.Client{PacingLagP99Ms: 30}}), finding.Warn, "50 of 100"},
		{"late starts alone are a symptom", "late starts", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put", TargetRPS: 100, Requests: 100, LateStarts: 20}}}), finding.OK, "a symptom"},
		{"most requests late warn", "late starts", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put", TargetRPS: 100, Requests: 100, LateStarts: 60}}}), finding.Warn, "60 of 100"},

		// value size
		{"300 KiB values fail", "bytes per write request", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "put", Requests: 10, BytesSent: 10 * 300 * kib}}}), finding.Fail, "300 KiB"},
		{"1 KiB values", "bytes per write request", withRun(in(t, etcdBase(), etcdBase()), putRun(1)), finding.OK, "1 KiB"},
		{"reads only: no writes", "bytes per write request", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "range", Requests: 10}}}), finding.OK, "no writes"},
		{"received bytes per put fail", "received bytes per put", in(t,
			etcdBase().counter(metrics.GRPCReceived, 0).counter(metrics.PutTotal, 0),
			etcdBase().counter(metrics.GRPCReceived, 10*300*kib).counter(metrics.PutTotal, 10)), finding.Fail, "300 KiB per put"},
		{"received bytes per put absent", "received bytes per put", in(t, etcdBase(), etcdBase()), finding.Unknown, "absent"},
		// Issue 14, case 2: `bench range --keys 1` — 20,000 ranges and the one fill
		// put; the bytes of the ranges must not be divided by that put.
		{"20,000 ranges over 1 fill put: unknown, not fail", "received bytes per put", in(t,
			etcdBase().counter(metrics.GRPCReceived, 0).counter(metrics.PutTotal, 0),
			etcdBase().counter(metrics.GRPCReceived, 391*kib).counter(metrics.PutTotal, 1)), finding.Unknown, "too few"},
		{"reads outnumber writes: an upper bound, at most warn", "received bytes per put", in(t,
			etcdBase().counter(metrics.GRPCReceived, 0).counter(metrics.PutTotal, 0).
				counterL(metrics.GRPCMsgReceived, `grpc_method="Put"`, 0).counterL(metrics.GRPCMsgReceived, `grpc_method="Range"`, 0),
			etcdBase().counter(metrics.GRPCReceived, 20*300*kib).counter(metrics.PutTotal, 20).
				counterL(metrics.GRPCMsgReceived, `grpc_method="Put"`, 20).counterL(metrics.GRPCMsgReceived, `grpc_method="Range"`, 20000)), finding.Warn, "upper bound"},
		{"wal near probed bandwidth", "WAL write rate", withRun(in(t,
			etcdBase().gauge(metrics.WALWriteBytes, 0), etcdBase().gauge(metrics.WALWriteBytes, 900e6)), &results.Run{Disk: []results.DiskResult{{MBPerS: 100}}}), finding.Fail, "90%"},
		{"wal rate without probe: not applicable", "WAL write rate", withRun(in(t, etcdBase(), etcdBase()), putRun(1)), "", ""},

		// range size
		{"12,000 keys per range fail", "keys per range", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "range", Requests: 5, KeysReceived: 60000}}}), finding.Fail, "12000 keys"},
		{"20 MiB per range fail", "bytes per range", withRun(in(t, etcdBase(), etcdBase()), &results.Run{Ops: []results.Op{{Op: "range", Requests: 1, BytesReceived: 20 * mib}}}), finding.Fail, "20 MiB"},
		{"sent bytes per range fail", "sent bytes per range", in(t,
			etcdBase().counter(metrics.GRPCSent, 0).counter(metrics.RangeTotal, 0),
			etcdBase().counter(metrics.GRPCSent, 200*mib).counter(metrics.RangeTotal, 10)), finding.Fail, "20 MiB per range"},
		{"sent bytes over too few ranges are unknown", "sent bytes per range", in(t,
			etcdBase().counter(metrics.GRPCSent, 0).counter(metrics.RangeTotal, 0),
			etcdBase().counter(metrics.GRPCSent, 100*mib).counter(metrics.RangeTotal, 5)), finding.Unknown, "too few"},
		{"range duration p99 slow, no range size measured: unknown", "range duration", in(t,
			etcdBase().hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, 0, 1), 0),
			etcdBase().hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, 200, 1.024), 100)), finding.Unknown, "above 500 ms; no range size measured"},
		{"range duration p99 slow with 20 MiB ranges fails", "range duration", in(t,
			etcdBase().counter(metrics.GRPCSent, 0).counter(metrics.RangeTotal, 0).hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, 0, 1), 0),
			etcdBase().counter(metrics.GRPCSent, 200*20*mib).counter(metrics.RangeTotal, 200).hist(metrics.RangeDuration, "", diskBuckets, cumAt(0, 200, 1.024), 100)), finding.Fail, "above 500 ms; with sent 20 MiB per range"},

		// health
		{"no leader fails", "has leader", in(t, etcdBase(), newText().gauge(metrics.HasLeader, 0)), finding.Fail, "1 of 2"},
		{"a leader change without a run warns", "leader changes", in(t, counter(metrics.LeaderChanges, 1), counter(metrics.LeaderChanges, 2)), finding.Warn, "1"},
		{"four leader changes fail", "leader changes", in(t, counter(metrics.LeaderChanges, 1), counter(metrics.LeaderChanges, 5)), finding.Fail, "mixin"},
		{"a counter reset is no change", "leader changes", in(t, counter(metrics.LeaderChanges, 7), counter(metrics.LeaderChanges, 1)), finding.OK, "0"},
		{"failed proposals warn", "failed proposals", in(t, counter(metrics.ProposalsFailed, 0), counter(metrics.ProposalsFailed, 2)), finding.Warn, "2"},
		{"slow read indexes warn", "slow read indexes", in(t, counter(metrics.SlowReadIndex, 0), counter(metrics.SlowReadIndex, 1)), finding.Warn, "1"},
		{"heartbeat failures warn", "heartbeat send failures", in(t, counter(metrics.HeartbeatFailures, 0), counter(metrics.HeartbeatFailures, 1)), finding.Warn, "1"},
		{"quota 97% fails", "db size / quota", in(t, etcdBase(), etcdBase().gauge(metrics.Quota, 2*gib).gauge(metrics.DBTotal, 0.97*2*gib)), finding.Fail, "97%"},
		{"quota absent", "db size / quota", in(t, etcdBase(), etcdBase()), finding.Unknown, "absent"},
		{"fragmented large db warns", "db in use", in(t, etcdBase(), etcdBase().gauge(metrics.DBTotal, gib).gauge(metrics.DBInUse, 200*mib)), finding.Warn, "0.20"},
		{"fragmented small db is fine", "db in use", in(t, etcdBase(), etcdBase().gauge(metrics.DBTotal, 90*mib).gauge(metrics.DBInUse, 10*mib)), finding.OK, "0.11"},
		{"db over 8 GiB warns", "db size (", in(t, etcdBase(), etcdBase().gauge(metrics.DBTotal, 9*gib)), finding.Warn, "9 GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ruleBy(t, tc.rule).check(tc.in)
			if c.Severity != tc.want {
				t.Fatalf("severity = %q (%s), want %q", c.Severity, c.Observed, tc.want)
			}
			if !strings.Contains(c.Observed, tc.observed) {
				t.Errorf("observed %q does not contain %q", c.Observed, tc.observed)
			}
		})
	}
}

// TestUnknownNeverOK: with no metrics at all, every class is unknown or not
// applicable, and the verdict says what was not measured.
func TestUnknownNeverOK(t *testing.T) {
	w := snapsAt(t, etcdBase().String(), etcdBase().String())
	fs := evaluate(Rules, Input{Members: []*Window{w}, Leader: w})
	for _, f := range fs {
		if f.Class == finding.ClassHealth || f.Class == finding.ClassElection {
			continue // has_leader is present in etcdBase
		}
		if f.Severity != finding.Unknown {
			t.Errorf("%s = %s with no metrics (%s)", f.Class, f.Severity, f.Summary)
		}
	}
}

// TestBytesPerRequestDenominator: bytes are counted on the requests that carried
// them (successes); dividing by every request diluted them (before the fix 90
// failed puts made 100 KiB values read 10 KiB, ok).
func TestBytesPerRequestDenominator(t *testing.T) {
	run := &results.Run{Version: results.Version, Valid: true, DurationS: 10, Ops: []results.Op{
		{Op: "put", Requests: 100, Errors: 90, BytesSent: 10 * 100 * 1024},
		{Op: "range", Requests: 100, Errors: 50, KeysReceived: 50 * 2000, BytesReceived: 50 * 2 << 20},
	}}
	i := &Input{Run: run}
	if c := ruleBy(t, "bytes per write request").check(i); c.Severity != finding.Warn || !strings.Contains(c.Observed, "100 KiB per request over 10 ") {
		t.Errorf("bytes per write: %s %q, want warn at 100 KiB over the 10 successful puts", c.Severity, c.Observed)
	}
	if c := ruleBy(t, "keys per range").check(i); c.Severity != finding.Warn || !strings.Contains(c.Observed, "2000 keys per range over 50 ") {
		t.Errorf("keys per range: %s %q, want warn at 2000 over the 50 successful ranges", c.Severity, c.Observed)
	}
	if c := ruleBy(t, "bytes per range").check(i); c.Severity != finding.Warn {
		t.Errorf("bytes per range: %s %q, want warn at 2 MiB", c.Severity, c.Observed)
	}
	// Every put failed: nothing carried bytes, so the size is unknown, not ok.
	run.Ops[0].Errors, run.Ops[0].BytesSent = 100, 0
	if c := ruleBy(t, "bytes per write request").check(i); c.Severity != finding.Unknown {
		t.Errorf("all puts failed: %s %q, want unknown", c.Severity, c.Observed)
	}
}
