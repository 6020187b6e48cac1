package bench

import (
	"context"
	"errors"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
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
	direct  []grpc.ClientConnInterface
	spec    rangeSpec
	value   string
}

// rangeSpec is a range request over a filled key space; mixed shares it.
type rangeSpec struct {
	keys  keySpace
	width uint64
	// req holds the options every request shares; workers copy it and set the keys.
	req pb.RangeRequest
}

func newRangeSpec(ks keySpace, width uint64, limit int64, consistency string, keysOnly, countOnly bool) (rangeSpec, error) {
	if width == 0 || width > ks.n {
		return rangeSpec{}, fmt.Errorf("range width must be between 1 and the %d keys, got %d", ks.n, width)
	}
	if limit < 0 {
		return rangeSpec{}, fmt.Errorf("limit must not be negative, got %d", limit)
	}
	req := pb.RangeRequest{Limit: limit, KeysOnly: keysOnly, CountOnly: countOnly}
	switch consistency {
	case "l", "":
	case "s":
		req.Serializable = true
	default:
		return rangeSpec{}, fmt.Errorf("consistency must be l (linearizable) or s (serializable), got %q", consistency)
	}
	return rangeSpec{keys: ks, width: width, req: req}, nil
}

// worker returns a range request function over cc with its own buffers and
// response: it allocates nothing of its own per request but the keys received.
func (s rangeSpec) worker(cc grpc.ClientConnInterface, id int) func(ctx context.Context) Outcome {
	invoke := invokerOf(cc)
	rng := workerRand(id)
	resp := &pb.RangeResponse{Header: &pb.ResponseHeader{}}
	req := &pb.RangeRequest{Key: s.keys.buf(), Limit: s.req.Limit, Serializable: s.req.Serializable,
		KeysOnly: s.req.KeysOnly, CountOnly: s.req.CountOnly}
	if s.width > 1 {
		req.RangeEnd = s.keys.buf()
	}
	return func(ctx context.Context) Outcome {
		start := rng.Uint64N(s.keys.n - s.width + 1)
		s.keys.fill(req.Key, start) // gRPC has marshalled the previous request by now
		if s.width > 1 {
			s.keys.fill(req.RangeEnd, start+s.width)
		}
		// The codec merges into the response (see gogoCodec.Unmarshal): reset it,
		// keeping its header and the room of its key slice.
		h := resp.Header
		*h = pb.ResponseHeader{}
		*resp = pb.RangeResponse{Header: h, Kvs: resp.Kvs[:0]}
		ep, err := invoke(ctx, methodRange, req, resp)
		out := Outcome{Sent: int64(len(req.Key) + len(req.RangeEnd)), Endpoint: ep, Err: err}
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

// SetDirect sends the ranges over conns (see DialDirect); the fill keeps the clients.
func (r *Range) SetDirect(conns []grpc.ClientConnInterface) { r.direct = conns }

// Worker returns a range loop.
func (r *Range) Worker(id int) Op {
	do := r.spec.worker(loadConn(r.clients, r.direct, id), id)
	return func(ctx context.Context, _ uint64) Outcome { return do(ctx) }
}
