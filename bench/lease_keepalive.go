package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// leaseRevokeTimeout bounds the revocation of the leases after a run.
const leaseRevokeTimeout = 30 * time.Second

// LeaseKeepAlive grants leases before the run and renews a random one per
// request (one LeaseKeepAlive round trip, as a client's keep-alive loop sends).
// A profile's keep-alive op (Lease is the lease life: grant, puts, revoke).
type LeaseKeepAlive struct {
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	n       int
	ttl     time.Duration
	ids     []clientv3.LeaseID
}

// NewLeaseKeepAlive renews n leases of ttl (whole seconds) from clients.
func NewLeaseKeepAlive(clients []*clientv3.Client, n int, ttl time.Duration) (*LeaseKeepAlive, error) {
	if len(clients) == 0 {
		return nil, errors.New("lease: no clients")
	}
	if ttl < time.Second {
		return nil, fmt.Errorf("lease: ttl %s under a second", ttl)
	}
	return &LeaseKeepAlive{clients: clients, n: n, ttl: ttl}, nil
}

// Ops reports one op, "lease-keepalive".
func (l *LeaseKeepAlive) Ops() []OpKind {
	return []OpKind{{Name: "lease-keepalive", Share: 1}}
}

// Prepare grants the leases.
func (l *LeaseKeepAlive) Prepare(ctx context.Context, _ Emit) error {
	secs := int64(l.ttl / time.Second)
	for i := range l.n {
		resp, err := l.clients[i%len(l.clients)].Grant(ctx, secs)
		if err != nil {
			return fmt.Errorf("grant lease %d of %d: %w", i+1, l.n, err)
		}
		l.ids = append(l.ids, resp.ID)
	}
	return nil
}

// SetDirect sends the renewals over conns (see DialDirect); the grants and
// revokes around the run keep the clients.
func (l *LeaseKeepAlive) SetDirect(conns []grpc.ClientConnInterface) { l.direct = conns }

// Worker renews a random lease per request, one request on a stream of its
// own as clientv3's KeepAliveOnce sends it (see methodLeaseKeepAlive).
func (l *LeaseKeepAlive) Worker(id int) Op {
	kv := stubFor(l.clients, l.direct, id)
	req := &pb.LeaseKeepAliveRequest{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)))
	return func(ctx context.Context, _ uint64) Outcome {
		req.ID = int64(l.ids[rng.IntN(len(l.ids))])
		resp, err := kv.LeaseKeepAliveOnce(ctx, req)
		if err == nil && resp.TTL <= 0 {
			err = rpctypes.ErrLeaseNotFound // as KeepAliveOnce says it
		}
		return Outcome{Err: err}
	}
}

// Finish revokes the leases, with a context of its own so it also runs after
// the run was cancelled: leases left behind would outlive the run by their TTL.
func (l *LeaseKeepAlive) Finish(context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseRevokeTimeout)
	defer cancel()
	for i, id := range l.ids {
		_, _ = l.clients[i%len(l.clients)].Revoke(ctx, id) // best effort: they expire anyway
	}
	l.ids = nil
}

// Annotate adds nothing.
func (l *LeaseKeepAlive) Annotate([]results.Op) {}
