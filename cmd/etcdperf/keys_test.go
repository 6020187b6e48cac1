package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// foreignKeys are keys etcdperf does not own: siblings of its prefixes that
// share their first bytes, the prefixes without their trailing slash, the first
// key past /etcdperf/'s range end, and unrelated keys.
var foreignKeys = []string{
	"/etcdperf", "/etcdperfx", "/etcdperf-other/a", "/etcdperf-other/b", "/etcdperf.",
	"/etcdperf0", // clientv3.GetPrefixRangeEnd("/etcdperf/"): the first key after the prefix
	"/etcdperf-check/x", "/other/a", "/other/etcdperf/a", "etcdperf/", "a", "\xff",
}

// allKeys is every key in the cluster with its value, revisions, version and lease.
func allKeys(t *testing.T, cli *clientv3.Client) []*mvccpb.KeyValue {
	t.Helper()
	resp, err := cli.Get(context.Background(), "\x00", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Kvs
}

// sameKeys fails unless after holds exactly the keys of before, byte for byte,
// revisions included.
func sameKeys(t *testing.T, before, after []*mvccpb.KeyValue) {
	t.Helper()
	if len(before) != len(after) {
		var keys []string
		for _, kv := range after {
			keys = append(keys, string(kv.Key))
		}
		t.Errorf("%d keys before, %d after: %q", len(before), len(after), keys)
		return
	}
	for i, b := range before {
		a := after[i]
		if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) || a.CreateRevision != b.CreateRevision ||
			a.ModRevision != b.ModRevision || a.Version != b.Version || a.Lease != b.Lease {
			t.Errorf("key %q changed:\nbefore %v\nafter  %v", b.Key, b, a)
		}
	}
}

// TestForeignKeysUntouched fills keys etcdperf does not own, some with history
// and a lease, runs every command that touches the cluster, and checks those
// keys are byte-identical afterwards, revisions included. A prefix that holds
// keys is refused without --force and left as it was.
func TestForeignKeysUntouched(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs")
	}
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100})
	ep := c.Endpoints()[0]
	cli := clustertest.Client(t, c)
	ctx := context.Background()
	lease, err := cli.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range foreignKeys {
		for v := range 1 + i%3 { // versions 1 to 3
			if _, err := cli.Put(ctx, k, fmt.Sprintf("value %d of %q", v, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := cli.Put(ctx, "/etcdperf-leased", "v", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	before := allKeys(t, cli)

	t.Run("every command", func(t *testing.T) {
		for _, args := range [][]string{
			{"bench", "put", "--total", "200", "--key-space-size", "50"},
			{"bench", "put", "--total", "100", "--rate", "200", "--sequential-keys", "--key-space-size", "1000"},
			{"bench", "range", "--keys", "200", "--range-width", "200", "--total", "50"},
			{"bench", "range", "--keys", "100", "--range-width", "100", "--count-only", "--consistency", "s", "--total", "50"},
			{"bench", "watch", "--watchers", "4", "--watched-keys", "2", "--total", "50"},
			{"bench", "mixed", "--key-space-size", "100", "--watchers", "2", "--total", "100"},
			{"bench", "txn", "--key-space-size", "20", "--create-ratio", "0.2", "--delete-ratio", "0.2", "--total", "100"},
			{"bench", "lease", "--lease-ttl", "5s", "--lease-keys", "2", "--total", "50", "--compact-interval", "100ms"},
			{"bench", "list", "--keys", "600", "--total", "5"},
			{"bench", "mixed", "--ratios", "txn=0.5,txn-create=0.2,txn-delete=0.1,list=0.05,lease=0.15", "--watchers", "2", "--watch-prefix", "--key-space-size", "100", "--total", "100"},
			{"bench", "watch", "--watch-prefix", "--watchers", "3", "--watched-keys", "4", "--total", "50"},
			{"check", "--load", "s", "--duration", "1s", "--warmup", "0s"},
			{"inspect", "--max-rps", "0"},
			{"inspect", "--key-prefix", "/etcdperf", "--values", "exact"},
		} {
			r := runBin(t, nil, append(args, "--endpoints", ep, "--results-dir", t.TempDir())...)
			if r.code != ExitOK && r.code != ExitFail && r.code != ExitInvalid {
				t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			sameKeys(t, before, allKeys(t, cli))
		}
	})

	t.Run("prefix in use is refused", func(t *testing.T) {
		mine := []string{"/etcdperf/theirs", "/etcdperf/check/theirs"}
		for _, k := range mine {
			if _, err := cli.Put(ctx, k, "theirs"); err != nil {
				t.Fatal(err)
			}
		}
		inUse := allKeys(t, cli)
		for _, args := range [][]string{
			{"bench", "put", "--total", "10"},
			{"bench", "range", "--keys", "10", "--total", "10"},
			{"bench", "watch", "--total", "10"},
			{"bench", "mixed", "--key-space-size", "10", "--total", "10"},
			{"check", "--duration", "1s"},
		} {
			r := runBin(t, nil, append(args, "--endpoints", ep)...)
			assertCleanError(t, r)
			sameKeys(t, inUse, allKeys(t, cli))
		}
		for _, k := range mine {
			if _, err := cli.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("--force takes the prefix alone", func(t *testing.T) {
		if _, err := cli.Put(ctx, "/etcdperf/stale", "left by a killed run"); err != nil {
			t.Fatal(err)
		}
		r := runBin(t, nil, "bench", "put", "--total", "50", "--force", "--endpoints", ep)
		if r.code != ExitOK && r.code != ExitInvalid {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		sameKeys(t, before, allKeys(t, cli))
	})
}
