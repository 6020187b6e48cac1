package cluster_test

import (
	"context"
	"fmt"

	"github.com/etcdperf/etcdperf/cluster"
)

// A tool (or a test) starts an embedded etcd member in a temp dir, uses its
// endpoints, and stops it; Close removes the dir. Members > 1 starts each
// member as a process (a program that does so calls MaybeRunEtcd first in main).
func ExampleStart() {
	c, err := cluster.Start(context.Background(), cluster.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(len(c.Members()), "member,", len(c.Endpoints()), "endpoint")
	// Output:
	// 1 member, 1 endpoint
}
