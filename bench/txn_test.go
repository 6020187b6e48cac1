package bench

import (
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

const (
	mTxnRPCs = `grpc_server_handled_total|grpc_method="Txn",grpc_code="OK"`
	mTxns    = "etcd_mvcc_txn_total"
	mPuts    = "etcd_mvcc_put_total"
	mDeletes = "etcd_mvcc_delete_total"
)

func newTxn(t *testing.T, clis []*clientv3.Client, cfg TxnConfig) *Txn {
	t.Helper()
	cfg.Prefix, cfg.KeySize, cfg.ValSize = DefaultPrefix, 4, 64
	w, err := NewTxn(clis, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// staleTxn forgets every revision after the fill, as an apiserver whose cache
// lags: the first update of each key conflicts.
type staleTxn struct{ *Txn }

func (s staleTxn) Prepare(ctx context.Context, emit Emit) error {
	err := s.Txn.Prepare(ctx, emit)
	for i := range s.revs {
		s.revs[i].Store(1)
	}
	return err
}

// TestTxnConflicts updates all 4 keys in every txn from stale revisions: the
// first txn conflicts once and is retried with the returned revisions, every
// later one succeeds at once. The server's counters agree: every attempt is a
// Txn RPC and an mvcc txn, and every successful one puts 4 keys.
func TestTxnConflicts(t *testing.T) {
	c, clis := startEtcd(t, 1)
	url := c.Members()[0].ClientURL + "/metrics"
	w := newTxn(t, clis, TxnConfig{KeySpace: 4, Ops: 4})
	before := counters(t, url, mTxnRPCs, mTxns, mPuts)
	var run results.Run
	cfg := Config{Workers: 1, Total: 50, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, staleTxn{w}, &run); err != nil {
		t.Fatal(err)
	}
	after := counters(t, url, mTxnRPCs, mTxns, mPuts)
	op := run.Ops[0]
	if op.Op != "txn" || op.Requests != 50 || op.Errors != 0 || op.Conflicts != 1 {
		t.Fatalf("txn: %d requests, %d errors, %d conflicts; want 50, 0, 1", op.Requests, op.Errors, op.Conflicts)
	}
	// The fill is one txn of 4 puts.
	if d := after[mTxnRPCs] - before[mTxnRPCs]; d != 1+50+1 {
		t.Errorf("server handled %g Txn RPCs, want 52 (fill, 50 updates, 1 retry)", d)
	}
	// etcd 3.6 evaluates a write txn's compares in a read view and applies its
	// puts in a write view, and counts each view with more than one op as a txn
	// (storage/mvcc/metrics_txn.go, etcdserver/txn/txn.go): 2 per successful
	// update of 4 keys, 1 for the failed one (compares and gets in one view).
	if d := after[mTxns] - before[mTxns]; d != 1+2*50+1 {
		t.Errorf("etcd_mvcc_txn_total grew by %g, want 102", d)
	}
	if d := after[mPuts] - before[mPuts]; d != 4+50*4 {
		t.Errorf("etcd_mvcc_put_total grew by %g, want 204", d)
	}
}

// TestTxnCreateDelete creates and deletes objects in kube-apiserver's shape:
// the server puts once per create and deletes once per delete (plus the two
// deletes of the cleanup: one that deletes the prefix, one that finds it empty).
func TestTxnCreateDelete(t *testing.T) {
	c, clis := startEtcd(t, 1)
	url := c.Members()[0].ClientURL + "/metrics"
	w := newTxn(t, clis, TxnConfig{KeySpace: 10, Ops: 1, CreateRatio: 0.3, DeleteRatio: 0.3})
	before := counters(t, url, mTxnRPCs, mPuts, mDeletes)
	var run results.Run
	cfg := Config{Workers: 4, Total: 300, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	after := counters(t, url, mTxnRPCs, mPuts, mDeletes)
	upd, cre, del := run.Ops[0], run.Ops[1], run.Ops[2]
	if upd.Errors+cre.Errors+del.Errors != 0 || upd.Requests+cre.Requests+del.Requests != 300 || cre.Requests == 0 || del.Requests == 0 {
		t.Fatalf("updates %d, creates %d, deletes %d, errors %d", upd.Requests, cre.Requests, del.Requests, upd.Errors+cre.Errors+del.Errors)
	}
	if cre.Conflicts != 0 || del.Conflicts != 0 {
		t.Errorf("creates and deletes of a worker's own objects conflicted: %d, %d", cre.Conflicts, del.Conflicts)
	}
	if d := after[mTxnRPCs] - before[mTxnRPCs]; d != float64(1+300+upd.Conflicts) {
		t.Errorf("server handled %g Txn RPCs, want %d", d, 1+300+upd.Conflicts)
	}
	if d := after[mPuts] - before[mPuts]; d != float64(10+upd.Requests+cre.Requests) {
		t.Errorf("etcd_mvcc_put_total grew by %g, want %d", d, 10+upd.Requests+cre.Requests)
	}
	if d := after[mDeletes] - before[mDeletes]; d != float64(del.Requests+2) {
		t.Errorf("etcd_mvcc_delete_total grew by %g, want %d", d, del.Requests+2)
	}
}

func TestTxnBadConfig(t *testing.T) {
	_, clis := startEtcd(t, 1)
	for _, tc := range []struct {
		cfg  TxnConfig
		want string
	}{
		{TxnConfig{KeySpace: 200, Ops: 129}, "--max-txn-ops"},
		{TxnConfig{KeySpace: 200, Ops: 0}, "--max-txn-ops"},
		{TxnConfig{KeySpace: 2, Ops: 3}, "--key-space-size"},
		{TxnConfig{KeySpace: 10, Ops: 1, CreateRatio: 0.7, DeleteRatio: 0.7}, "sum to at most 1"},
	} {
		cfg := tc.cfg
		cfg.Prefix, cfg.KeySize, cfg.ValSize = DefaultPrefix, 4, 64
		if _, err := NewTxn(clis, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
	cfg := TxnConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 64 << 10, KeySpace: 200, Ops: 100}
	if _, err := NewTxn(clis, cfg); err == nil || !strings.Contains(err.Error(), "request limit") {
		t.Errorf("100 objects of 64 KiB in one txn: err %v", err)
	}
}

// TestTxnWatched watches the objects' prefix as 3 apiservers' watch caches do:
// every update, create and delete reaches each watcher, and the server counts
// as many events sent.
func TestTxnWatched(t *testing.T) {
	c, clis := startEtcd(t, 2)
	url := c.Members()[0].ClientURL + "/metrics"
	w := newTxn(t, clis, TxnConfig{KeySpace: 50, Ops: 1, CreateRatio: 0.2, DeleteRatio: 0.2, Watchers: 3, Streams: 3})
	before := serverCounter(t, url, "etcd_debugging_mvcc_events_total")
	var run results.Run
	cfg := Config{Workers: 4, Rate: 400, Total: 200, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	sent := serverCounter(t, url, "etcd_debugging_mvcc_events_total") - before
	if len(run.Ops) != 4 || run.Ops[3].Op != "watch" {
		t.Fatalf("ops %v", run.Ops)
	}
	var writes int64
	for _, op := range run.Ops[:3] {
		writes += op.Requests - op.Errors
	}
	watch := run.Ops[3]
	if writes != 200 || watch.Events != 3*writes || watch.MissedEvents != 0 || watch.OutOfOrder != 0 {
		t.Errorf("%d writes, %d events, %d missed, %d out of order; want 200, 600, 0, 0", writes, watch.Events, watch.MissedEvents, watch.OutOfOrder)
	}
	if sent != float64(3*writes) {
		t.Errorf("server sent %g events, want %d", sent, 3*writes)
	}
	if watch.Requests == 0 || watch.Latency.P50 <= 0 {
		t.Errorf("watch latency from %d events: %+v", watch.Requests, watch.Latency)
	}
}
