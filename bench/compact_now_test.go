package bench

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestCompactNow compacts a real etcd to its revision, twice: the second finds
// the history already compacted and is no error.
func TestCompactNow(t *testing.T) {
	if testing.Short() {
		t.Skip("live etcd")
	}
	_, clis := startEtcd(t, 1)
	ctx, cli := context.Background(), clis[0]
	var old int64
	for i := range 3 {
		resp, err := cli.Put(ctx, "/compact/k", string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			old = resp.Header.Revision
		}
	}
	for range 2 {
		if err := CompactNow(ctx, cli); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Get(ctx, "/compact/k", clientv3.WithRev(old)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("read at revision %d after CompactNow: %v, want ErrCompacted", old, err)
	}
}
