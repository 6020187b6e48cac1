package bench

import (
	"context"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

func newWatch(t *testing.T, clis []*clientv3.Client, watchers, streams int, keys uint64) *Watch {
	t.Helper()
	w, err := NewWatch(clis, WatchConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 32, Watchers: watchers, Streams: streams, WatchedKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWatchHealthy(t *testing.T) {
	_, clis := startEtcd(t, 2)
	w := newWatch(t, clis, 12, 3, 4)
	var run results.Run
	cfg := Config{Workers: 4, Rate: 200, Total: 200, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Ops) != 2 || run.Ops[0].Op != "watch" || run.Ops[1].Op != "put" {
		t.Fatalf("ops = %v", run.Ops)
	}
	watch, put := run.Ops[0], run.Ops[1]
	if put.Requests != 200 || put.Errors != 0 {
		t.Fatalf("puts: %d, %d errors", put.Requests, put.Errors)
	}
	// Every put reaches the 3 watchers of its key: 200 × 12/4 events, none missed.
	if watch.Events != 600 || watch.Requests != 600 || watch.MissedEvents != 0 || watch.OutOfOrder != 0 {
		t.Errorf("events %d (measured %d), missed %d, out of order %d; want 600, 600, 0, 0",
			watch.Events, watch.Requests, watch.MissedEvents, watch.OutOfOrder)
	}
	if watch.Watchers != 12 || watch.CreateMs == nil || watch.CreateMs.Max <= 0 {
		t.Errorf("watchers %d, create %+v", watch.Watchers, watch.CreateMs)
	}
	if watch.Latency.P50 <= 0 || watch.ThroughputRPS <= 0 || watch.TargetRPS != 0 {
		t.Errorf("watch latency %+v, %g events/s, target %g", watch.Latency, watch.ThroughputRPS, watch.TargetRPS)
	}
	if !run.Valid && put.LateStarts == 0 {
		t.Errorf("invalid although every put started on time: %s", run.InvalidReason)
	}
}

// lossyWatch loses its first watcher right after the watches are created.
type lossyWatch struct{ *Watch }

func (l lossyWatch) Prepare(ctx context.Context, emit Emit) error {
	err := l.Watch.Prepare(ctx, emit)
	l.set.watchers[0].cancel()
	return err
}

func TestWatchMissedEvents(t *testing.T) {
	_, clis := startEtcd(t, 1)
	w := newWatch(t, clis, 4, 2, 2)
	var run results.Run
	cfg := Config{Workers: 2, Rate: 200, Total: 100, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, lossyWatch{w}, &run); err != nil {
		t.Fatal(err)
	}
	watch := run.Ops[0]
	// Watcher 0 watches key 0, which gets every other put: it misses those 50 events.
	if watch.MissedEvents != 50 || watch.Events != 150 {
		t.Errorf("missed %d of %d events; want 50 of 200", watch.MissedEvents, watch.Events+watch.MissedEvents)
	}
}

// TestWatchStreams checks that the watchers really open separate gRPC streams.
func TestWatchStreams(t *testing.T) {
	c, clis := startEtcd(t, 2)
	w := newWatch(t, clis, 10, 5, 3)
	if err := w.Prepare(context.Background(), func(int, time.Time, time.Time, error) {}); err != nil {
		t.Fatal(err)
	}
	defer w.Finish(context.Background())
	if got := serverCounter(t, c.Members()[0].ClientURL+"/metrics", "etcd_debugging_mvcc_watch_stream_total"); got != 5 {
		t.Errorf("server counts %g watch streams, want 5", got)
	}
	if got := serverCounter(t, c.Members()[0].ClientURL+"/metrics", "etcd_debugging_mvcc_watcher_total"); got != 10 {
		t.Errorf("server counts %g watchers, want 10", got)
	}
}

// TestWatchPrefix: every watcher watches the whole prefix, so every put reaches
// all of them, and the server's own count of events sent is puts × watchers.
func TestWatchPrefix(t *testing.T) {
	c, clis := startEtcd(t, 2)
	url := c.Members()[0].ClientURL + "/metrics"
	w, err := NewWatch(clis, WatchConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 32, Watchers: 6, Streams: 3, WatchedKeys: 5, PrefixWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	before := serverCounter(t, url, "etcd_debugging_mvcc_events_total")
	var run results.Run
	cfg := Config{Workers: 4, Rate: 300, Total: 150, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	sent := serverCounter(t, url, "etcd_debugging_mvcc_events_total") - before
	watch, put := run.Ops[0], run.Ops[1]
	if put.Requests != 150 || put.Errors != 0 {
		t.Fatalf("puts: %d, %d errors", put.Requests, put.Errors)
	}
	if watch.Events != 150*6 || watch.MissedEvents != 0 || watch.OutOfOrder != 0 {
		t.Errorf("events %d, missed %d, out of order %d; want 900, 0, 0", watch.Events, watch.MissedEvents, watch.OutOfOrder)
	}
	if sent != 150*6 {
		t.Errorf("server sent %g events, want 900 (150 puts × 6 watchers)", sent)
	}
}

// TestWatchMissesByRevision: watcher B lacks acknowledged revision 11 but got a
// duplicate of 12 and the event of a put applied without an acknowledgement
// (13). Counting events, B has its 3 and misses nothing; by revision it missed one.
func TestWatchMissesByRevision(t *testing.T) {
	ks, err := newKeySpace(DefaultPrefix, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newWatchSet(nil, ks, 2, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	s.revs.base = 10
	acked := s.counter()
	for _, rev := range []int64{10, 11, 12} {
		acked[0]++
		s.revs.ack(rev, 0)
	}
	events := func(revs ...int64) clientv3.WatchChan {
		ch := make(chan clientv3.WatchResponse, len(revs))
		for _, r := range revs {
			ch <- clientv3.WatchResponse{Events: []*clientv3.Event{{Kv: &mvccpb.KeyValue{ModRevision: r}}}}
		}
		close(ch)
		return ch
	}
	nop := func(int, time.Time, time.Time, error) {}
	s.watchers[0].receive(events(10, 11, 12), 0, nop, &s.revs)
	s.watchers[1].receive(events(10, 12, 12, 13), 0, nop, &s.revs)
	s.settled, s.create = true, &results.Summary{}
	var op results.Op
	s.annotate(&op)
	if op.MissedEvents != 1 || op.OutOfOrder != 1 || op.Events != 7 {
		t.Errorf("missed %d, out of order %d, events %d; want 1, 1, 7", op.MissedEvents, op.OutOfOrder, op.Events)
	}
}

// TestWatchTailIsNotMissed: etcd delivers a watcher's events in revision
// order, so when the wait for events in flight ends, a live watcher that has
// not reached the last revisions yet is late, not missing them; only a gap
// below its last revision, or the tail of a watch that ended, is missed. Of
// revisions 10..15: A got all; B got 10..12 and was still catching up (3
// undelivered); C lacks 11 below its last, 15 (1 missed); D's watch ended
// after 11 (4 missed).
func TestWatchTailIsNotMissed(t *testing.T) {
	ks, err := newKeySpace(DefaultPrefix, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newWatchSet(nil, ks, 4, 1, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	s.revs.base = 10
	acked := s.counter()
	for rev := int64(10); rev <= 15; rev++ {
		acked[0]++
		s.revs.ack(rev, 0)
	}
	events := func(revs ...int64) clientv3.WatchChan {
		ch := make(chan clientv3.WatchResponse, len(revs))
		for _, r := range revs {
			ch <- clientv3.WatchResponse{Events: []*clientv3.Event{{Kv: &mvccpb.KeyValue{ModRevision: r}}}}
		}
		close(ch)
		return ch
	}
	nop := func(int, time.Time, time.Time, error) {}
	s.watchers[0].receive(events(10, 11, 12, 13, 14, 15), 0, nop, &s.revs)
	s.watchers[1].receive(events(10, 11, 12), 0, nop, &s.revs)
	s.watchers[2].receive(events(10, 12, 13, 14, 15), 0, nop, &s.revs)
	s.watchers[3].receive(events(10, 11), 0, nop, &s.revs)
	// When the wait ended, only D's watch had ended.
	s.ended = []bool{false, false, false, true}
	s.settled, s.create = true, &results.Summary{}
	var op results.Op
	s.annotate(&op)
	if op.MissedEvents != 5 || op.UndeliveredEvents != 3 || op.Events != 16 {
		t.Errorf("missed %d, undelivered %d, events %d; want 5, 3, 16", op.MissedEvents, op.UndeliveredEvents, op.Events)
	}
}
