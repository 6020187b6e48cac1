package bench

import (
	"runtime"
	"runtime/metrics"
)

// gcPercent is the GOGC the load runs under: up to 400 while the extra heap it
// allows stays within gcHeadroom, never below Go's default of 100, so a heap
// that is large already (10,000 watchers) does not grow fivefold.
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

// loadGCPercent collects the garbage of the set-up (scrapes, connections, the
// fill) before the load, so that the load does not pay for it inside the
// measured window, and returns the GOGC for the load from the heap that
// survived: without a collection since start-up, liveHeap would read 0.
func loadGCPercent() int {
	runtime.GC()
	return gcPercent(liveHeap())
}
