package inspect

import (
	"bytes"
	"container/heap"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// PrefixOf returns the prefix that groups key at depth (≥ 1): the key up to and
// including its depth-th '/' separator. Leading slashes belong to the first segment,
// so "/registry/pods/ns/name" groups under "/registry/" at depth 1 and under
// "/registry/pods/" at depth 2. A key with fewer separators groups under its
// parent folder: everything up to its last '/', or "" when it has none.
func PrefixOf(key []byte, depth int) string {
	i := 0
	for i < len(key) && key[i] == '/' {
		i++
	}
	end := i
	for d := 0; d < depth; d++ {
		j := bytes.IndexByte(key[i:], '/')
		if j < 0 {
			break
		}
		i += j + 1
		end = i
	}
	return string(key[:end])
}

// Record is the latest revision of one live key, as either source reads it.
type Record struct {
	Key []byte
	// ValueSize is the value's length, or -1 when it was not read (keys-only page
	// outside the value sample).
	ValueSize                            int64
	CreateRevision, ModRevision, Version int64
	// OldRevisions are revisions of the key kept besides this one.
	OldRevisions int64
	// OldBytes is what those old revisions occupy in the key bucket.
	OldBytes int64
	// OldExact is false when OldRevisions/OldBytes are an upper bound or estimate.
	OldExact bool
}

// Byte histograms span 0 B .. 2 GiB, the largest gRPC message etcd sends (math.MaxInt32).
const histMaxBytes = 1<<31 - 1

// Aggregator accumulates Records into the figures of a Result.
type Aggregator struct {
	depth, top   int
	nearLimit    int64
	total        Totals
	sampledKeys  int64
	sampledBytes int64
	hist         *hdr.Histogram
	maxValue     int64
	prefixes     map[string]*prefixAcc
	largest      keyHeap
	near         []KeyInfo
	history      History
}

type prefixAcc struct {
	Prefix
	sampledKeys, sampledBytes int64
	hist                      *hdr.Histogram
}

// NewAggregator groups keys at depth, keeps the top largest keys, and lists keys
// whose key+value is at least nearLimit bytes.
func NewAggregator(depth, top int, nearLimit int64) *Aggregator {
	return &Aggregator{
		depth: depth, top: top, nearLimit: nearLimit,
		// 3 significant digits overall, 2 per prefix: a prefix histogram is ~25 KB,
		// so thousands of prefixes still fit in a few tens of MB.
		hist:     hdr.New(1, histMaxBytes, 3),
		prefixes: map[string]*prefixAcc{},
		history:  History{Exact: true},
	}
}

// Add accounts one key.
func (a *Aggregator) Add(r Record) {
	p := PrefixOf(r.Key, a.depth)
	acc := a.prefixes[p]
	if acc == nil {
		acc = &prefixAcc{Prefix: Prefix{Prefix: p}, hist: hdr.New(1, histMaxBytes, 2)}
		a.prefixes[p] = acc
	}
	kb := int64(len(r.Key))
	a.total.Keys++
	a.total.KeyBytes += kb
	acc.Keys++
	acc.KeyBytes += kb
	acc.OldRevisions += r.OldRevisions

	h := &a.history
	h.OldRevisions += r.OldRevisions
	h.CompactionFreesBytes += r.OldBytes
	if r.OldRevisions > 0 {
		h.KeysWithHistory++
	}
	if r.OldRevisions > h.MaxDepth {
		h.MaxDepth, h.MaxDepthKey = r.OldRevisions, string(r.Key)
	}
	if !r.OldExact {
		h.Exact = false
	}

	if r.ValueSize < 0 {
		return
	}
	v := min(r.ValueSize, histMaxBytes)
	a.sampledKeys++
	a.sampledBytes += r.ValueSize
	acc.sampledKeys++
	acc.sampledBytes += r.ValueSize
	_ = a.hist.RecordValue(v) // v is within the histogram's range, so this cannot fail
	_ = acc.hist.RecordValue(v)
	a.maxValue = max(a.maxValue, r.ValueSize)
	acc.ValueSize.Max = max(acc.ValueSize.Max, r.ValueSize)

	ki := KeyInfo{Key: string(r.Key), KeyBytes: kb, ValueBytes: r.ValueSize, Version: r.Version}
	if a.top > 0 {
		if len(a.largest) < a.top {
			heap.Push(&a.largest, ki)
		} else if ki.Size() > a.largest[0].Size() {
			a.largest[0] = ki
			heap.Fix(&a.largest, 0)
		}
	}
	if a.nearLimit > 0 && ki.Size() >= a.nearLimit {
		a.near = append(a.near, ki)
	}
}

// AddDeleted accounts a key whose latest revision is a tombstone: it is no live
// key, but all of its revisions wait for compaction.
func (a *Aggregator) AddDeleted(bytes int64) {
	a.history.DeletedKeys++
	a.history.CompactionFreesBytes += bytes
}

// Fill writes the aggregated figures into r. Value bytes are exact when every
// value was read, else extrapolated per prefix from the sampled keys.
func (a *Aggregator) Fill(r *Result) {
	r.Depth = a.depth
	r.Total = a.total
	r.Total.ValueBytes = 0
	exact := a.sampledKeys == a.total.Keys
	r.Values.SampledKeys = a.sampledKeys
	r.Values.Exact = exact
	r.Prefixes = make([]Prefix, 0, len(a.prefixes))
	for _, acc := range a.prefixes {
		p := acc.Prefix
		p.ValueBytes = acc.sampledBytes
		if acc.sampledKeys > 0 && acc.sampledKeys < acc.Keys {
			p.ValueBytes = acc.sampledBytes * acc.Keys / acc.sampledKeys
		}
		p.ValueSize = summarize(acc.hist, acc.ValueSize.Max)
		r.Total.ValueBytes += p.ValueBytes
		r.Prefixes = append(r.Prefixes, p)
	}
	sort.Slice(r.Prefixes, func(i, j int) bool {
		bi := r.Prefixes[i].KeyBytes + r.Prefixes[i].ValueBytes
		bj := r.Prefixes[j].KeyBytes + r.Prefixes[j].ValueBytes
		if bi != bj {
			return bi > bj
		}
		return r.Prefixes[i].Prefix < r.Prefixes[j].Prefix
	})
	r.ValueSize = summarize(a.hist, a.maxValue)
	r.Largest = append([]KeyInfo{}, a.largest...)
	sort.Slice(r.Largest, func(i, j int) bool {
		if r.Largest[i].Size() != r.Largest[j].Size() {
			return r.Largest[i].Size() > r.Largest[j].Size()
		}
		return r.Largest[i].Key < r.Largest[j].Key
	})
	r.NearLimit = append([]KeyInfo{}, a.near...)
	sort.Slice(r.NearLimit, func(i, j int) bool { return r.NearLimit[i].Size() > r.NearLimit[j].Size() })
	// The revisions and the basis come from the source; the rest is aggregated here.
	h, out := a.history, &r.History
	out.OldRevisions, out.KeysWithHistory = h.OldRevisions, h.KeysWithHistory
	out.MaxDepth, out.MaxDepthKey = h.MaxDepth, h.MaxDepthKey
	out.DeletedKeys, out.CompactionFreesBytes, out.Exact = h.DeletedKeys, h.CompactionFreesBytes, h.Exact
}

func summarize(h *hdr.Histogram, maxV int64) SizeSummary {
	if h.TotalCount() == 0 {
		return SizeSummary{}
	}
	// HdrHistogram answers the highest value equivalent to a bucket; never report
	// a percentile above the exact maximum.
	q := func(p float64) int64 { return min(h.ValueAtQuantile(p), maxV) }
	return SizeSummary{P50: q(50), P90: q(90), P99: q(99), Max: maxV}
}

// Size is the bytes the key and its value take together.
func (k KeyInfo) Size() int64 { return k.KeyBytes + k.ValueBytes }

// keyHeap is a min-heap on key+value size: its root is the smallest of the top N.
type keyHeap []KeyInfo

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].Size() < h[j].Size() }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(KeyInfo)) }
func (h *keyHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }
