package bench

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcPercent is the GOGC for a live heap of live bytes: as high as keeps the
// extra heap it allows within gcHeadroom (up to gcMaxPercent), never below Go's
// default of 100, so a heap that is large already (10,000 watchers) does not
// grow fivefold.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(gcMaxPercent, max(100, gcHeadroom*100/live)))
}

// gcHeadroom bounds the memory that gcPercent may add over the live heap.
const gcHeadroom = 64 << 20

// gcMaxPercent bounds GOGC for a near-empty heap: a collection at least every
// 32 live heaps.
const gcMaxPercent = 3200

// gcTuneEvery is how often tuneGC follows the live heap during a load.
const gcTuneEvery = 250 * time.Millisecond

// liveHeap is the heap that survived the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tuneGC sets GOGC for a load and keeps it at gcPercent of the live heap until
// the returned stop restores the previous GOGC. gRPC allocates ~3 KiB per
// request that dies at once: collections cost the generator CPU that the
// server should get, and how many there are depends on GOGC alone.
//
// It first collects the garbage of the set-up (scrapes, connections, the fill),
// so that the load does not pay for it inside the measured window and the live
// heap is known. It follows the live heap because the heap of the load (its
// requests in flight) is larger than the idle heap before it: over 100,000
// puts to the null KV server (bench put --conns 10 --clients 100, ~5 MiB live),
// GOGC 400 from the idle heap made 24 collections, 170-380 ms of CPU, at 72 MB
// of RSS (GODEBUG=gctrace=1, runs on a busy host); a fixed 3200 made 7 (~46 ms)
// but let the RSS grow to 215 MB; following the live heap made 10 (97-125 ms)
// at 141 MB, the heap within gcHeadroom of the live one.
func tuneGC() (stop func()) {
	runtime.GC()
	prev := debug.SetGCPercent(gcPercent(liveHeap()))
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(gcTuneEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				debug.SetGCPercent(gcPercent(liveHeap()))
			}
		}
	}()
	return func() { close(quit); <-done; debug.SetGCPercent(prev) }
}
