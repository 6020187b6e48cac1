package inspect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}

// shape is the data the test writes; expected figures are derived from it by hand.
var shape = []struct {
	prefix   string
	keys     int
	value    int // final value size
	rewrites int // puts before the final one (history)
}{
	{"/registry/pods/ns1/p", 30, 1000, 0},
	{"/registry/configmaps/c", 10, 5000, 3},
	{"/other/k", 5, 10, 0},
	{"/big/one", 1, 1200 << 10, 0}, // past 2/3 of 1.5 MiB: near the request limit
	{"plain", 1, 7, 0},
}

// wantPrefixes are the depth-2 prefixes of shape, largest first.
var wantPrefixes = []Prefix{
	{Prefix: "/big/", Keys: 1, KeyBytes: 8, ValueBytes: 1200 << 10},
	{Prefix: "/registry/configmaps/", Keys: 10, KeyBytes: int64(10 * len("/registry/configmaps/cN")), ValueBytes: 50000, OldRevisions: 30},
	{Prefix: "/registry/pods/", Keys: 30, KeyBytes: int64(10*len("/registry/pods/ns1/pN") + 20*len("/registry/pods/ns1/pNN")), ValueBytes: 30000},
	{Prefix: "/other/", Keys: 5, KeyBytes: int64(5 * len("/other/kN")), ValueBytes: 50},
	{Prefix: "", Keys: 1, KeyBytes: 5, ValueBytes: 7},
}

func fill(ctx context.Context, t *testing.T, cli *clientv3.Client) {
	t.Helper()
	for _, s := range shape {
		for i := 0; i < s.keys; i++ {
			key := s.prefix
			if s.keys > 1 {
				key = fmt.Sprintf("%s%d", s.prefix, i)
			}
			for w := 0; w < s.rewrites; w++ {
				mustPut(ctx, t, cli, key, 100+w)
			}
			mustPut(ctx, t, cli, key, s.value)
		}
	}
	// Deleted keys: invisible live, tombstones in a snapshot.
	for i := 0; i < 3; i++ {
		k := fmt.Sprintf("/gone/%d", i)
		mustPut(ctx, t, cli, k, 50)
		if _, err := cli.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}

func mustPut(ctx context.Context, t *testing.T, cli *clientv3.Client, key string, size int) {
	t.Helper()
	if _, err := cli.Put(ctx, key, strings.Repeat("v", size)); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func startFilled(t *testing.T) (*cluster.Cluster, *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100})
	cli := clustertest.Client(t, c)
	fill(ctx, t, cli)
	return c, cli
}

func testOptions() Options {
	return Options{Depth: 2, Top: 3, MaxRequestBytes: DefaultMaxRequestBytes}
}

func revision(ctx context.Context, t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func checkShape(t *testing.T, r *Result, deleted int64) {
	t.Helper()
	got := append([]Prefix{}, r.Prefixes...)
	for i := range got {
		got[i].ValueSize = SizeSummary{}
	}
	if !reflect.DeepEqual(got, wantPrefixes) {
		t.Errorf("prefixes:\n got %+v\nwant %+v", got, wantPrefixes)
	}
	var want Totals
	for _, p := range wantPrefixes {
		want.Keys += p.Keys
		want.KeyBytes += p.KeyBytes
		want.ValueBytes += p.ValueBytes
	}
	if r.Total != want {
		t.Errorf("total %+v, want %+v", r.Total, want)
	}
	if r.ValueSize.Max != 1200<<10 || r.ValueSize.P50 != 1000 {
		t.Errorf("value sizes %+v, want p50 1000 and max %d", r.ValueSize, 1200<<10)
	}
	if len(r.NearLimit) != 1 || r.NearLimit[0].Key != "/big/one" || len(r.Largest) != 3 || r.Largest[0].Key != "/big/one" {
		t.Errorf("near limit %+v, largest %+v", r.NearLimit, r.Largest)
	}
	if h := r.History; h.OldRevisions != 30 || h.KeysWithHistory != 10 || h.MaxDepth != 3 || h.DeletedKeys != deleted {
		t.Errorf("history %+v, want 30 old revisions in 10 keys, depth 3, %d deleted", h, deleted)
	}
	if f := findingOf(r, finding.ClassValueSize); f.Severity != finding.Warn {
		t.Errorf("value-size finding %+v, want warn for /big/one", f)
	}
}

func findingOf(r *Result, class finding.Class) finding.Finding {
	for _, f := range r.Findings {
		if f.Class == class {
			return f
		}
	}
	return finding.Finding{}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestInspectLiveAndSnapshot(t *testing.T) {
	ctx := context.Background()
	c, cli := startFilled(t)
	target := LiveTarget{Client: cli, Endpoints: c.Endpoints()}
	before := revision(ctx, t, cli)

	// A page size of 7 forces pagination across every prefix boundary.
	live, err := Live(ctx, target, LiveOptions{Options: testOptions(), PageSize: 7, PageBytes: 64 << 10, Values: ValuesAuto, ExactUnder: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if after := revision(ctx, t, cli); after != before {
		t.Errorf("revision moved from %d to %d during a live inspect", before, after)
	}
	if live.Values.Mode != ValuesExact || !live.Values.Exact || live.Revision != before {
		t.Errorf("values %+v at revision %d, want exact at %d", live.Values, live.Revision, before)
	}
	checkShape(t, live, 0)
	if live.History.CompactRevision != 0 || !live.History.Exact {
		t.Errorf("history %+v: want never compacted, exact", live.History)
	}
	if live.Scan.Pages < 8 {
		t.Errorf("%d pages for 47 keys at 7 per page", live.Scan.Pages)
	}

	// A sample keeps counts and key bytes exact and reads only some values.
	sampled, err := Live(ctx, target, LiveOptions{Options: testOptions(), PageSize: 7, PageBytes: 64 << 10, Values: ValuesSample, ExactUnder: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if sampled.Total.Keys != live.Total.Keys || sampled.Total.KeyBytes != live.Total.KeyBytes || sampled.History.OldRevisions != 30 {
		t.Errorf("sampled totals %+v / history %+v differ from exact %+v", sampled.Total, sampled.History, live.Total)
	}
	if sampled.Values.Exact || sampled.Values.SampledKeys == 0 || sampled.Values.SampledKeys >= live.Total.Keys {
		t.Errorf("sample %+v: want some but not all of %d keys", sampled.Values, live.Total.Keys)
	}

	// The same data from a snapshot: the same figures, plus the deleted keys.
	path := filepath.Join(t.TempDir(), "etcd.snapshot")
	saveSnapshot(ctx, t, cli, path)
	sum := fileSum(t, path)
	snap, err := ReadSnapshot(path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != sum {
		t.Error("ReadSnapshot changed the snapshot file")
	}
	checkShape(t, snap, 3)
	if snap.Revision != before || snap.DB.SizeBytes == 0 || snap.DB.InUseBytes > snap.DB.SizeBytes {
		t.Errorf("snapshot revision %d (want %d), db %+v", snap.Revision, before, snap.DB)
	}
	// Live cannot see deleted keys: the snapshot frees exactly that much more.
	if snap.History.CompactionFreesBytes <= 0 || !snap.History.Exact {
		t.Errorf("snapshot history %+v", snap.History)
	}

	// The same file without etcd's sha256 trailer is a plain db file: still readable.
	raw, _ := os.ReadFile(path)
	dbFile := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(dbFile, raw[:len(raw)-sha256.Size], 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := ReadSnapshot(dbFile, testOptions()); err != nil || r.Total != snap.Total {
		t.Errorf("db file without trailer: %v, total %+v", err, r)
	}

	// After a compaction, history is counted from the compact revision on: one key
	// rewritten since is known to have one old revision, at most.
	if _, err := cli.Compact(ctx, before); err != nil {
		t.Fatal(err)
	}
	mustPut(ctx, t, cli, "/registry/configmaps/c0", 5000)
	compacted, err := Live(ctx, target, LiveOptions{Options: testOptions(), PageSize: 100, PageBytes: 64 << 10, Values: ValuesExact, MaxRPS: 200})
	if err != nil {
		t.Fatal(err)
	}
	h := compacted.History
	if h.CompactRevision != before || h.OldRevisions != 1 || h.Exact || h.RevisionsSinceCompaction != 1 {
		t.Errorf("after compaction at %d: history %+v; want compact revision %d, 1 old revision (bound), 1 revision since", before, h, before)
	}
}

func saveSnapshot(ctx context.Context, t *testing.T, cli *clientv3.Client, path string) {
	t.Helper()
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestInspectBadSnapshots(t *testing.T) {
	ctx := context.Background()
	_, cli := startFilled(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	saveSnapshot(ctx, t, cli, good)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte{}, raw...)
	tampered[len(tampered)/2] ^= 0xff
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"tampered", "sha256 trailer does not match", tampered},
		{"truncated", "truncated", raw[:len(raw)/2+7]},
		{"cut after the meta page", "truncated", raw[:100]},
		{"too short for a meta page", "not a bbolt database", raw[:50]},
		{"text", "not a bbolt database", bytes.Repeat([]byte("not a database\n"), 1000)},
		{"empty", "empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			sum := fileSum(t, path)
			_, err := ReadSnapshot(path, testOptions())
			if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrBadSnapshot saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if fileSum(t, path) != sum {
				t.Error("ReadSnapshot changed the file")
			}
		})
	}
}

func TestInspectLiveNoPermission(t *testing.T) {
	ctx := context.Background()
	c, cli := startFilled(t)
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "nobody", "pw"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, user, pass string }{{"anonymous", "", ""}, {"user without a role", "nobody", "pw"}} {
		t.Run(tc.name, func(t *testing.T) {
			ucli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Username: tc.user, Password: tc.pass, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer ucli.Close()
			_, err = Live(ctx, LiveTarget{Client: ucli, Endpoints: c.Endpoints()}, LiveOptions{Options: testOptions(), PageSize: 10, PageBytes: 1 << 20, ExactUnder: 1 << 30})
			if err == nil || !strings.Contains(err.Error(), "no permission to range") {
				t.Errorf("error %v, want a permission error", err)
			}
		})
	}
}
