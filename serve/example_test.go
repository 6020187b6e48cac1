package serve_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/serve"
)

// A tool runs a probe on a schedule and exports what each tick did as
// Prometheus series. The probe here stands in for serve's Prober (a small load
// against a live cluster, graded as check grades it) and finds no leader, so it
// skips its load; the exporter counts the skip.
func ExampleRun() {
	exp := serve.NewExporter(serve.BuildInfo{Version: "v0.0.0"}, "example")
	probe := func(ctx context.Context) serve.Result {
		now := time.Now()
		return serve.Result{Start: now, End: now, Skipped: serve.SkipNoLeader, LeaderKnown: true}
	}
	serve.Run(context.Background(), serve.Schedule{Every: time.Millisecond, Probes: 2}, probe, func(r serve.Result) {
		exp.Record(r)
		fmt.Println("tick:", r.Reason())
	})
	families, err := exp.Registry.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if c := m.GetCounter(); strings.HasPrefix(f.GetName(), "etcdperf_") && c.GetValue() > 0 {
				fmt.Print(f.GetName())
				for _, l := range m.GetLabel() {
					fmt.Printf(" %s=%s", l.GetName(), l.GetValue())
				}
				fmt.Println(":", c.GetValue())
			}
		}
	}
	// Output:
	// tick: no_leader
	// tick: no_leader
	// etcdperf_probe_skipped_total cluster=example reason=no_leader: 2
}
