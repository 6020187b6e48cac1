package bench

import (
	"context"
	"errors"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
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

// Worker returns a put loop with its own key buffer and random source.
func (p *Put) Worker(id int) Op {
	kv, rng := kvStub(client(p.clients, id)), workerRand(id)
	req := &pb.PutRequest{Key: p.keys.buf(), Value: []byte(p.value)}
	sent := int64(len(req.Key) + len(req.Value))
	return func(ctx context.Context, seq uint64) Outcome {
		i := seq % p.keys.n
		if !p.seqKeys {
			i = rng.Uint64N(p.keys.n)
		}
		p.keys.fill(req.Key, i) // gRPC has marshalled the previous request by now
		_, err := kv.Put(ctx, req)
		return Outcome{Sent: sent, Err: err}
	}
}
