// Package clustertest starts an etcd cluster (package cluster) for a test and
// stops it with the test, so that no test repeats the setup or leaves a member
// running. Tests of every package may import it: it imports cluster and etcd's
// client only.
package clustertest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
)

// Start starts a cluster of cfg and stops it when t and its subtests end; t
// fails now when the cluster does not start (cfg.StartTimeout bounds the wait).
func Start(t testing.TB, cfg cluster.Config) *cluster.Cluster {
	t.Helper()
	c, err := cluster.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Logf("stop etcd: %v", err)
		}
	})
	return c
}

// Client is a client to every endpoint of c, closed when t ends.
func Client(t testing.TB, c *cluster.Cluster) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
