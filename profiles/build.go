package profiles

import (
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
// workload. Leases are etcdperf's own workload. The parts are combined by ratio
// into one workload that reports each op kind once.
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
	put, rng, watch, lease := ops[OpPut], ops[OpRange], ops[OpWatch], ops[OpLease]
	var parts []*part
	if data := put.Ratio + rng.Ratio; data > 0 {
		sizes := valueSizes(p.Values)
		space := p.keysPerBucket()
		for i, size := range sizes {
			pre := prefix
			if len(sizes) > 1 {
				pre = fmt.Sprintf("%sv%d/", prefix, i)
			}
			w, err := dataWorkload(clients, p, pre, size, space, put, rng, watch, len(sizes))
			if err != nil {
				return nil, cfg, fmt.Errorf("profile %s: %w", p.Name, err)
			}
			parts = append(parts, &part{w: w, share: data / float64(len(sizes))})
		}
	}
	if lease.Ratio > 0 {
		w, err := newLeaseKeepAlive(clients, lease.Leases, time.Duration(lease.TTL))
		if err != nil {
			return nil, cfg, err
		}
		parts = append(parts, &part{w: w, share: lease.Ratio})
	}
	if len(parts) == 1 {
		return parts[0].w, cfg, nil
	}
	return compose(parts), cfg, nil
}

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
	}
	return bench.NewMixed(clients, cfg)
}
