package bench

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// revTable tells, for every revision of the run, which watched key an
// acknowledged put wrote at it and how many watchers received its event, so
// misses are counted by revision: a watcher that lacks an acknowledged
// revision missed it, whatever else it received. A duplicate event (a revision
// not above the watcher's last) is not counted, and the event of a put that was
// applied but never acknowledged (its reply lost to a timeout) is at a revision
// no put claimed, so neither can cancel a real miss.
//
// It is lock-free and does not allocate on the hot path but once per chunk of
// revisions: puts and watchers on many goroutines touch one slot per event.
type revTable struct {
	base   int64 // the revision of slot 0: at or before the first put of the run
	chunks [revChunks]atomic.Pointer[revChunk]
}

// revChunkSize slots of 8 bytes make a 512 KiB chunk; revChunks bound the
// revisions one run can track (2^30, far beyond any run's puts).
const (
	revChunkBits = 16
	revChunkSize = 1 << revChunkBits
	revChunks    = 1 << 14
)

type revChunk [revChunkSize]revSlot

type revSlot struct {
	key atomic.Int32 // watched key index + 1 of the acknowledged put; 0: none
	got atomic.Int32 // watchers that received the event
}

// slot returns rev's slot, or nil when rev is outside the table.
func (t *revTable) slot(rev int64) *revSlot {
	i := rev - t.base
	if i < 0 || i >= revChunks*revChunkSize {
		return nil
	}
	c := &t.chunks[i>>revChunkBits]
	p := c.Load()
	if p == nil {
		c.CompareAndSwap(nil, new(revChunk))
		p = c.Load()
	}
	return &p[i&(revChunkSize-1)]
}

// ack records that the put of watched key k was acknowledged at rev.
func (t *revTable) ack(rev int64, k uint64) {
	if s := t.slot(rev); s != nil {
		s.key.Store(int32(k) + 1)
	}
}

// receive records that one watcher received the event at rev.
func (t *revTable) receive(rev int64) {
	if s := t.slot(rev); s != nil {
		s.got.Add(1)
	}
}

// watcherReach is what one watcher had received when the run ended.
type watcherReach struct {
	last  int64 // its highest revision received
	ended bool  // its watch had ended: nothing after last will come
}

// missed is, over every acknowledged revision, how many of the watchers of its
// key did not receive it, split by where it falls for each watcher (reach[k]
// are the watchers of key k): at or below the watcher's last revision, or past
// it on a watch that ended, the event is missed; past it on a live watch, it
// was still undelivered when the wait for it ended. Watchers that receive an
// event have reached its revision, so the missed at rev are the watchers that
// reached it less those that received it.
func (t *revTable) missed(reach [][]watcherReach) (missed, undelivered int64) {
	// Per key, the watchers by last revision and how many of the first i ended,
	// so each revision costs a binary search, not a pass over its watchers.
	endedBelow := make([][]int64, len(reach))
	for k, ws := range reach {
		slices.SortFunc(ws, func(a, b watcherReach) int { return cmp.Compare(a.last, b.last) })
		endedBelow[k] = make([]int64, len(ws)+1)
		for i, w := range ws {
			endedBelow[k][i+1] = endedBelow[k][i]
			if w.ended {
				endedBelow[k][i+1]++
			}
		}
	}
	for ci := range t.chunks {
		p := t.chunks[ci].Load()
		if p == nil {
			continue
		}
		for i := range p {
			k := int(p[i].key.Load())
			if k == 0 || k > len(reach) {
				continue
			}
			ws := reach[k-1]
			rev := t.base + int64(ci)<<revChunkBits + int64(i)
			// ws[:below] had not reached rev.
			below, _ := slices.BinarySearchFunc(ws, rev, func(w watcherReach, r int64) int { return cmp.Compare(w.last, r) })
			ended := endedBelow[k-1][below]
			missed += ended + max(int64(len(ws)-below)-int64(p[i].got.Load()), 0)
			undelivered += int64(below) - ended
		}
	}
	return missed, undelivered
}
