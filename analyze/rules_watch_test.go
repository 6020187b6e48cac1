package analyze

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

func watchRun(watchP99, putP99 float64, missed int64, cpuSeconds float64) *results.Run {
	return &results.Run{Version: results.Version, Valid: true, DurationS: 10, Client: results.Client{CPUSeconds: cpuSeconds, Cores: 2},
		Ops: []results.Op{
			{Op: "watch", Watchers: 100, Events: 100_000, MissedEvents: missed, Latency: results.Summary{P99: watchP99}},
			{Op: "put", Requests: 1000, TargetRPS: 100, Latency: results.Summary{P99: putP99 * 10}, Service: results.Summary{P99: putP99}},
		}}
}

func TestWatchRules(t *testing.T) {
	watchers := func(slow, pending, sent float64) *mtext {
		return etcdBase().gauge(metrics.WatchStreams, 10).gauge(metrics.Watchers, 100).gauge(metrics.SlowWatchers, slow).
			gauge(metrics.PendingEvents, pending).counter(metrics.EventsSent, sent)
	}
	quiet := func() *Input { return in(t, watchers(0, 0, 0), watchers(0, 0, 1000)) }
	for _, tc := range []struct {
		name, rule string
		in         *Input
		want       finding.Severity
		observed   string
	}{
		{"delivery near the put latency", "watch delivery", withRun(quiet(), watchRun(12, 10, 0, 1)), finding.OK, "1.2× the put service p99"},
		{"3× but only 20 ms later: ok", "watch delivery", withRun(quiet(), watchRun(30, 10, 0, 1)), finding.OK, "3×"},
		{"3× and 200 ms later warns, network named", "watch delivery", withRun(in(t, watchers(0, 0, 0), watchers(4, 500, 100_000)), watchRun(300, 100, 0, 1)),
			finding.Warn, "ran out: the network to the watchers"},
		{"10× and a busy generator: the watchers' CPU", "watch delivery", withRun(quiet(), watchRun(1000, 100, 0, 19)), finding.Fail, "ran out: the watchers' client CPU"},
		{"10× on a contended host: its CPUs", "watch delivery", withRun(quiet(), func() *results.Run {
			r := watchRun(1000, 100, 0, 1)
			p := 0.95
			r.HostCPUPressure, r.Target = &p, results.ClusterInfo{Embedded: true}
			return r
		}()), finding.Fail, "ran out: this host's CPUs, contended by other work (some task waited for a CPU 95%"},
		{"no watch op: not applicable", "watch delivery", withRun(quiet(), putRun(1)), "", ""},
		{"events still on their way when the wait ended fail the delivery, not the missed rule", "watch delivery", withRun(quiet(), func() *results.Run {
			r := watchRun(12, 10, 0, 1)
			r.Ops[0].UndeliveredEvents = 300
			return r
		}()), finding.Fail, "300 events still undelivered when the wait for them ended"},
		{"any missed event fails", "missed or out-of-order", withRun(quiet(), watchRun(12, 10, 1, 1)), finding.Fail, "1 missed"},
		{"none missed", "missed or out-of-order", withRun(quiet(), watchRun(12, 10, 0, 1)), finding.OK, "0 missed"},
		{"slow watchers warn", "slow watchers", in(t, watchers(0, 0, 0), watchers(3, 200, 5000)), finding.Warn, "3 slow of 100 watchers on 10 streams (most in a scrape); up to 200 events held for full channels in a scrape, 5000 sent over the run"},
		{"no watcher on the member: not applicable", "slow watchers", in(t, etcdBase().gauge(metrics.SlowWatchers, 0), etcdBase().gauge(metrics.SlowWatchers, 0)), "", ""},
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
