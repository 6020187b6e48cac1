package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// LeaseConfig shapes the lease workload.
type LeaseConfig struct {
	Prefix  string
	ValSize int           // bytes of each attached put
	TTL     time.Duration // whole seconds, at least 1 s
	// KeysPerLease puts attached to each lease (--lease-keys): kube-apiserver
	// attaches the events it writes to one lease for their TTL.
	KeysPerLease int
	// KeepAlives per lease before it is revoked, each a round trip on the
	// worker's LeaseKeepAlive stream.
	KeepAlives int
	// Expire leaves leases to expire instead of revoking them, as events' leases
	// do: the server then deletes their keys itself.
	Expire bool
}

// leaseExpireWait is how long after a run an expiring lease may still live and
// be left to expire on its own; longer-lived ones are revoked, so a run leaves
// no lease behind for long.
const leaseExpireWait = 10 * time.Second

// Check validates cfg without a cluster.
func (cfg LeaseConfig) Check() error {
	switch {
	case cfg.TTL < time.Second || cfg.TTL%time.Second != 0:
		return fmt.Errorf("lease: --lease-ttl must be whole seconds, at least 1s, got %s", cfg.TTL)
	case cfg.KeysPerLease < 0 || cfg.KeepAlives < 0:
		return fmt.Errorf("lease: --lease-keys and --keepalives must not be negative, got %d and %d", cfg.KeysPerLease, cfg.KeepAlives)
	}
	return CheckRequestSize(len(cfg.Prefix)+leaseKeyExtra, cfg.ValSize)
}

// leaseKeyExtra bounds what an attached key adds to the prefix: worker, lease
// count and key index, up to 20 digits each, and two separators.
const leaseKeyExtra = 3*20 + 2

// Lease runs the life of leases, one call per request: grant, the attached
// puts, the keep-alives, and the revoke (unless they expire). Each call kind is
// reported on its own.
type Lease struct {
	cfg     LeaseConfig
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	value   []byte
	ops     []OpKind
	// kinds maps leaseGrant .. leaseRevoke to indexes of ops.
	kinds [4]int

	mu      sync.Mutex
	workers []*leaseWorker

	// shared: expiring leases without keep-alives are shared by all workers, as
	// an apiserver attaches the events of all its requests to one lease: call c
	// (over all workers) grants a new lease when c mod (1+KeysPerLease) is 0 and
	// otherwise puts with the latest lease.
	shared  bool
	calls   atomic.Uint64
	current atomic.Int64
	granted []liveLease // under mu
}

// Call kinds of a lease's life, in order.
const (
	leaseGrant = iota
	leasePut
	leaseKeepAlive
	leaseRevoke
)

// NewLease checks cfg.
func NewLease(clients []*clientv3.Client, cfg LeaseConfig) (*Lease, error) {
	if len(clients) == 0 {
		return nil, errors.New("lease: no clients")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	l := &Lease{cfg: cfg, clients: clients, value: []byte(newValue(cfg.ValSize)), shared: cfg.Expire && cfg.KeepAlives == 0}
	revokes := 1
	if cfg.Expire {
		revokes = 0
	}
	calls := []int{1, cfg.KeysPerLease, cfg.KeepAlives, revokes}
	steps := float64(1 + cfg.KeysPerLease + cfg.KeepAlives + revokes)
	for i, name := range []string{"lease-grant", "lease-put", "lease-keepalive", "lease-revoke"} {
		l.kinds[i] = len(l.ops)
		if calls[i] > 0 {
			l.ops = append(l.ops, OpKind{Name: name, Share: float64(calls[i]) / steps})
		}
	}
	return l, nil
}

// Ops reports each call kind a lease's life makes.
func (l *Lease) Ops() []OpKind { return l.ops }

// leaseWorker is one worker's place in its current lease's life.
type leaseWorker struct {
	l *Lease
	// kv makes the unary calls (grant, puts, revoke); keep-alives go on a
	// stream of clientv3's connection (streams), which the lean transport has not.
	kv      stub
	streams pb.LeaseClient
	id      int
	step    int // calls made on the current lease; 0: grant next
	lease   int64
	count   uint64 // leases granted
	stream  pb.Lease_LeaseKeepAliveClient
	put     *pb.PutRequest
	ka      *pb.LeaseKeepAliveRequest
	// live are the leases granted and not revoked, with when they expire.
	live []liveLease
}

type liveLease struct {
	id      int64
	expires time.Time
}

// SetDirect sends the grants, puts and revokes over conns (see DialDirect);
// the keep-alive streams stay on the clients' connections.
func (l *Lease) SetDirect(conns []grpc.ClientConnInterface) { l.direct = conns }

// Worker returns the next call of the worker's current lease per request.
func (l *Lease) Worker(id int) Op {
	w := &leaseWorker{
		l: l, kv: stubFor(l.clients, l.direct, id), streams: pb.NewLeaseClient(client(l.clients, id).ActiveConnection()), id: id,
		put: &pb.PutRequest{Value: l.value}, ka: &pb.LeaseKeepAliveRequest{},
	}
	l.mu.Lock()
	l.workers = append(l.workers, w)
	l.mu.Unlock()
	if l.shared {
		return w.nextShared
	}
	return w.next
}

// nextShared is the next call of the leases all workers share.
func (w *leaseWorker) nextShared(ctx context.Context, _ uint64) Outcome {
	l := w.l
	c := l.calls.Add(1) - 1
	id := l.current.Load()
	if c%uint64(1+l.cfg.KeysPerLease) == 0 || id == 0 {
		out := w.grant(ctx)
		if out.Err == nil {
			l.current.Store(w.lease)
			l.mu.Lock()
			l.granted = append(l.granted, w.live...)
			l.mu.Unlock()
			w.live = w.live[:0]
		}
		return out
	}
	w.lease, w.count = id, c
	w.put.Key = w.key(w.put.Key, 0)
	w.put.Lease = id
	_, err := w.kv.Put(ctx, w.put)
	return Outcome{Kind: l.kinds[leasePut], Sent: int64(len(w.put.Key) + len(w.put.Value)), Err: err}
}

func (w *leaseWorker) next(ctx context.Context, _ uint64) Outcome {
	cfg := w.l.cfg
	switch s := w.step; {
	case s == 0:
		return w.grant(ctx)
	case s <= cfg.KeysPerLease:
		w.put.Key = w.key(w.put.Key, s-1)
		w.put.Lease = w.lease
		_, err := w.kv.Put(ctx, w.put)
		w.advance()
		return Outcome{Kind: w.l.kinds[leasePut], Sent: int64(len(w.put.Key) + len(w.put.Value)), Err: err}
	case s <= cfg.KeysPerLease+cfg.KeepAlives:
		err := w.keepAlive(ctx)
		w.advance()
		return Outcome{Kind: w.l.kinds[leaseKeepAlive], Err: err}
	}
	_, err := w.kv.LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: w.lease})
	if err == nil {
		w.live = w.live[:len(w.live)-1]
	}
	w.step = 0
	return Outcome{Kind: w.l.kinds[leaseRevoke], Err: err}
}

// advance moves to the next call; after the last one of an expiring lease, to a new lease.
func (w *leaseWorker) advance() {
	w.step++
	if cfg := w.l.cfg; cfg.Expire && w.step > cfg.KeysPerLease+cfg.KeepAlives {
		w.step = 0
	}
}

func (w *leaseWorker) grant(ctx context.Context) Outcome {
	ttl := w.l.cfg.TTL
	resp, err := w.kv.LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: int64(ttl / time.Second)})
	out := Outcome{Kind: w.l.kinds[leaseGrant], Err: err}
	if err == nil && resp.Error != "" {
		out.Err = errors.New("lease grant: " + resp.Error)
	}
	if out.Err != nil {
		return out // the next request grants again
	}
	w.lease, w.count = resp.ID, w.count+1
	w.live = append(w.live, liveLease{id: resp.ID, expires: time.Now().Add(time.Duration(resp.TTL) * time.Second)})
	w.advance()
	return out
}

// keepAlive renews the current lease on the worker's stream, opening it first
// when there is none (or the last one failed).
func (w *leaseWorker) keepAlive(ctx context.Context) error {
	if w.stream == nil {
		s, err := w.streams.LeaseKeepAlive(ctx)
		if err != nil {
			return err
		}
		w.stream = s
	}
	w.ka.ID = w.lease
	err := w.stream.Send(w.ka)
	var resp *pb.LeaseKeepAliveResponse
	if err == nil {
		resp, err = w.stream.Recv()
	}
	if err != nil {
		w.stream = nil
		return err
	}
	if resp.TTL <= 0 {
		return fmt.Errorf("lease keep-alive: lease %x not found", w.lease)
	}
	return nil
}

// key is the j-th key attached to the current lease.
func (w *leaseWorker) key(dst []byte, j int) []byte {
	dst = append(dst[:0], w.l.cfg.Prefix...)
	dst = strconv.AppendInt(dst, int64(w.id), 10)
	dst = append(dst, '/')
	dst = strconv.AppendUint(dst, w.count, 10)
	dst = append(dst, '/')
	return strconv.AppendInt(dst, int64(j), 10)
}

// Finish closes the keep-alive streams and revokes the leases still alive, with
// a context of its own so it also runs after the run was cancelled. Expiring
// leases that end within leaseExpireWait are left to expire.
func (l *Lease) Finish(context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	horizon := time.Now().Add(leaseExpireWait)
	if len(l.workers) > 0 {
		l.workers[0].live = append(l.workers[0].live, l.granted...)
		l.granted = nil
	}
	var wg sync.WaitGroup
	for _, w := range l.workers {
		if w.stream != nil {
			_ = w.stream.CloseSend()
		}
		wg.Go(func() {
			for _, ll := range w.live {
				if l.cfg.Expire && ll.expires.Before(horizon) {
					continue
				}
				// Best effort: a lease that is gone already answers "not found".
				_, _ = w.kv.LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: ll.id})
			}
			w.live = nil
		})
	}
	wg.Wait()
}

// Annotate adds nothing: every call is a request of its own kind.
func (l *Lease) Annotate([]results.Op) {}
