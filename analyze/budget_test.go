package analyze

import (
	"math"
	"slices"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// TestMultiMember grades a 3-member cluster from run-file scrapes: the leader is
// found from is_leader, replication is peer RTT plus the fsync of the follower the
// quorum waits for, and per-member evidence names its member and role.
func TestMultiMember(t *testing.T) {
	rttBounds := []float64{0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256, 0.0512}
	cumRTT := func(n float64, le float64) []float64 {
		out := make([]float64, len(rttBounds))
		for i, b := range rttBounds {
			if b >= le {
				out[i] = n
			}
		}
		return out
	}
	member := func(leader bool, walLE float64, n float64) string {
		m := etcdBase().gauge(metrics.IsLeader, map[bool]float64{true: 1, false: 0}[leader]).
			hist(metrics.WALFsync, "", diskBuckets, cumAt(0, n, walLE), 1)
		if leader {
			m.hist(metrics.PeerRTT, `To="b"`, rttBounds, cumRTT(n, 0.0032), 1).
				hist(metrics.PeerRTT, `To="c"`, rttBounds, cumRTT(n, 0.0064), 1)
		}
		return m.String()
	}
	sc := func(name, phase, tm, text string) results.Scrape {
		return results.Scrape{Member: name, Phase: phase, Time: tm, Text: text}
	}
	run := &results.Run{Version: results.Version, Valid: true, DurationS: 10,
		Target: results.ClusterInfo{Members: []results.Member{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		Ops:    []results.Op{{Op: "put", Requests: 1000, BytesSent: 1000 * 100, Service: results.Summary{P50: 10, P99: 40}}},
		Scrapes: []results.Scrape{
			sc("b", results.PhaseBefore, "2026-01-01T00:00:00Z", member(false, 0.001, 0)),
			sc("a", results.PhaseBefore, "2026-01-01T00:00:00Z", member(true, 0.001, 0)),
			sc("c", results.PhaseBefore, "2026-01-01T00:00:00Z", member(false, 0.001, 0)),
			sc("a", results.PhaseAfter, "2026-01-01T00:00:10Z", member(true, 0.002, 1000)),
			sc("b", results.PhaseAfter, "2026-01-01T00:00:10Z", member(false, 0.004, 1000)),
			sc("c", results.PhaseAfter, "2026-01-01T00:00:10Z", member(false, 0.064, 1000)), // a slow follower disk
		}}
	rep, err := Run(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The slow follower is a risk, not the bottleneck: the leader's own fsync and
	// the queue behind it explain 5% of the client p99.
	if rep.Verdict.Bottleneck != finding.BottleneckNone || !slices.Contains(rep.Verdict.Risks, string(finding.ClassDisk)) {
		t.Errorf("bottleneck %s, risks %v, want none with the disk a risk: %s", rep.Verdict.Bottleneck, rep.Verdict.Risks, rep.Verdict.Summary)
	}
	disk := finding.Finding{}
	for _, f := range rep.Findings {
		if f.Class == finding.ClassDisk {
			disk = f
		}
	}
	members := map[string]finding.Severity{}
	for _, e := range disk.Evidence {
		if e.Signal == Rules[0].Signal {
			members[e.Where()] = e.Severity
		}
	}
	// c fails the fsync threshold, but as one follower of three it is a risk:
	// the leader and b still commit every write.
	if members["a (leader)"] != finding.OK || members["b (follower)"] != finding.OK || members["c (follower)"] != finding.Warn {
		t.Errorf("wal fsync per member = %v, want a, b ok and c warn (a follower's risk)", members)
	}
	if rep.Verdict.Status != finding.StatusPass {
		t.Errorf("status %s, want pass: a slow follower does not slow the clients", rep.Verdict.Status)
	}
	var rep50, wal50 *float64
	for _, p := range rep.Budget.Parts {
		switch p.Component {
		case finding.PartReplication:
			rep50 = p.P50Ms
		case finding.PartWAL:
			wal50 = p.P50Ms
		}
	}
	// Leader WAL: all in (1, 2] ms → p50 1.5 ms. Replication: the RTT of both
	// peers merged (p50 3.2 ms, the top of (1.6, 3.2]) plus the fsync p50 of the
	// follower the quorum waits for: the faster of two (b: 3 ms, the middle of (2, 4]).
	if wal50 == nil || math.Abs(*wal50-1.5) > 1e-9 {
		t.Errorf("wal p50 = %v, want 1.5", wal50)
	}
	if rep50 == nil || math.Abs(*rep50-(3.2+3)) > 1e-9 {
		t.Errorf("replication p50 = %v, want 6.2", ptrVal(rep50))
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestWindowsFromScrapes(t *testing.T) {
	text := func(v float64) string { return etcdBase().counter(metrics.PutTotal, v).String() }
	scrapes := []results.Scrape{
		{Member: "m", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:00Z", Text: text(1)},
		{Member: "m", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:01Z", Text: text(10)}, // a retry: the last before counts
		{Member: "m", Phase: results.PhaseDuring, Time: "2026-01-01T00:00:05Z", Text: text(50)},
		{Member: "m", Phase: results.PhaseAfter, Time: "2026-01-01T00:00:09Z", Text: text(100)},
		{Member: "m", Phase: results.PhaseAfter, Time: "2026-01-01T00:00:20Z", Text: text(500)}, // later: ignored
		{Member: "m", Phase: results.PhaseDuring, Time: "2026-01-01T00:00:06Z", Error: "timeout"},
	}
	ws, notes := windowsFromScrapes(scrapes)
	if len(ws) != 1 || len(ws[0].Snaps) != 3 || len(notes) != 1 {
		t.Fatalf("windows %d, snaps %d, notes %v", len(ws), len(ws[0].Snaps), notes)
	}
	if d, _ := ws[0].CounterDelta(metrics.PutTotal, nil); d != 90 {
		t.Errorf("delta = %g, want 90 (last before → first after)", d)
	}
	if s := ws[0].Seconds(); s != 8 {
		t.Errorf("window = %g s, want 8", s)
	}
}

// TestDiskShareCountsQueueing: writes at 150/s on a disk that takes 8 ms an fsync
// (a 120-IOPS disk) keep its fsyncs busy all the time, so the client p50 of 400 ms
// is mostly queueing behind it: the disk's share counts that wait, where the WAL
// p50 alone (6 ms) read 2% of the client latency. On a fast disk the same rest is
// not the disk's.
func TestDiskShareCountsQueueing(t *testing.T) {
	runOf := func(walLE, walSum float64) *results.Run {
		sc := func(phase, tm, text string) results.Scrape {
			return results.Scrape{Member: "m", Phase: phase, Time: tm, Text: text}
		}
		text := func(n, sum float64) string {
			return etcdBase().hist(metrics.WALFsync, "", diskBuckets, cumAt(0, n, walLE), sum).String()
		}
		return &results.Run{Version: results.Version, Valid: true, DurationS: 10,
			Ops: []results.Op{{Op: "put", Requests: 1500, TargetRPS: 150, Service: results.Summary{P50: 400, P99: 900}}},
			Scrapes: []results.Scrape{
				sc(results.PhaseBefore, "2026-01-01T00:00:00Z", text(0, 0)),
				sc(results.PhaseAfter, "2026-01-01T00:00:10Z", text(1200, walSum)),
			}}
	}
	for _, tc := range []struct {
		name             string
		walLE, walSum    float64
		minShare, maxShr float64
	}{
		// 1,200 fsyncs of ~8 ms in 10 s: busy 96% of the window.
		{"saturated disk", 0.008, 9.6, 0.9, 1},
		// 1,200 fsyncs of ~0.5 ms: busy 6%; the wait behind them is a fraction of a ms.
		{"idle disk", 0.001, 0.6, 0, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runOf(tc.walLE, tc.walSum)
			run.Network = &results.Network{StatusRTTMs: 0.2} // the round trip the run measured
			rep, err := Run(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var share *float64
			for _, f := range rep.Findings {
				if f.Class == finding.ClassDisk {
					share = f.Share
				}
			}
			if share == nil || *share < tc.minShare || *share > tc.maxShr {
				t.Errorf("disk share %v, want in [%g, %g]; budget %+v", ptrVal(share), tc.minShare, tc.maxShr, rep.Budget.Parts)
			}
		})
	}
}

// TestTailBudget: the client p99 is explained from measured parts only: the
// members' gRPC handling time where exposed (it holds the WAL and the apply),
// the PINGs' round trip, the generator's lag and a stall's wait; the rest is
// unexplained.
func TestTailBudget(t *testing.T) {
	grpcBounds := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
	handling := func(n float64) string {
		cum := make([]float64, len(grpcBounds))
		for i, b := range grpcBounds {
			if b >= 0.005 {
				cum[i] = n * 0.98
			}
			if b >= 0.1 {
				cum[i] = n
			}
		}
		return etcdBase().gauge(metrics.IsLeader, 1).
			hist(metrics.WALFsync, "", diskBuckets, cumAt(n, 0, 1), n*0.0005).
			hist(metrics.GRPCHandling, `grpc_method="Put",grpc_service="etcdserverpb.KV",grpc_type="unary"`, grpcBounds, cum, n*0.004).String()
	}
	pings := spread{fast: 400, slow: 30_000, tail: 0.02}
	for _, tc := range []struct {
		name                   string
		extensive              bool
		stallS                 float64
		server99, stall99, r99 float64 // want, ms; -1: unknown
	}{
		{"handling exposed", true, 0, 75, -1, 400 - 75 - 30 - 5}, // 2% in (50 ms, 100 ms]: p99 halfway
		{"handling absent: the server's parts stand in", false, 0, -1, -1, -1},
		{"a 3 s stall in 100 s", true, 3, 75, 2000, 0},
	} {
		text := func(n float64) string {
			if tc.extensive {
				return handling(n)
			}
			return etcdBase().gauge(metrics.IsLeader, 1).hist(metrics.WALFsync, "", diskBuckets, cumAt(n, 0, 1), n*0.0005).String()
		}
		run := &results.Run{Version: results.Version, Valid: true, DurationS: 100,
			Target:        results.ClusterInfo{Endpoints: []string{"127.0.0.1:2379"}, Members: []results.Member{{Name: "a"}}},
			Ops:           []results.Op{{Op: "put", Requests: 10000, Service: results.Summary{P50: 3, P99: 400}}},
			Client:        results.Client{PacingLagP99Ms: 5, PacingWakeups: 10000},
			EndpointLoads: []results.EndpointLoad{{Endpoint: "127.0.0.1:2379", Pings: 1000, PingHist: pings.hist(t, 1000)}},
			Scrapes: []results.Scrape{
				{Member: "a", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:00Z", Text: text(0)},
				{Member: "a", Phase: results.PhaseAfter, Time: "2026-01-01T00:01:40Z", Text: text(10000)},
			}}
		if tc.stallS > 0 {
			run.Stall = &results.Stall{Seconds: tc.stallS}
		}
		b := computeBudget(&Input{Run: run, Members: windowsOf(t, run), Leader: windowsOf(t, run)[0], PeersKnown: true})
		got := map[string]*float64{}
		for _, p := range b.Parts {
			got[p.Component] = p.P99Ms
		}
		check := func(part string, want float64) {
			v := got[part]
			switch {
			case want < 0 && v != nil:
				t.Errorf("%s: %s p99 %v, want unknown", tc.name, part, *v)
			case want >= 0 && (v == nil || math.Abs(*v-want) > want*0.05+0.5):
				t.Errorf("%s: %s p99 %v, want %.1f", tc.name, part, ptrVal(v), want)
			}
		}
		check(finding.PartServer, tc.server99)
		check(finding.PartStall, tc.stall99)
		check(finding.PartNetwork, 30)
		check(finding.PartGenerator, 5)
		if tc.r99 >= 0 {
			check(finding.PartRest, tc.r99)
		}
	}
}

// windowsOf is the run's scrapes as windows.
func windowsOf(t *testing.T, run *results.Run) []*Window {
	t.Helper()
	ws, _ := windowsFromScrapes(run.Scrapes)
	if len(ws) == 0 {
		t.Fatal("no windows")
	}
	return ws
}
