package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// limitsRun is a run of local members, each of which used 4 CPU-s in the 10 s
// window (0.4 cores) and peaked at 250 MiB RSS, on a host of 2 CPUs and 24 GiB.
func limitsRun(t *testing.T, host results.Host, members ...results.Member) *results.Run {
	t.Helper()
	run := &results.Run{Version: results.Version, Command: "bench put", Valid: true, DurationS: 10,
		Target: results.ClusterInfo{Embedded: true, Members: members},
		Host:   &host, Client: results.Client{CPUSeconds: 1, Cores: 2}}
	for _, m := range members {
		u := m.ClientURLs[0]
		run.Target.Endpoints = append(run.Target.Endpoints, u)
		for i, phase := range []string{results.PhaseBefore, results.PhaseAfter} {
			text := etcdBase().gauge(metrics.RSS, 250<<20).counter(metrics.CPUSeconds, float64(4*i)).String()
			run.Scrapes = append(run.Scrapes, results.Scrape{Member: memberName(u), URL: u + "/metrics", Phase: phase,
				Time: fmt.Sprintf("2026-01-01T00:00:%02dZ", 10*i), Text: text})
		}
	}
	return run
}

func TestMemberResources(t *testing.T) {
	free := results.Host{CPUs: 2, MemoryBytes: 24 << 30, HostMemoryBytes: 24 << 30}
	// etcdperf itself under limits its members need not share.
	limited := results.Host{CPUs: 2, MemoryBytes: 400 << 20, HostMemoryBytes: 24 << 30, CgroupMemoryLimitBytes: 400 << 20, CgroupCPUQuota: 0.2}
	capped := results.Member{Name: "a", ClientURLs: []string{"http://127.0.0.1:2379"}, Pid: 100, MemoryLimitBytes: 300 << 20, CPUQuotaCores: 0.5}
	unlimited := results.Member{Name: "b", ClientURLs: []string{"http://127.0.0.1:22379"}, Pid: 101}
	unread := results.Member{Name: "c", ClientURLs: []string{"http://127.0.0.1:32379"}, MemoryLimitBytes: 300 << 20}
	type want struct {
		member   string
		signal   string
		severity finding.Severity
		observed string
	}
	for _, tc := range []struct {
		name string
		run  *results.Run
		opts Options
		want []want
	}{
		{"each member on its own limits", limitsRun(t, free, capped, unlimited), Options{}, []want{
			{"127.0.0.1:2379", "peak RSS", finding.Fail, "of 300 MiB (member cgroup limit) = 83%"},
			{"127.0.0.1:2379", "server CPU", finding.Warn, "on 0.5 cores (member cgroup quota) = 80%"},
			{"127.0.0.1:22379", "peak RSS", finding.OK, "(host RAM)"},
			{"127.0.0.1:22379", "server CPU", finding.OK, "on 2 cores (host CPUs) = 20%"},
		}},
		{"options win", limitsRun(t, free, capped, unlimited), Options{Cores: 4, MemoryBytes: 1 << 30}, []want{
			{"127.0.0.1:2379", "peak RSS", finding.OK, "of 1 GiB (--memory)"},
			{"127.0.0.1:2379", "server CPU", finding.OK, "on 4 cores (--cores) = 10%"},
		}},
		{"a member without limits has the machine, not etcdperf's cgroup", limitsRun(t, limited, unlimited, unread), Options{}, []want{
			{"127.0.0.1:22379", "peak RSS", finding.OK, "of 24 GiB (host RAM)"},
			{"127.0.0.1:22379", "server CPU", finding.OK, "on 2 cores (host CPUs)"},
			// No pid: its limits were not read, so the host facts apply as before.
			{"127.0.0.1:32379", "peak RSS", finding.Warn, "of 400 MiB (cgroup limit)"},
			{"127.0.0.1:32379", "server CPU", finding.Fail, "on 0.2 cores (cgroup quota)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(tc.run, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				e, ok := memberEvidence(rep, w.member, w.signal)
				if !ok {
					t.Errorf("%s: no %q evidence", w.member, w.signal)
					continue
				}
				if e.Severity != w.severity || !strings.Contains(e.Observed, w.observed) {
					t.Errorf("%s %s = %s %q, want %s containing %q", w.member, w.signal, e.Severity, e.Observed, w.severity, w.observed)
				}
			}
		})
	}
}

// memberEvidence is the evidence of one member whose signal starts with signal.
func memberEvidence(rep Result, member, signal string) (finding.Evidence, bool) {
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if e.Member == member && strings.HasPrefix(e.Signal, signal) {
				return e, true
			}
		}
	}
	return finding.Evidence{}, false
}

// TestMemberWait reports a local member's measured wait for a CPU beside its
// CPU time, as evidence that never grades on its own.
func TestMemberWait(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		wait *float64
		// busy is the host's CPUs' busy share (2 CPUs, a generator at 0.2
		// cores); 0: not read.
		busy float64
		sev  finding.Severity
		want string
	}{
		{"not measured", nil, 0, "", ""},
		{"waited as long as it ran", f(4), 0.9, finding.OK, "waited 4.00 s for a CPU beside 4.0 CPU-s used = 50%"},
		{"waited for the cluster itself", f(40), 0.45, finding.OK, "= 91% of their runnable time, the host's CPUs busy 45%; work besides the members and the generator took 0.3 cores, less than the member's 0.4: they wait for each other"},
		{"waited for a neighbour", f(40), 0.9, finding.Fail, "= 91% of their runnable time, the host's CPUs busy 90%; work besides the members and the generator took 1.2 cores, more than the member's own 0.4: other work takes its CPU"},
		{"neighbour unknown", f(40), 0, finding.OK, "the CPU of work besides the members and the generator is unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// 4 CPU-s over the window.
			i := withRun(single(in(t, walText(0, 0, 1, 0), walText(0, 100, 0.001, 4))), putRun(2))
			i.Run.Target.Members = []results.Member{{Name: "m0", Pid: 7, CPUWaitS: c.wait}}
			i.Run.Host = &results.Host{CPUs: 2}
			i.Run.Client.CPUSeconds = 2 // 0.2 cores over the run's 10 s
			if c.busy > 0 {
				i.Run.HostCPUBusy = &c.busy
			}
			got := memberWaitRule(i, Limits{})
			if got.Severity != c.sev || !strings.Contains(got.Observed, c.want) {
				t.Errorf("%s (%s), want %s with %q", got.Severity, got.Observed, c.sev, c.want)
			}
		})
	}
}
