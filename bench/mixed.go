package bench

import (
	"context"
	"errors"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// MixedConfig shapes the mixed workload.
type MixedConfig struct {
	Prefix    string
	KeySize   int     // bytes after the prefix
	ValSize   int     // bytes; at least 8 with watchers (the send time)
	KeySpace  uint64  // keys filled first, then read and overwritten
	ReadRatio float64 // fraction of requests that are ranges; the rest are puts
	// Range shape, as in RangeConfig.
	Width       uint64
	Limit       int64
	Consistency string
	KeysOnly    bool
	CountOnly   bool
	// Watchers > 0 adds watchers on the first WatchedKeys keys over Streams streams.
	Watchers    int
	Streams     int
	WatchedKeys uint64
	// PrefixWatch: every watcher watches the whole prefix (WatchedKeys is then unused).
	PrefixWatch bool
}

// Mixed reads and writes one key space by ratio, optionally watched; each op type
// is reported on its own.
type Mixed struct {
	clients   []*clientv3.Client
	direct    []grpc.ClientConnInterface
	keys      keySpace
	value     string
	readRatio float64
	ranges    rangeSpec
	set       *watchSet // nil without watchers
}

// NewMixed checks cfg.
func NewMixed(clients []*clientv3.Client, cfg MixedConfig) (*Mixed, error) {
	if len(clients) == 0 {
		return nil, errors.New("mixed: no clients")
	}
	if cfg.ReadRatio < 0 || cfg.ReadRatio > 1 {
		return nil, fmt.Errorf("read ratio must be between 0 and 1, got %g", cfg.ReadRatio)
	}
	ks, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.KeySpace)
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
	m := &Mixed{clients: clients, keys: ks, value: newValue(cfg.ValSize), readRatio: cfg.ReadRatio, ranges: spec}
	if cfg.Watchers > 0 {
		if cfg.ValSize < stampBytes {
			return nil, fmt.Errorf("mixed: with watchers, values carry their send time in %d bytes; --val-size must be at least %d", stampBytes, stampBytes)
		}
		if cfg.PrefixWatch {
			cfg.WatchedKeys = cfg.KeySpace
		}
		if cfg.WatchedKeys == 0 || cfg.WatchedKeys > cfg.KeySpace {
			return nil, fmt.Errorf("mixed: watched keys must be between 1 and the %d keys, got %d", cfg.KeySpace, cfg.WatchedKeys)
		}
		wks := ks
		wks.n = cfg.WatchedKeys
		if m.set, err = newWatchSet(clients, wks, cfg.Watchers, cfg.Streams, 2, cfg.PrefixWatch); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Ops reports ranges, puts and, with watchers, watch events.
func (m *Mixed) Ops() []OpKind {
	ops := []OpKind{{Name: "range", Share: m.readRatio}, {Name: "put", Share: 1 - m.readRatio}}
	if m.set != nil {
		ops = append(ops, OpKind{Name: "watch"})
	}
	return ops
}

// Prepare fills the key space, then opens the watchers, so the fill is not watched.
func (m *Mixed) Prepare(ctx context.Context, emit Emit) error {
	if err := fill(ctx, m.clients, m.keys, m.value); err != nil {
		return err
	}
	if m.set != nil {
		return m.set.open(ctx, emit)
	}
	return nil
}

// SetDirect sends the ranges and puts over conns (see DialDirect); the fill
// and the watchers keep the clients.
func (m *Mixed) SetDirect(conns []grpc.ClientConnInterface) { m.direct = conns }

// Worker returns a loop that ranges with probability ReadRatio and puts otherwise.
func (m *Mixed) Worker(id int) Op {
	cc, rng := loadConn(m.clients, m.direct, id), workerRand(id)
	get, invoke := m.ranges.worker(cc, id), invokerOf(cc)
	req := &pb.PutRequest{Key: m.keys.buf(), Value: []byte(m.value)}
	resp := &pb.PutResponse{Header: &pb.ResponseHeader{}}
	sent := int64(len(req.Key) + len(req.Value))
	var acked []int64
	if m.set != nil {
		acked = m.set.counter()
	}
	return func(ctx context.Context, _ uint64) Outcome {
		if rng.Float64() < m.readRatio {
			return get(ctx)
		}
		i := rng.Uint64N(m.keys.n)
		m.keys.fill(req.Key, i) // gRPC has marshalled the previous request by now
		if acked != nil {
			stampInto(req.Value)
		}
		// The codec merges into the response (see Put.Worker): reset it, keeping its header.
		h := resp.Header
		*h = pb.ResponseHeader{}
		*resp = pb.PutResponse{Header: h}
		ep, err := invoke(ctx, methodPut, req, resp)
		if acked != nil && err == nil && i < m.set.keys.n {
			acked[m.set.slot(i)]++
			m.set.revs.ack(resp.Header.Revision, m.set.slot(i))
		}
		return Outcome{Kind: 1, Sent: sent, Endpoint: ep, Err: err}
	}
}

// Finish waits for watch events in flight and closes the watchers.
func (m *Mixed) Finish(ctx context.Context) {
	if m.set != nil {
		m.set.close(ctx)
	}
}

// Annotate adds the watch counts to the watch op.
func (m *Mixed) Annotate(ops []results.Op) {
	if m.set != nil {
		m.set.annotate(&ops[2])
	}
}
