package leanrpc

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
)

func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd() // the separate etcd processes of the stall test
	os.Exit(m.Run())
}
