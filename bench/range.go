package bench

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RangeConfig shapes the range workload.
type RangeConfig struct {
	Prefix  string
	KeySize int    // bytes after the prefix
	ValSize int    // bytes of each filled value
	Keys    uint64 // keys filled before the run
	// Width is the keys a request spans: [start, start+Width) with a random start; 1 is a single-key get.
	Width       uint64
	Limit       int64 // 0: no limit
	Consistency string
	KeysOnly    bool
	CountOnly   bool
}

// Range fills a key set, then reads it.
type Range struct {
	clients []*clientv3.Client
	spec    rangeSpec
	value   string
}

// rangeSpec is a range request over a filled key space; mixed shares it.
type rangeSpec struct {
	keys  keySpace
	width uint64
	opts  []clientv3.OpOption
}

func newRangeSpec(ks keySpace, width uint64, limit int64, consistency string, keysOnly, countOnly bool) (rangeSpec, error) {
	if width == 0 || width > ks.n {
		return rangeSpec{}, fmt.Errorf("range width must be between 1 and the %d keys, got %d", ks.n, width)
	}
	if limit < 0 {
		return rangeSpec{}, fmt.Errorf("limit must not be negative, got %d", limit)
	}
	var opts []clientv3.OpOption
	switch consistency {
	case "l", "":
	case "s":
		opts = append(opts, clientv3.WithSerializable())
	default:
		return rangeSpec{}, fmt.Errorf("consistency must be l (linearizable) or s (serializable), got %q", consistency)
	}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(limit))
	}
	if keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if countOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	return rangeSpec{keys: ks, width: width, opts: opts}, nil
}

// worker returns a range request function with its own buffers.
func (s rangeSpec) worker(kv clientv3.KV, id int) func(ctx context.Context) Outcome {
	rng, from, to := workerRand(id), s.keys.buf(), s.keys.buf()
	opts := append(s.opts[:len(s.opts):len(s.opts)], nil) // the last slot takes the range end
	return func(ctx context.Context) Outcome {
		start := rng.Uint64N(s.keys.n - s.width + 1)
		key := s.keys.key(from, start)
		o := opts[:len(opts)-1]
		if s.width > 1 {
			opts[len(opts)-1] = clientv3.WithRange(s.keys.key(to, start+s.width))
			o = opts
		}
		resp, err := kv.Get(ctx, key, o...)
		out := Outcome{Sent: int64(len(key)), Err: err}
		if err == nil {
			out.Keys = int64(len(resp.Kvs))
			for _, kv := range resp.Kvs {
				out.Recv += int64(len(kv.Key) + len(kv.Value))
			}
		}
		return out
	}
}

// NewRange checks cfg and generates the fill value.
func NewRange(clients []*clientv3.Client, cfg RangeConfig) (*Range, error) {
	if len(clients) == 0 {
		return nil, errors.New("range: no clients")
	}
	ks, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.Keys)
	if err != nil {
		return nil, err
	}
	if err := CheckRequestSize(ks.len(), cfg.ValSize); err != nil {
		return nil, err
	}
	spec, err := newRangeSpec(ks, cfg.Width, cfg.Limit, cfg.Consistency, cfg.KeysOnly, cfg.CountOnly)
	if err != nil {
		return nil, err
	}
	return &Range{clients: clients, spec: spec, value: newValue(cfg.ValSize)}, nil
}

// Ops reports one op type, "range".
func (r *Range) Ops() []OpKind { return []OpKind{{Name: "range", Share: 1}} }

// Prepare fills the key set.
func (r *Range) Prepare(ctx context.Context, _ Emit) error {
	return fill(ctx, r.clients, r.spec.keys, r.value)
}

// Worker returns a range loop.
func (r *Range) Worker(id int) Op {
	do := r.spec.worker(client(r.clients, id), id)
	return func(ctx context.Context, _ uint64) Outcome { return do(ctx) }
}
