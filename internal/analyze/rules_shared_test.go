package analyze

import (
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

func TestSharedHostCPURule(t *testing.T) {
	// The member used 6 CPU-s in the 10 s window (0.6 cores).
	member := func() *Input {
		return in(t, etcdBase().counter(metrics.CPUSeconds, 0), etcdBase().counter(metrics.CPUSeconds, 6))
	}
	run := func(eps string, inProcess bool, clientCPU float64) *results.Run {
		return &results.Run{Version: results.Version, DurationS: 10,
			Target: results.ClusterInfo{Endpoints: []string{eps}, InProcess: inProcess},
			Host:   &results.Host{CPUs: 2}, Client: results.Client{CPUSeconds: clientCPU, Cores: 2}}
	}
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
		{"in-process etcd", run("http://127.0.0.1:2379", true, 12), ""},
		// The generator alone is under a 0.5-CPU quota: 0.6+0.5 of the host's 2 = 55%.
		{"generator's quota, members outside it", quota(run("http://127.0.0.1:2379", false, 5), false), finding.OK},
		// Embedded members are the generator's children, in its cgroup: 0.6+0.5 of 0.5 = 220%.
		{"embedded members share the generator's quota", quota(run("http://127.0.0.1:2379", false, 5), true), finding.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sharedHostCPURule(withRun(member(), tc.run), limCPU)
			if c.Severity != tc.want {
				t.Errorf("severity %q, want %q (%s)", c.Severity, tc.want, c.Observed)
			}
		})
	}
}

func TestHostPressureRule(t *testing.T) {
	run := func(durS, share float64) *results.Run {
		return &results.Run{Version: results.Version, DurationS: durS, HostCPUPressure: &share,
			Target: results.ClusterInfo{Endpoints: []string{"http://127.0.0.1:2379"}}}
	}
	busy := func(r *results.Run, b float64) *results.Run { r.HostCPUBusy = &b; return r }
	lim := Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio}
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostPressureRule(withRun(&Input{}, tc.run), lim)
			if c.Severity != tc.want {
				t.Errorf("severity %q, want %q (%s)", c.Severity, tc.want, c.Observed)
			}
		})
	}
}
