package livetest

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
)

// TestMain lets cluster.Start re-execute this test binary as an etcd member: the
// scenarios that limit a member with cgroups need it in a process of its own.
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}
