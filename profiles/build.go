package profiles

import (
	"cmp"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
)

// Build turns p into a bench workload over clients, writing under prefix, and
// the bench.Config that runs it (the caller sets KV and Force).
//
// Puts and ranges become bench's put, range or mixed workload; watchers ride on
// the mixed workload, whose puts carry their send time. A values range is spread
// over valueBuckets sizes evenly from min to max, each on its own share of the
// key space under prefix + "v<i>/", since bench writes one value size per
// workload. txn, txn-create and txn-delete are one bench txn workload over its
// own key space under prefix + "txn/"; a watch goes with it when it is there,
// and a list then reads its objects (else a list fills and reads its own under
// prefix + "list/"). Leases are a pool kept alive (leases) or bench's lease
// life under prefix + "lease/". The parts are combined by ratio into one
// workload that reports each op kind once; compact_interval adds kube-apiserver's
// compactor beside it.
func Build(p *Profile, clients []*clientv3.Client, prefix string) (bench.Workload, bench.Config, error) {
	cfg := bench.Config{
		Workers:  p.Clients,
		Rate:     p.Rate,
		Duration: time.Duration(p.Duration),
		Warmup:   time.Duration(p.Warmup),
		Prefix:   prefix,
	}
	ops := map[string]Op{}
	for _, op := range p.Ops {
		ops[op.Op] = op
	}
	put, rng, watch, txn := ops[OpPut], ops[OpRange], ops[OpWatch], ops[OpTxn]
	txnShare := txn.Ratio + ops[OpTxnCreate].Ratio + ops[OpTxnDelete].Ratio
	var parts []*bench.Part
	if data := put.Ratio + rng.Ratio; data > 0 {
		dataWatch := watch
		if txnShare > 0 {
			dataWatch = Op{} // the watch goes with the txns
		}
		sizes := valueSizes(p.Values)
		space := p.keysPerBucket()
		for i, size := range sizes {
			pre := prefix
			switch {
			case len(sizes) > 1:
				pre = fmt.Sprintf("%sv%d/", prefix, i)
			case dataWatch.Prefix:
				pre = prefix + "kv/" // a prefix watch must not see the other parts' keys
			}
			w, err := dataWorkload(clients, p, pre, size, space, put, rng, dataWatch, len(sizes))
			if err != nil {
				return nil, cfg, fmt.Errorf("profile %s: %w", p.Name, err)
			}
			parts = append(parts, &bench.Part{W: w, Share: data / float64(len(sizes))})
		}
	}
	var objects string // the txns' objects, which a list reads
	if txnShare > 0 {
		c := bench.TxnConfig{
			Prefix: prefix + "txn/", KeySize: int(p.Keys.Size), ValSize: objectSize(txn, p), KeySpace: p.Keys.Space,
			Ops: max(txn.TxnOps, 1), CreateRatio: ops[OpTxnCreate].Ratio / txnShare, DeleteRatio: ops[OpTxnDelete].Ratio / txnShare,
		}
		if watch.Watchers > 0 {
			c.Watchers, c.Streams = watch.Watchers, max(watch.Streams, 1)
		}
		w, err := bench.NewTxn(clients, c)
		if err != nil {
			return nil, cfg, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		parts = append(parts, &bench.Part{W: w, Share: txnShare})
		objects = c.Prefix
	}
	for _, k := range Kinds() {
		op, ok := ops[k.Name]
		if k.Part == nil || !ok || op.Ratio <= 0 {
			continue
		}
		w, err := k.Part(PartEnv{Clients: clients, Profile: p, Prefix: prefix + k.Name + "/", Objects: objects}, op)
		if err != nil {
			return nil, cfg, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		parts = append(parts, &bench.Part{W: w, Share: op.Ratio})
	}
	var w bench.Workload = bench.Compose(parts)
	if len(parts) == 1 {
		w = parts[0].W
	}
	if p.CompactInterval > 0 {
		w = bench.WithCompaction(w, clients[0], time.Duration(p.CompactInterval))
	}
	return w, cfg, nil
}

// objectSize is the value size of a txn, list or lease op: its own, or the mean
// of the profile's values.
func objectSize(op Op, p *Profile) int { return int(cmp.Or(op.ValueSize, p.Values.mean())) }

// valueSizes lists the value sizes puts write: one, or valueBuckets spread from
// min to max.
func valueSizes(v Values) []int {
	if v.Size > 0 {
		return []int{int(v.Size)}
	}
	out := make([]int, valueBuckets)
	for i := range out {
		out[i] = int(v.Min) + int(v.Max-v.Min)*i/(valueBuckets-1)
	}
	return out
}

// dataWorkload is the put/range/watch workload of one value size. Puts alone use
// bench's put workload, which needs no fill (check perf writes a new key each
// time); ranges alone, its range workload; anything else, its mixed workload.
// Watchers are divided among the value sizes.
func dataWorkload(clients []*clientv3.Client, p *Profile, prefix string, size int, space uint64, put, rng, watch Op, buckets int) (bench.Workload, error) {
	keySize := int(p.Keys.Size)
	switch {
	case watch.Watchers == 0 && rng.Ratio == 0:
		return bench.NewPut(clients, bench.PutConfig{Prefix: prefix, KeySize: keySize, ValSize: size, KeySpace: space})
	case watch.Watchers == 0 && put.Ratio == 0:
		return bench.NewRange(clients, bench.RangeConfig{
			Prefix: prefix, KeySize: keySize, ValSize: size, Keys: space,
			Width: rng.Width, Limit: rng.Limit, Consistency: rng.Consistency, KeysOnly: rng.KeysOnly, CountOnly: rng.CountOnly,
		})
	}
	cfg := bench.MixedConfig{
		Prefix: prefix, KeySize: keySize, ValSize: size, KeySpace: space,
		ReadRatio: rng.Ratio / (rng.Ratio + put.Ratio),
		Width:     max(rng.Width, 1), Limit: rng.Limit, Consistency: rng.Consistency, KeysOnly: rng.KeysOnly, CountOnly: rng.CountOnly,
	}
	if watch.Watchers > 0 {
		cfg.Watchers = max(watch.Watchers/buckets, 1)
		cfg.Streams = min(max(watch.Streams/buckets, 1), cfg.Watchers)
		cfg.WatchedKeys = min(max(watch.WatchedKeys, 1), space)
		cfg.PrefixWatch = watch.Prefix
	}
	return bench.NewMixed(clients, cfg)
}
