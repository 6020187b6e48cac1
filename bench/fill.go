package bench

import (
	"context"
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxTxnOps is etcd's default --max-txn-ops.
const maxTxnOps = 128

// fillParallel is how many transactions a fill keeps in flight.
const fillParallel = 16

// fill writes keys 0 .. ks.n-1 with value before a measured run: transactions of
// up to 128 puts (etcd's --max-txn-ops) under the request size limit, several at
// a time over the connections. It is setup, not load, so it is not recorded.
func fill(ctx context.Context, clients []*clientv3.Client, ks keySpace, value string) error {
	per := uint64(max(1, min(maxTxnOps, (MaxRequestBytes-requestEnvelope)/(ks.len()+len(value)+requestEnvelope))))
	batches := (ks.n + per - 1) / per
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for g := range uint64(fillParallel) {
		wg.Go(func() {
			buf := ks.buf()
			ops := make([]clientv3.Op, 0, per)
			for bi := g; bi < batches && ctx.Err() == nil; bi += fillParallel {
				lo, hi := bi*per, min((bi+1)*per, ks.n)
				ops = ops[:0]
				for i := lo; i < hi; i++ {
					ops = append(ops, clientv3.OpPut(ks.key(buf, i), value))
				}
				if _, err := client(clients, int(g)).Txn(ctx).Then(ops...).Commit(); err != nil {
					cancel(fmt.Errorf("fill keys %d..%d: %w", lo, hi-1, err))
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}
