package drill

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/inspect"
)

// FillPrefix is one prefix of the data written before a drill.
type FillPrefix struct {
	Prefix string `json:"prefix"` // appended to the fill's root
	Keys   int64  `json:"keys"`
	// KeyBytes is each key's length after root+prefix (a zero-padded index).
	KeyBytes   int `json:"key_bytes"`
	ValueBytes int `json:"value_bytes"`
	// Revisions is how many times each key is written: 1 + its history depth.
	Revisions int `json:"revisions"`
}

// FillSpec is the data a drill writes before it starts, under Root.
type FillSpec struct {
	Root     string       `json:"root"`
	Prefixes []FillPrefix `json:"prefixes"`
}

// Bytes is what the fill writes: keys and values of every revision.
func (f FillSpec) Bytes() int64 {
	var n int64
	for _, p := range f.Prefixes {
		n += p.Keys * int64(len(f.Root)+len(p.Prefix)+p.KeyBytes+p.ValueBytes) * int64(p.Revisions)
	}
	return n
}

// DefaultFillValueBytes is the value size of a --fill SIZE fill: 4 KiB, the order of
// a Kubernetes object (a Pod is a few KiB).
const DefaultFillValueBytes = 4096

// SizeFill is bytes of keys with values of valueBytes under one prefix, one revision each.
func SizeFill(root string, bytes int64, valueBytes int) (FillSpec, error) {
	if valueBytes <= 0 {
		valueBytes = DefaultFillValueBytes
	}
	if bytes <= 0 {
		return FillSpec{Root: root}, nil
	}
	const keyBytes = 10
	if err := bench.CheckRequestSize(len(root)+keyBytes, valueBytes); err != nil {
		return FillSpec{}, err
	}
	keys := max(1, bytes/int64(len(root)+keyBytes+valueBytes))
	return FillSpec{Root: root, Prefixes: []FillPrefix{{Prefix: "", Keys: keys, KeyBytes: keyBytes, ValueBytes: valueBytes, Revisions: 1}}}, nil
}

// ShapeFill reproduces the data `inspect -w json` measured: its prefixes with
// their key counts, average key and value sizes, and history depth (old revisions
// per key), under root. scaleTo, when positive, scales the key counts so the fill
// writes about that many bytes.
func ShapeFill(root string, r *inspect.Result, scaleTo int64) (FillSpec, error) {
	f := FillSpec{Root: root}
	for _, p := range r.Prefixes {
		if p.Keys <= 0 {
			continue
		}
		digits := len(strconv.FormatInt(p.Keys, 10))
		kb := max(digits, int(p.KeyBytes/p.Keys)-len(p.Prefix))
		vb := int(p.ValueBytes / p.Keys)
		if err := bench.CheckRequestSize(len(root)+len(p.Prefix)+kb, vb); err != nil {
			return FillSpec{}, fmt.Errorf("prefix %s: %w", p.Prefix, err)
		}
		f.Prefixes = append(f.Prefixes, FillPrefix{Prefix: strings.TrimPrefix(p.Prefix, "/"), Keys: p.Keys, KeyBytes: kb, ValueBytes: vb,
			Revisions: 1 + int(math.Round(float64(p.OldRevisions)/float64(p.Keys)))})
	}
	if len(f.Prefixes) == 0 {
		return FillSpec{}, errors.New("the inspection lists no prefix with keys")
	}
	if total := f.Bytes(); scaleTo > 0 && total > 0 {
		k := float64(scaleTo) / float64(total)
		for i := range f.Prefixes {
			p := &f.Prefixes[i]
			p.Keys = max(1, int64(math.Round(float64(p.Keys)*k)))
			p.KeyBytes = max(p.KeyBytes, len(strconv.FormatInt(p.Keys, 10)))
		}
	}
	return f, nil
}

// fillInFlight is how many fill transactions run at once.
const fillInFlight = 16

// maxTxnOps is etcd's default --max-txn-ops.
const maxTxnOps = 128

// Fill writes the spec: transactions of up to 128 puts (etcd's --max-txn-ops) under
// the 1.5 MiB request limit, several in flight. progress, when set, gets the bytes
// written so far.
func Fill(ctx context.Context, cli *clientv3.Client, f FillSpec, progress func(done, total int64)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	total := f.Bytes()
	var done atomic.Int64
	sem := make(chan struct{}, fillInFlight)
	var wg sync.WaitGroup
	for _, p := range f.Prefixes {
		entry := len(f.Root) + len(p.Prefix) + p.KeyBytes + p.ValueBytes
		per := int64(max(1, min(maxTxnOps, (bench.MaxRequestBytes-512)/(entry+256))))
		value := fillValue(p.ValueBytes)
		for rev := 0; rev < p.Revisions; rev++ {
			for lo := int64(0); lo < p.Keys && ctx.Err() == nil; lo += per {
				hi := min(lo+per, p.Keys)
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					ops := make([]clientv3.Op, 0, hi-lo)
					for i := lo; i < hi; i++ {
						ops = append(ops, clientv3.OpPut(fillKey(f.Root, p, i), value))
					}
					if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
						cancel(fmt.Errorf("fill %s%s keys %d..%d: %w", f.Root, p.Prefix, lo, hi-1, err))
						return
					}
					d := done.Add((hi - lo) * int64(entry))
					if progress != nil {
						progress(d, total)
					}
				})
			}
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

func fillKey(root string, p FillPrefix, i int64) string {
	s := strconv.FormatInt(i, 10)
	return root + p.Prefix + strings.Repeat("0", max(0, p.KeyBytes-len(s))) + s
}

// fillValue is n printable bytes from a fixed seed: etcd stores values as they are,
// so their content does not change the db size.
func fillValue(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}
