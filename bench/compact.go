package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

// Compacting is a workload with kube-apiserver's compactor running beside it:
// every interval it compacts the cluster's history to the revision it noted at
// the previous tick, so one interval of history is kept (kube-apiserver's
// --etcd-compaction-interval, 5 minutes by default). Each compaction is
// reported as a "compact" result: its duration, physical (the RPC returns once
// the backend has dropped the old revisions), as the server's compaction takes.
// It compacts the whole keyspace, not only the prefix: etcd has one history.
type Compacting struct {
	w     Workload
	cli   *clientv3.Client
	every time.Duration

	stop chan struct{}
	wg   sync.WaitGroup
}

// WithCompaction runs w with a compaction every interval, through cli.
func WithCompaction(w Workload, cli *clientv3.Client, every time.Duration) *Compacting {
	return &Compacting{w: w, cli: cli, every: every}
}

// Ops are w's ops and "compact".
func (c *Compacting) Ops() []OpKind {
	return append(append([]OpKind(nil), c.w.Ops()...), OpKind{Name: "compact"})
}

// Worker is w's worker.
func (c *Compacting) Worker(id int) Op { return c.w.Worker(id) }

// Prepare prepares w, then starts the compactor.
func (c *Compacting) Prepare(ctx context.Context, emit Emit) error {
	if p, ok := c.w.(Preparer); ok {
		if err := p.Prepare(ctx, emit); err != nil {
			return err
		}
	}
	kind := len(c.w.Ops())
	c.stop = make(chan struct{})
	// Its own context: a compaction in flight when the load stops completes and counts.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.wg.Go(func() {
		defer cancel()
		t := time.NewTicker(c.every)
		defer t.Stop()
		var noted, compacted int64
		for {
			select {
			case <-c.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if noted > compacted {
				sent := time.Now()
				_, err := c.cli.Compact(cctx, noted, clientv3.WithCompactPhysical())
				emit(kind, sent, time.Now(), err)
				compacted = noted
			}
			resp, err := c.cli.Get(cctx, "compact_rev_key", clientv3.WithCountOnly())
			if err == nil {
				noted = resp.Header.Revision
			}
		}
	})
	return nil
}

// Finish stops the compactor, waiting for a compaction in flight, then finishes w.
func (c *Compacting) Finish(ctx context.Context) {
	if c.stop != nil {
		close(c.stop)
		c.wg.Wait()
	}
	if f, ok := c.w.(Finisher); ok {
		f.Finish(ctx)
	}
}

// Annotate lets w annotate its own ops.
func (c *Compacting) Annotate(ops []results.Op) {
	if f, ok := c.w.(Finisher); ok {
		f.Annotate(ops[:len(ops)-1])
	}
}

// CompactNow compacts cli's cluster to its current revision, physically: a
// history already compacted that far is not an error.
func CompactNow(ctx context.Context, cli *clientv3.Client) error {
	resp, err := cli.Get(ctx, "compact_rev_key", clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}
