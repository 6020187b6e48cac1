package faults

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Defrag defragments the member at endpoint after a delay, through etcd's own
// API (what `etcdctl defrag` calls): the member blocks its reads and writes
// while it rewrites its db. It returns at once; cleanup waits for it, and the
// test fails if it did not finish.
func Defrag(t testing.TB, endpoint string, delay time.Duration) {
	t.Helper()
	after(t, delay, "defragmentation", func() error {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		t0 := time.Now()
		if _, err := cli.Defragment(ctx, endpoint); err != nil {
			return err
		}
		t.Logf("defragmented %s in %s", endpoint, time.Since(t0).Round(time.Millisecond))
		return nil
	})
}
