package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// DefaultPageSize is client-go's pager page size (pager.defaultPageSize, 500):
// informers' initial LIST and kubectl's --chunk-size default.
const DefaultPageSize = 500

// ListConfig shapes the list workload.
type ListConfig struct {
	Prefix  string
	KeySize int    // bytes after the prefix of the filled keys
	ValSize int    // bytes of each filled value
	Keys    uint64 // objects filled before the run; 0 lists what is under Prefix
	// PageSize is the keys per range (--page-size); every page after the first
	// continues after the last key at the first page's revision.
	PageSize int64
	// Consistency is l (a linearizable first page, as a LIST without a
	// resourceVersion) or s (serializable).
	Consistency string
	// Exact lists at the revision the data had when the load started, as a LIST
	// with resourceVersionMatch=Exact; compacted away, it fails as kube's 410 Gone.
	Exact bool
}

// Check validates cfg without a cluster.
func (cfg ListConfig) Check() error {
	if cfg.PageSize < 1 {
		return fmt.Errorf("list: --page-size must be at least 1, got %d", cfg.PageSize)
	}
	if cfg.Consistency != "l" && cfg.Consistency != "s" && cfg.Consistency != "" {
		return fmt.Errorf("list: consistency must be l (linearizable) or s (serializable), got %q", cfg.Consistency)
	}
	if cfg.Keys == 0 {
		return nil
	}
	if _, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.Keys); err != nil {
		return err
	}
	return CheckRequestSize(len(cfg.Prefix)+cfg.KeySize, cfg.ValSize)
}

// List walks a prefix page by page the way client-go's pager LISTs through
// kube-apiserver: a range of PageSize keys, then a range from just after its
// last key at the first page's revision, until the server says there are no
// more. Each request is one whole LIST ("list"); each page is reported too
// ("list-page", with its own latency).
type List struct {
	cfg     ListConfig
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	keys    keySpace
	value   string
	end     []byte
	rev     int64 // Exact: the revision every list reads at
	emit    Emit
}

// Op kinds of the list workload.
const (
	listWhole = iota
	listPage
)

// NewList checks cfg.
func NewList(clients []*clientv3.Client, cfg ListConfig) (*List, error) {
	if len(clients) == 0 {
		return nil, errors.New("list: no clients")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	l := &List{cfg: cfg, clients: clients, end: []byte(clientv3.GetPrefixRangeEnd(cfg.Prefix))}
	if cfg.Keys > 0 {
		l.keys, _ = newKeySpace(cfg.Prefix, cfg.KeySize, cfg.Keys)
		l.value = newValue(cfg.ValSize)
	}
	return l, nil
}

// Ops reports whole lists and their pages.
func (l *List) Ops() []OpKind { return []OpKind{{Name: "list", Share: 1}, {Name: "list-page"}} }

// Prepare fills the objects and, for Exact, notes the revision to list at.
func (l *List) Prepare(ctx context.Context, emit Emit) error {
	l.emit = emit
	if l.cfg.Keys > 0 {
		if err := fill(ctx, l.clients, l.keys, l.value); err != nil {
			return err
		}
	}
	if l.cfg.Exact {
		resp, err := l.clients[0].Get(ctx, l.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return fmt.Errorf("list: read the revision: %w", err)
		}
		l.rev = resp.Header.Revision
	}
	return nil
}

// SetDirect sends the pages over conns (see DialDirect); the fill keeps the clients.
func (l *List) SetDirect(conns []grpc.ClientConnInterface) { l.direct = conns }

// Worker returns a loop of whole LISTs.
func (l *List) Worker(id int) Op {
	kv := stubFor(l.clients, l.direct, id)
	req := &pb.RangeRequest{RangeEnd: l.end, Limit: l.cfg.PageSize, Serializable: l.cfg.Consistency == "s"}
	next := make([]byte, 0, len(l.cfg.Prefix)+64)
	return func(ctx context.Context, _ uint64) Outcome {
		out := Outcome{Kind: listWhole}
		req.Key, req.Revision = []byte(l.cfg.Prefix), l.rev
		for {
			sent := time.Now()
			resp, err := kv.Range(ctx, req)
			if l.emit != nil {
				l.emit(listPage, sent, time.Now(), err)
			}
			out.Sent += int64(len(req.Key) + len(req.RangeEnd))
			if err != nil {
				out.Err = err
				return out
			}
			out.Keys += int64(len(resp.Kvs))
			for _, kv := range resp.Kvs {
				out.Recv += int64(len(kv.Key) + len(kv.Value))
			}
			if !resp.More || len(resp.Kvs) == 0 {
				return out
			}
			if req.Revision == 0 {
				req.Revision = resp.Header.Revision
			}
			last := resp.Kvs[len(resp.Kvs)-1].Key
			next = append(append(next[:0], last...), 0)
			req.Key = next
		}
	}
}
