package bench

import (
	"context"
	"errors"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// PutConfig shapes the put workload.
type PutConfig struct {
	Prefix     string
	KeySize    int    // bytes after the prefix
	ValSize    int    // bytes
	KeySpace   uint64 // distinct keys
	Sequential bool   // keys in order (seq mod KeySpace); else uniformly random
}

// Put writes a pre-generated value to fixed-width keys under the prefix.
type Put struct {
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	keys    keySpace
	value   string
	seqKeys bool
}

// NewPut checks cfg and generates the value.
func NewPut(clients []*clientv3.Client, cfg PutConfig) (*Put, error) {
	if len(clients) == 0 {
		return nil, errors.New("put: no clients")
	}
	ks, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.KeySpace)
	if err != nil {
		return nil, err
	}
	if err := CheckRequestSize(ks.len(), cfg.ValSize); err != nil {
		return nil, err
	}
	return &Put{clients: clients, keys: ks, value: newValue(cfg.ValSize), seqKeys: cfg.Sequential}, nil
}

// Ops reports one op type, "put".
func (p *Put) Ops() []OpKind { return []OpKind{{Name: "put", Share: 1}} }

// SetDirect sends the puts over conns (see DialDirect).
func (p *Put) SetDirect(conns []grpc.ClientConnInterface) { p.direct = conns }

// Worker returns a put loop with its own key buffer, response and random source:
// it allocates nothing of its own per request.
func (p *Put) Worker(id int) Op {
	invoke, rng := invokerOf(loadConn(p.clients, p.direct, id)), workerRand(id)
	req := &pb.PutRequest{Key: p.keys.buf(), Value: []byte(p.value)}
	resp := &pb.PutResponse{Header: &pb.ResponseHeader{}}
	sent := int64(len(req.Key) + len(req.Value))
	return func(ctx context.Context, seq uint64) Outcome {
		i := seq % p.keys.n
		if !p.seqKeys {
			i = rng.Uint64N(p.keys.n)
		}
		p.keys.fill(req.Key, i) // gRPC has marshalled the previous request by now
		// The codec merges into the response (see gogoCodec.Unmarshal): reset it, keeping its header.
		h := resp.Header
		*h = pb.ResponseHeader{}
		*resp = pb.PutResponse{Header: h}
		ep, err := invoke(ctx, methodPut, req, resp)
		return Outcome{Sent: sent, Endpoint: ep, Err: err}
	}
}
