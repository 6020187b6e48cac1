package bench

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is the GOGC the load runs under: up to 400 while the extra heap it
// allows stays within gcHeadroom, never below Go's default of 100, so a heap
// that is large already (10,000 watchers) does not grow fivefold.
//
// Higher is not cheaper: GOGC following the live heap during the load (up to
// 64 MiB over it) made 10 collections instead of 24 over 100,000 puts to the
// null KV server (bench put --conns 10 --clients 100; GC CPU ~110 ms instead of
// ~250 ms by GODEBUG=gctrace=1), yet the generator's CPU per request rose: median
// 29.0 µs instead of 24.7 µs over 8 alternating runs of 50,000, RSS 141 MB
// instead of 72 MB. A larger heap hands out fresh memory to zero and cold caches.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(400, max(100, gcHeadroom*100/live)))
}

// gcHeadroom bounds the memory that gcPercent may add over the default GOGC.
const gcHeadroom = 64 << 20

// liveHeap is the heap that survived the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// loadGC sets GOGC for a load until the returned restore is called. It first
// collects the garbage of the set-up (scrapes, connections, the fill), so that
// the load does not pay for it inside the measured window and gcPercent sees
// the live heap: without a collection since start-up, liveHeap would read 0.
func loadGC() (restore func()) {
	runtime.GC()
	prev := debug.SetGCPercent(gcPercent(liveHeap()))
	return func() { debug.SetGCPercent(prev) }
}
