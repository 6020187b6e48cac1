package bench

import "sync/atomic"

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

// missed is, over every acknowledged revision, how many of the watchers of its
// key did not receive it; watchersOf[k] is the number of watchers on key k.
func (t *revTable) missed(watchersOf []int64) int64 {
	var n int64
	for ci := range t.chunks {
		p := t.chunks[ci].Load()
		if p == nil {
			continue
		}
		for i := range p {
			k := p[i].key.Load()
			if k == 0 || int(k) > len(watchersOf) {
				continue
			}
			n += max(watchersOf[k-1]-int64(p[i].got.Load()), 0)
		}
	}
	return n
}
