package serve

import (
	"context"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestServeFootprint runs 200 ticks at a short period against an etcd that
// never compacts (embed's default: auto-compaction off) and bounds what the
// canary leaves: at most one revision a probe, and the cluster read as never
// compacted.
func TestServeFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and probes it 200 times")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	tg := connect(t, ctx, c.Endpoints())
	const ticks = 200
	pr := testProber(t, tg, "/etcdperf/serve-footprint/", 20, 100*time.Millisecond, nil)
	if err := pr.Validate(250 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	status := func() (db, rev int64) {
		st, err := tg.Client.Status(ctx, c.Endpoints()[0])
		if err != nil {
			t.Fatal(err)
		}
		return st.DbSize, st.Header.Revision
	}
	db0, rev0 := status()
	var n, ran, wrote int
	var last Result
	Run(ctx, Schedule{Every: 250 * time.Millisecond, Probes: ticks}, pr.Probe, func(r Result) {
		n++
		if r.Ran() {
			ran++
		}
		wrote += r.Revisions
		last = r
	})
	db1, rev1 := status()
	t.Logf("%d ticks (%d ran, %d revisions written by the canary): db %d → %d bytes, revision %d → %d", n, ran, wrote, db0, db1, rev0, rev1)
	if n != ticks || ran != ticks {
		t.Errorf("%d ticks, %d ran, want %d", n, ran, ticks)
	}
	if grew := rev1 - rev0; grew > ticks+2 || wrote != ticks {
		t.Errorf("revisions grew by %d over %d probes (canary counted %d), want at most one a probe", grew, ticks, wrote)
	}
	if s := last.State; !s.CompactKnown || s.CompactRevision != 0 || s.Uncompacted() < int64(ticks)-1 {
		t.Errorf("state %+v: want never compacted, at least %d revisions kept", s, ticks-1)
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if k := keysUnder(t, tg.Client, "/etcdperf/serve-footprint/"); k != 0 {
		t.Errorf("%d keys left after Close", k)
	}
}

// TestCompactRevision finds the compact revision after compactions, from no
// hint and from a stale one.
func TestCompactRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	cli := clustertest.Client(t, c)
	var rev int64
	for range 50 {
		r, err := cli.Put(ctx, "/k", "v")
		if err != nil {
			t.Fatal(err)
		}
		rev = r.Header.Revision
	}
	if got, err := compactRevision(ctx, cli, "/k", rev, 0); err != nil || got != 0 {
		t.Fatalf("never compacted: %d, %v; want 0", got, err)
	}
	for _, at := range []int64{17, 40} {
		if _, err := cli.Compact(ctx, at); err != nil {
			t.Fatal(err)
		}
		for _, hint := range []int64{0, 17} {
			if got, err := compactRevision(ctx, cli, "/k", rev, hint); err != nil || got != at {
				t.Errorf("compacted at %d, hint %d: %d, %v", at, hint, got, err)
			}
		}
	}
}
