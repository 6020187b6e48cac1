package profiles

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/results"
)

// minTTL is the shortest lease TTL a profile may ask for: etcd raises shorter
// ones to its own minimum (1.5 election timeouts, 1.5 s by default) anyway.
const minTTL = 2 * time.Second

// defaultTTL is the TTL of a lease op that states none.
const defaultTTL = 60 * time.Second

// leaseRevokeTimeout bounds the revocation of the leases after a run.
const leaseRevokeTimeout = 30 * time.Second

// leaseKeepAlive grants leases before the run and renews a random one per
// request (one LeaseKeepAlive round trip, as a client's keep-alive loop sends).
// bench has no lease workload; this is etcdperf's adapter until it does.
type leaseKeepAlive struct {
	clients []*clientv3.Client
	n       int
	ttl     time.Duration
	ids     []clientv3.LeaseID
}

func newLeaseKeepAlive(clients []*clientv3.Client, n int, ttl time.Duration) (*leaseKeepAlive, error) {
	if len(clients) == 0 {
		return nil, errors.New("lease: no clients")
	}
	if ttl == 0 {
		ttl = defaultTTL
	}
	return &leaseKeepAlive{clients: clients, n: n, ttl: ttl}, nil
}

// Ops reports one op, "lease-keepalive".
func (l *leaseKeepAlive) Ops() []bench.OpKind {
	return []bench.OpKind{{Name: "lease-keepalive", Share: 1}}
}

// Prepare grants the leases.
func (l *leaseKeepAlive) Prepare(ctx context.Context, _ bench.Emit) error {
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

// Worker renews a random lease per request.
func (l *leaseKeepAlive) Worker(id int) bench.Op {
	cli := l.clients[id%len(l.clients)]
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)))
	return func(ctx context.Context, _ uint64) bench.Outcome {
		_, err := cli.KeepAliveOnce(ctx, l.ids[rng.IntN(len(l.ids))])
		return bench.Outcome{Err: err}
	}
}

// Finish revokes the leases, with a context of its own so it also runs after
// the run was cancelled: leases left behind would outlive the run by their TTL.
func (l *leaseKeepAlive) Finish(context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseRevokeTimeout)
	defer cancel()
	for i, id := range l.ids {
		_, _ = l.clients[i%len(l.clients)].Revoke(ctx, id) // best effort: they expire anyway
	}
	l.ids = nil
}

// Annotate adds nothing.
func (l *leaseKeepAlive) Annotate([]results.Op) {}
