package bench

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/etcdperf/etcdperf/results"
)

// soakRequests is the request count of the soak benchmarks: SOAK_REQUESTS, else 1,000,000.
func soakRequests(b *testing.B) uint64 {
	n := uint64(1_000_000)
	if s := os.Getenv("SOAK_REQUESTS"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			b.Fatalf("SOAK_REQUESTS=%q: %v", s, err)
		}
		n = v
	}
	return n
}

// soak drives n no-op requests through the engine and reports the process's
// peak RSS: the generator's own memory, which bounded histograms keep flat in
// the number of requests. Peak RSS is per process, so scripts/soak.sh runs each
// count in a process of its own (-benchtime 1x).
func soak(b *testing.B, rate float64) {
	n := soakRequests(b)
	nop := func(context.Context, uint64) Outcome { return Outcome{Sent: 264} }
	for range b.N {
		var run results.Run
		cfg := Config{Workers: 16, Rate: rate, Total: n, Prefix: DefaultPrefix, KV: fakeKV{}}
		if err := Run(context.Background(), cfg, fakeWorkload{nop}, &run); err != nil {
			b.Fatal(err)
		}
		if got := run.Ops[0].Requests; got != int64(n) {
			b.Fatalf("%d requests recorded of %d", got, n)
		}
		b.ReportMetric(float64(n)/run.DurationS, "req/s")
		b.ReportMetric(float64(len(run.Ops[0].Intervals)), "intervals")
	}
	_, rss := rusage()
	b.ReportMetric(float64(rss)/(1<<20), "maxRSS-MiB")
}

// BenchmarkSoakClosedLoop: 16 workers, as fast as they go.
func BenchmarkSoakClosedLoop(b *testing.B) { soak(b, 0) }

// BenchmarkSoakOpenLoop adds the pacer and dispatcher at a rate no run reaches.
func BenchmarkSoakOpenLoop(b *testing.B) { soak(b, 1e12) }
