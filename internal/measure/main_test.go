package measure

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
)

// TestMain lets cluster.Start re-execute this test binary as an etcd member:
// members of a cluster of more than one run as processes of their own.
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}
