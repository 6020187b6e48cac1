package profiles

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// fakeClients are unconnected clients: enough for constructors, which only
// check their configs and keep the clients for later.
func fakeClients(t *testing.T) []*clientv3.Client {
	t.Helper()
	return []*clientv3.Client{{}}
}
