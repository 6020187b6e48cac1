package analyze

import (
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// busyMember is the input of a member that used 6 CPU-s in the 10 s window (0.6 cores).
func busyMember(t *testing.T) *Input {
	return in(t, etcdBase().counter(metrics.CPUSeconds, 0), etcdBase().counter(metrics.CPUSeconds, 6))
}

func TestSharedHostCPURule(t *testing.T) {
	run := func(eps string, inProcess bool, clientCPU float64) *results.Run {
		return &results.Run{Version: results.Version, DurationS: 10,
			Target: results.ClusterInfo{Endpoints: []string{eps}, InProcess: inProcess},
			Host:   &results.Host{CPUs: 2}, Client: results.Client{CPUSeconds: clientCPU, Cores: 2},
			Ops: []results.Op{{Op: "put", TargetRPS: 1000}}}
	}
	closed := func(r *results.Run) *results.Run { r.Ops[0].TargetRPS = 0; return r }
	quota := func(r *results.Run, embedded bool) *results.Run {
		r.Host.CgroupCPUQuota, r.Target.Embedded = 0.5, embedded
		return r
	}
	for _, tc := range []struct {
		name string
		run  *results.Run
		want finding.Severity
	}{
		{"both light", run("http://127.0.0.1:2379", false, 2), finding.OK},           // 0.6+0.2 of 2 = 40%
		{"together saturate", run("http://127.0.0.1:2379", false, 13), finding.Fail}, // 0.6+1.3 of 2 = 95%
		{"busy", run("http://localhost:2379", false, 8.5), finding.Warn},             // 0.6+0.85 of 2 = 72%
		{"remote cluster", run("http://10.0.0.1:2379", false, 12), ""},
		// A closed loop saturates the host by design: the host's capacity, not the cluster's want.
		{"a closed loop saturates", closed(run("http://127.0.0.1:2379", false, 13)), finding.OK},
		{"in-process etcd", run("http://127.0.0.1:2379", true, 12), ""},
		// The generator alone is under a 0.5-CPU quota: 0.6+0.5 of the host's 2 = 55%.
		{"generator's quota, members outside it", quota(run("http://127.0.0.1:2379", false, 5), false), finding.OK},
		// Embedded members are the generator's children, in its cgroup: 0.6+0.5 of 0.5 = 220%.
		{"embedded members share the generator's quota", quota(run("http://127.0.0.1:2379", false, 5), true), finding.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sharedHostCPURule(withRun(busyMember(t), tc.run), limCPU)
			if c.Severity != tc.want {
				t.Errorf("severity %q, want %q (%s)", c.Severity, tc.want, c.Observed)
			}
		})
	}
}

func TestHostPressureRule(t *testing.T) {
	run := func(durS, share float64) *results.Run {
		return &results.Run{Version: results.Version, DurationS: durS, HostCPUPressure: &share,
			Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}},
			Host:   &results.Host{CPUs: 2}, Ops: []results.Op{{Op: "put", TargetRPS: 1000}}}
	}
	// closed: a closed loop whose generator took gen cores (the member 0.6).
	closed := func(r *results.Run, gen float64) *results.Run {
		r.Ops[0].TargetRPS, r.Client.CPUSeconds = 0, gen*r.DurationS
		return r
	}
	busy := func(r *results.Run, b float64) *results.Run { r.HostCPUBusy = &b; return r }
	busiest := func(r *results.Run, b float64) *results.Run { r.HostCPUBusiest = &b; return r }
	lim := Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio}
	cores := func(r *results.Run, n int) *results.Run { r.Host.CPUs = n; return r }
	for _, tc := range []struct {
		name string
		run  *results.Run
		want finding.Severity
	}{
		{"quiet host", run(10, 0.1), finding.OK},
		{"contended half the run", run(10, 0.6), finding.Warn},
		{"contended throughout", run(10, 0.9), finding.Fail},
		// One scheduler instant is not the run's condition.
		{"a 0.02 s run", run(0.02, 1), finding.Unknown},
		// A closed loop of one client: waits half the run with a third of the
		// CPUs idle are wake-up latency.
		{"waits beside idle CPUs", busy(run(10, 0.53), 0.62), finding.OK},
		{"waits on busy CPUs", busy(run(10, 0.6), 0.85), finding.Warn},
		// 85% busy of 2 cores is 1.7: the member's 0.6 and the generator's 0.9
		// leave 0.2 cores (10%) to other work; the waits are the loop's own.
		{"a closed loop's own waits", closed(busy(run(10, 0.6), 0.85), 0.9), finding.OK},
		// On 4 cores all busy, the member's 0.6 leaves 3.4 (85%) to other work.
		{"a closed loop beside other work", cores(closed(busy(run(10, 0.6), 1), 0), 4), finding.Warn},
		// Busy processes pinned to the member's CPU: that CPU full, the other
		// idle. The waits are a want of that CPU.
		{"waits on one saturated CPU", busiest(busy(run(10, 0.91), 0.54), 1), finding.Fail},
		{"waits beside idle CPUs, each", busiest(busy(run(10, 0.8), 0.09), 0.15), finding.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostPressureRule(withRun(busyMember(t), tc.run), lim)
			if c.Severity != tc.want {
				t.Errorf("severity %q, want %q (%s)", c.Severity, tc.want, c.Observed)
			}
		})
	}
}
