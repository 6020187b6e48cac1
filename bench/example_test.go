package bench_test

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/results"
)

// A tool puts load on a cluster and reads the recorded run: here 200 puts of
// 256-byte values from 4 clients in a closed loop, against an embedded etcd.
// With Config.Rate set the load is open loop, each request timed from when the
// pacer meant it to start. Run deletes the keys under the prefix afterwards.
func ExampleRun() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close()

	put, err := bench.NewPut([]*clientv3.Client{cli}, bench.PutConfig{Prefix: bench.DefaultPrefix, KeySize: 16, ValSize: 256, KeySpace: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	run := &results.Run{}
	cfg := bench.Config{Workers: 4, Total: 200, Prefix: bench.DefaultPrefix, KV: cli}
	if err := bench.Run(ctx, cfg, put, run); err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range run.Ops {
		fmt.Printf("%s: %d requests, %d errors\n", op.Op, op.Requests, op.Errors)
	}
	// Output:
	// put: 200 requests, 0 errors
}
