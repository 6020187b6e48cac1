package analyze

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// fixtureRun is a run file of 300 puts against the recorded etcd fixtures,
// with fixed host facts so the report is reproducible.
func fixtureRun(t *testing.T, version string) *results.Run {
	t.Helper()
	return &results.Run{
		Version: results.Version, Command: "bench put", Valid: true, DurationS: 2,
		Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}, Embedded: false,
			// The process on its port started when the member says it did
			// (process_start_time_seconds of both fixtures): a local member.
			Members: []results.Member{{Name: "default", ClientURLs: []string{"http://127.0.0.1:2379"}, IsLeader: true, Pid: 4242, ProcessStartS: 1795965314.6}}},
		Flags: map[string]string{"clients": "8"},
		Ops: []results.Op{{Op: "put", Requests: 300, ThroughputRPS: 150, BytesSent: 300 * 1040,
			Latency: results.Summary{P50: 4, P99: 12}, Service: results.Summary{P50: 3.5, P99: 11}}},
		Client: results.Client{CPUSeconds: 0.2, Cores: 2},
		Host:   &results.Host{CPUs: 2, MemoryBytes: 4 << 30, HostMemoryBytes: 8 << 30, CgroupMemoryLimitBytes: 4 << 30},
		Scrapes: []results.Scrape{
			{Member: "127.0.0.1:2379", URL: "http://127.0.0.1:2379/metrics", Phase: results.PhaseBefore, Time: "2026-01-01T00:00:00Z", Text: readFixture(t, "etcd-"+version+"-before.txt")},
			{Member: "127.0.0.1:2379", URL: "http://127.0.0.1:2379/metrics", Phase: results.PhaseAfter, Time: "2026-01-01T00:00:02Z", Text: readFixture(t, "etcd-"+version+"-after.txt")},
		},
	}
}

// TestRunReadsItsRoundTrips: the analysis of a run file judges the network by
// the round trips the run kept, as the command that wrote it did, and a PING's
// is the network's where both were measured.
func TestRunReadsItsRoundTrips(t *testing.T) {
	for _, c := range []struct {
		name    string
		network *results.Network
		want    finding.Severity
		source  string
	}{
		{"loopback PING", &results.Network{StatusRTTMs: 0.2, PingRTTMs: 0.04}, finding.OK, "HTTP/2 PING"},
		{"a delay of 3.5 ms each way", &results.Network{StatusRTTMs: 7.3, PingRTTMs: 7}, finding.Warn, "HTTP/2 PING"},
		{"Status call only", &results.Network{StatusRTTMs: 7.3}, finding.Warn, "Status call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := fixtureRun(t, "3.6")
			run.Ops[0].Latency.P50 = c.network.RTTMs() + 1
			run.Network = c.network
			rep, err := Run(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var rtt *finding.Evidence
			for _, f := range rep.Findings {
				for i, e := range f.Evidence {
					if strings.HasPrefix(e.Signal, "client round trip") {
						rtt = &f.Evidence[i]
					}
				}
			}
			if rtt == nil || !strings.Contains(rtt.Observed, c.source) {
				t.Fatalf("client round trip evidence %+v, want it measured by %s", rtt, c.source)
			}
			if rtt.Severity != c.want {
				t.Errorf("client round trip %s (%s), want %s", rtt.Severity, rtt.Observed, c.want)
			}
		})
	}
}

func TestRunFixtures(t *testing.T) {
	for _, v := range []string{"3.6", "3.4"} {
		t.Run(v, func(t *testing.T) {
			rep, err := Run(fixtureRun(t, v), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict.Status != finding.StatusPass || rep.Verdict.Bottleneck != finding.BottleneckNone {
				t.Errorf("verdict = %+v, want pass/none", rep.Verdict)
			}
			for _, f := range rep.Findings {
				switch f.Class {
				case finding.ClassDisk, finding.ClassNetwork, finding.ClassMemory, finding.ClassCPU, finding.ClassClient, finding.ClassValueSize:
					if f.Severity != finding.OK {
						t.Errorf("%s = %s (%s), want ok on a healthy fixture", f.Class, f.Severity, f.Summary)
					}
				}
			}
			if rep.Hardware == nil || rep.Hardware.WorkloadTier != "small" {
				t.Errorf("hardware = %+v, want workload tier small", rep.Hardware)
			}
			if rep.Budget == nil || rep.Budget.Op != "put" {
				t.Fatalf("budget = %+v", rep.Budget)
			}
		})
	}
}

func TestRunBadInput(t *testing.T) {
	if _, err := Run(nil, Options{}); err == nil {
		t.Error("Run(nil) did not fail")
	}
	r := fixtureRun(t, "3.6")
	r.Version = 99
	if _, err := Run(r, Options{}); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("Run(version 99) error = %v", err)
	}
	r = fixtureRun(t, "3.6")
	r.Scrapes[0].Text = "garbage {"
	r.Scrapes[1].Error = "scrape http://127.0.0.1:2379/metrics: connection refused"
	r.Scrapes[1].Text = ""
	rep, err := Run(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) < 2 {
		t.Errorf("notes = %v, want one per broken scrape", rep.Notes)
	}
	for _, f := range rep.Findings {
		if f.Class == finding.ClassDisk && f.Severity != finding.Unknown {
			t.Errorf("disk = %s without usable scrapes, want unknown", f.Severity)
		}
	}
}

func shared(f finding.Finding, s float64) finding.Finding { f.Share = &s; return f }

func TestVerdict(t *testing.T) {
	f := func(c finding.Class, s finding.Severity) finding.Finding {
		return finding.Finding{Class: c, Severity: s, Summary: string(c) + " summary"}
	}
	valid := &results.Run{Valid: true}
	heldBackRun := &results.Run{Valid: false, InvalidReason: "sent 19 req/s of 20 target (95%)", Ops: []results.Op{{Op: "put", Unsent: 5}}}
	lateRun := &results.Run{Valid: false, InvalidReason: "sent 41 req/s of 50 target (81%)", Ops: []results.Op{{Op: "put", LateStarts: 200}}}
	for _, tc := range []struct {
		name       string
		run        *results.Run
		findings   []finding.Finding
		status     finding.Status
		bottleneck string
		ranked     string
	}{
		{"all ok", valid, []finding.Finding{f(finding.ClassDisk, finding.OK), f(finding.ClassCPU, finding.OK)}, finding.StatusPass, finding.BottleneckNone, ""},
		{"a warning passes and names the bottleneck", valid, []finding.Finding{f(finding.ClassDisk, finding.Warn), f(finding.ClassCPU, finding.OK)}, finding.StatusPass, "disk", "disk"},
		{"network outranks disk by its share", valid, []finding.Finding{shared(f(finding.ClassDisk, finding.Warn), 0.2), shared(f(finding.ClassNetwork, finding.Warn), 0.8)}, finding.StatusPass, "network", "network,disk"},
		{"a fail outranks a larger share", valid, []finding.Finding{shared(f(finding.ClassDisk, finding.Fail), 0.2), shared(f(finding.ClassNetwork, finding.Warn), 0.8)}, finding.StatusFail, "disk", "disk,network"},
		{"cpu outranks disk at one severity", valid, []finding.Finding{shared(f(finding.ClassDisk, finding.Warn), 0.9), f(finding.ClassCPU, finding.Warn)}, finding.StatusPass, "cpu", "cpu,disk"},
		{"a full quota fails a run that missed its rate", &results.Run{Valid: false, InvalidReason: "achieved 41% of the target rate"}, []finding.Finding{f(finding.ClassQuota, finding.Fail), f(finding.ClassDisk, finding.Warn)}, finding.StatusFail, "quota", "quota,disk"},
		{"an old version is context, not a bottleneck", valid, []finding.Finding{f(finding.ClassVersion, finding.Warn), f(finding.ClassDisk, finding.OK)}, finding.StatusPass, finding.BottleneckNone, ""},
		{"cpu outranks disk", valid, []finding.Finding{f(finding.ClassCPU, finding.Fail), f(finding.ClassDisk, finding.Fail), f(finding.ClassNetwork, finding.Warn)}, finding.StatusFail, "cpu", "cpu,disk,network"},
		{"value size explains disk", valid, []finding.Finding{f(finding.ClassValueSize, finding.Fail), f(finding.ClassDisk, finding.Fail)}, finding.StatusFail, "value-size", "value-size,disk"},
		{"saturated generator invalidates", valid, []finding.Finding{f(finding.ClassClient, finding.Fail), f(finding.ClassDisk, finding.Fail)}, finding.StatusInvalid, "client", "client,disk"},
		{"clients held back behind failing values fail the run", heldBackRun, []finding.Finding{f(finding.ClassValueSize, finding.Fail), f(finding.ClassDisk, finding.Warn)}, finding.StatusFail, "value-size", "value-size,disk"},
		{"clients late behind a starved cpu fail the run", lateRun, []finding.Finding{f(finding.ClassCPU, finding.Fail), f(finding.ClassWatch, finding.Fail)}, finding.StatusFail, "cpu", "cpu,watch"},
		{"clients held back by a healthy member stay invalid", heldBackRun, []finding.Finding{f(finding.ClassDisk, finding.Warn)}, finding.StatusInvalid, "disk", "disk"},
		{"clients held back and a saturated generator stay invalid", heldBackRun, []finding.Finding{f(finding.ClassValueSize, finding.Fail), f(finding.ClassClient, finding.Fail)}, finding.StatusInvalid, "client", "client,value-size"},
		{"invalid run names the warning", &results.Run{Valid: false, InvalidReason: "achieved 80% of the target rate"}, []finding.Finding{f(finding.ClassDisk, finding.Warn)}, finding.StatusInvalid, "disk", "disk"},
		{"health alone fails without a bottleneck", valid, []finding.Finding{f(finding.ClassHealth, finding.Fail), f(finding.ClassDisk, finding.OK)}, finding.StatusFail, finding.BottleneckNone, ""},
		{"dumps have no run", nil, []finding.Finding{f(finding.ClassMemory, finding.Fail)}, finding.StatusFail, "memory", "memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict(tc.run, tc.findings)
			if v.Status != tc.status || v.Bottleneck != tc.bottleneck || strings.Join(v.Ranked, ",") != tc.ranked {
				t.Errorf("verdict = %+v, want %s/%s ranked %q", v, tc.status, tc.bottleneck, tc.ranked)
			}
			if v.Summary == "" {
				t.Error("empty summary")
			}
		})
	}
}

// TestReportJSON pins the output contract's keys.
func TestReportJSON(t *testing.T) {
	rep, err := Run(fixtureRun(t, "3.6"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(rep); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verdict", "findings", "budget", "hardware"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	v := m["verdict"].(map[string]any)
	for _, k := range []string{"status", "bottleneck", "summary"} {
		if _, ok := v[k]; !ok {
			t.Errorf("verdict lacks %q", k)
		}
	}
	f := m["findings"].([]any)[0].(map[string]any)
	for _, k := range []string{"class", "severity", "summary", "evidence"} {
		if _, ok := f[k]; !ok {
			t.Errorf("finding lacks %q", k)
		}
	}
	e := f["evidence"].([]any)[0].(map[string]any)
	for _, k := range []string{"signal", "observed", "threshold", "source"} {
		if _, ok := e[k]; !ok {
			t.Errorf("evidence lacks %q", k)
		}
	}
}

// TestFailingRequestsFailTheVerdict: a healthy fixture whose requests failed, or
// took 60 s and more, is a fail naming the codes; before, errors never reached
// the verdict (the run read pass), and a pacer whose lag was never measured
// graded ok.
func TestFailingRequestsFailTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*results.Run)
		want string // in the verdict summary
	}{
		{"errors", func(r *results.Run) {
			r.Ops[0].Errors, r.Ops[0].ErrorsByCode = 40, map[string]int64{"ResourceExhausted": 38, "Unavailable": 2}
		}, "40 of 300 requests failed (ResourceExhausted 38, Unavailable 2)"},
		{"over 60 s", func(r *results.Run) { r.Ops[0].OverMaxLatency = 3 }, "3 requests took ≥ 60 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := fixtureRun(t, "3.6")
			tc.mod(run)
			rep, err := Run(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict.Status != finding.StatusFail || !strings.Contains(rep.Verdict.Summary, tc.want) {
				t.Errorf("verdict %+v, want fail with %q", rep.Verdict, tc.want)
			}
		})
	}
	t.Run("pacer lag not measured", func(t *testing.T) {
		run := fixtureRun(t, "3.6")
		run.Ops[0].TargetRPS = 150 // open loop, but the pacer never slept
		c := pacingRule(&Input{Run: run}, limPacerLag)
		if c.Severity != finding.Unknown {
			t.Errorf("pacer lag never measured grades %s (%s), want unknown", c.Severity, c.Observed)
		}
		run.Client.PacingWakeups = 1500
		if c := pacingRule(&Input{Run: run}, limPacerLag); c.Severity != finding.OK {
			t.Errorf("a measured lag of 0 grades %s", c.Severity)
		}
	})
}

// TestLocalOnlyWhenProven: a member is graded against this host only when the
// process on its client port is the member (their starts agree); another
// process on a loopback port (a tunnel, a proxy) leaves it graded from what it
// exposes, and so does a member that advertises loopback but was not found.
func TestLocalOnlyWhenProven(t *testing.T) {
	for _, c := range []struct {
		name   string
		pid    int
		start  float64
		source string
		unseen string
	}{
		{"the process on its port is the member", 4242, 1795965314.6, "host CPUs", ""},
		{"another process owns its port", 4242, 1795960000, "its GOMAXPROCS", "another process"},
		{"nothing local was found", 0, 0, "its GOMAXPROCS", unseenMember},
		{"a run file from before the start was kept", 4242, 0, "host CPUs", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := fixtureRun(t, "3.6")
			m := &run.Target.Members[0]
			m.Pid, m.ProcessStartS = c.pid, c.start
			windows, _ := windowsFromScrapes(run.Scrapes)
			r := resourcesOf(Options{}, run, m, windows[0])
			if !strings.HasPrefix(r.coresSource, c.source) || !strings.Contains(r.unseen, c.unseen) || (c.unseen == "") != (r.unseen == "") {
				t.Errorf("cores %v from %q, unseen %q; want from %q, unseen %q", r.cores, r.coresSource, r.unseen, c.source, c.unseen)
			}
		})
	}
}

// TestDumpsExposeTheirResources: analyze --metrics grades CPU against the cores
// the dumps expose (GOMAXPROCS, an upper bound) where no flag gives them.
func TestDumpsExposeTheirResources(t *testing.T) {
	rep, err := Dumps(readFixture(t, "etcd-3.6-before.txt"), readFixture(t, "etcd-3.6-after.txt"), Options{WindowSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			seen = seen || (f.Class == finding.ClassCPU && strings.Contains(e.Observed, "GOMAXPROCS"))
		}
	}
	if !seen {
		t.Error("the server CPU is not graded against the GOMAXPROCS the dumps expose")
	}
}
