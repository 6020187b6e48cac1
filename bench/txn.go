package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// MaxTxnOps is etcd's default --max-txn-ops: a txn with more operations in a
// branch fails with "too many operations in txn request".
const MaxTxnOps = maxTxnOps

// maxTxnAttempts bounds the retries of one conflicting update. kube-apiserver's
// GuaranteedUpdate retries until it wins; a bound keeps a pathological run
// (every worker on one key) from spinning forever: the request then fails.
const maxTxnAttempts = 64

// ErrTxnConflicts is the error of an update that lost maxTxnAttempts compares in a row.
var ErrTxnConflicts = errors.New("txn: the compare failed on every retry")

// errTxnExists is the error of a create whose key already exists (kube-apiserver
// answers it with 409 AlreadyExists).
var errTxnExists = errors.New("txn: create: key already exists")

// TxnConfig shapes the txn workload.
type TxnConfig struct {
	Prefix   string
	KeySize  int    // bytes after the prefix
	ValSize  int    // bytes of every object written
	KeySpace uint64 // objects filled before the run, then updated
	// Ops is the keys per txn (--txn-ops): one compare and one put per key; 1 is
	// kube-apiserver's shape.
	Ops int
	// CreateRatio and DeleteRatio are the fractions of txns that create new
	// objects (If create_revision == 0 Then Put) and delete created ones (If
	// mod_revision == seen Then Delete Else Get); the rest update filled objects
	// (If mod_revision == seen Then Put Else Get).
	CreateRatio, DeleteRatio float64
	// Watchers > 0 watch the whole prefix over Streams streams, as the watch
	// caches of kube-apiservers do: every update, create and delete reaches each.
	Watchers, Streams int
}

// Txn is kube-apiserver's write path. An update compares every key's
// mod_revision with the revision last seen for it and puts the whole object;
// when another writer got there first, the Else branch returns the current
// objects and the update is retried with their revisions (a conflict). The
// revisions seen are shared by all workers, as a watch cache shares them among
// an apiserver's requests, so conflicts are real races on one object, not stale
// caches. Creates write new keys under Prefix+"c/"; deletes remove the oldest
// object their worker created.
type Txn struct {
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	keys    keySpace
	prefix  string
	value   string
	nops    int
	create  float64
	delete  float64
	// revs is the mod_revision last seen of each filled key.
	revs []atomic.Int64
	ops  []OpKind
	// kinds maps txnUpdate, txnCreate, txnDelete to indexes of ops.
	kinds [3]int
	set   *watchSet // nil without watchers
}

// Check validates cfg without a cluster: --txn-ops against etcd's --max-txn-ops
// and the key space, the ratios, and a txn's size against the request limit.
func (cfg TxnConfig) Check() error {
	if cfg.Ops < 1 || cfg.Ops > MaxTxnOps {
		return fmt.Errorf("txn: --txn-ops must be between 1 and %d (etcd's --max-txn-ops default), got %d", MaxTxnOps, cfg.Ops)
	}
	if cfg.CreateRatio < 0 || cfg.DeleteRatio < 0 || cfg.CreateRatio+cfg.DeleteRatio > 1 {
		return fmt.Errorf("txn: create and delete ratios must be 0 or more and sum to at most 1, got %g and %g", cfg.CreateRatio, cfg.DeleteRatio)
	}
	ks, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.KeySpace)
	if err != nil {
		return err
	}
	if uint64(cfg.Ops) > ks.n {
		return fmt.Errorf("txn: %d keys per txn over %d keys; --txn-ops must not exceed --key-space-size", cfg.Ops, ks.n)
	}
	if cfg.Watchers > 0 && cfg.ValSize < stampBytes {
		return fmt.Errorf("txn: with watchers, objects carry their send time in %d bytes; the value size must be at least %d", stampBytes, stampBytes)
	}
	// A create's keys are longer than the filled ones: prefix, "c/", worker, "/", count.
	if err := CheckRequestSize(cfg.Ops*(len(cfg.Prefix)+max(createKeyExtra, ks.size)), cfg.Ops*cfg.ValSize); err != nil {
		return fmt.Errorf("txn: %d objects per txn: %w", cfg.Ops, err)
	}
	return nil
}

// NewTxn checks cfg.
func NewTxn(clients []*clientv3.Client, cfg TxnConfig) (*Txn, error) {
	if len(clients) == 0 {
		return nil, errors.New("txn: no clients")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	ks, _ := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.KeySpace)
	t := &Txn{
		clients: clients, keys: ks, prefix: cfg.Prefix, value: newValue(cfg.ValSize), nops: cfg.Ops,
		create: cfg.CreateRatio, delete: cfg.DeleteRatio, revs: make([]atomic.Int64, ks.n),
	}
	if cfg.Watchers > 0 {
		var err error
		if t.set, err = newWatchSet(clients, ks, cfg.Watchers, max(cfg.Streams, 1), 0, true); err != nil {
			return nil, err
		}
	}
	// Only the kinds the ratios ask for are reported.
	for i, k := range []OpKind{
		{Name: "txn", Share: 1 - t.create - t.delete},
		{Name: "txn-create", Share: t.create},
		{Name: "txn-delete", Share: t.delete},
	} {
		t.kinds[i] = len(t.ops)
		if k.Share > 0 || (i == txnCreate && t.delete > 0) {
			t.ops = append(t.ops, k)
		}
	}
	if t.set != nil {
		t.set.kind = len(t.ops)
		t.ops = append(t.ops, OpKind{Name: "watch"})
	}
	return t, nil
}

// createKeyExtra bounds what a created key adds to the prefix: "c/", a worker id
// and a count of up to 20 digits each, and a separator.
const createKeyExtra = 2 + 20 + 1 + 20

// Op kinds of the txn workload.
const (
	txnUpdate = iota
	txnCreate
	txnDelete
)

// Ops reports updates ("txn"), creates and deletes, those with a share.
func (t *Txn) Ops() []OpKind { return t.ops }

// Prepare fills the objects, learns their revisions, then opens the watchers,
// so the fill is not watched.
func (t *Txn) Prepare(ctx context.Context, emit Emit) error {
	if err := fill(ctx, t.clients, t.keys, t.value); err != nil {
		return err
	}
	if err := t.learnRevisions(ctx); err != nil {
		return err
	}
	if t.set != nil {
		return t.set.open(ctx, emit)
	}
	return nil
}

// Finish waits for watch events in flight and closes the watchers.
func (t *Txn) Finish(ctx context.Context) {
	if t.set != nil {
		t.set.close(ctx)
	}
}

// Annotate adds the watch counts to the watch op; conflicts travel with each
// request's outcome.
func (t *Txn) Annotate(ops []results.Op) {
	if t.set != nil {
		t.set.annotate(&ops[t.set.kind])
	}
}

// learnRevisions reads the mod_revision of every filled key, keys only, a page at a time.
func (t *Txn) learnRevisions(ctx context.Context) error {
	buf := t.keys.buf()
	from, end := t.keys.key(buf, 0), t.keys.key(t.keys.buf(), t.keys.n)
	for {
		resp, err := t.clients[0].Get(ctx, from, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(10000))
		if err != nil {
			return fmt.Errorf("txn: read revisions: %w", err)
		}
		for _, kv := range resp.Kvs {
			i, err := strconv.ParseUint(string(kv.Key[len(t.keys.prefix):]), 10, 64)
			if err != nil || i >= t.keys.n {
				return fmt.Errorf("txn: foreign key %q in the key space", kv.Key)
			}
			t.revs[i].Store(kv.ModRevision)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// seen records rev as the latest seen revision of key i unless a later one is known.
func (t *Txn) seen(i uint64, rev int64) {
	for {
		old := t.revs[i].Load()
		if old >= rev || t.revs[i].CompareAndSwap(old, rev) {
			return
		}
	}
}

// txnWorker is one worker's state: a request of each kind, built once and
// refilled per call, and the objects it created and has not deleted yet.
type txnWorker struct {
	t       *Txn
	kv      stub
	id      int
	update  *pb.TxnRequest
	creates *pb.TxnRequest
	deletes *pb.TxnRequest
	idx     []uint64 // the filled keys of the current update
	val     []byte   // the object every put writes; watched, its head is the send time
	acked   []int64  // watched: events the server acknowledged (one slot, the prefix)
	created []created
	next    uint64 // the count of the worker's next created key
}

// created is an object a worker created: its count and the revision it was written at.
type created struct {
	n   uint64
	rev int64
}

// casTxn builds If target(key_j) == 0 Then then(key_j) Else (Get key_j, when withElse),
// with one key buffer per op shared by its compare and requests.
func casTxn(n, keyLen int, target pb.Compare_CompareTarget, then func(key []byte) *pb.RequestOp, withElse bool) *pb.TxnRequest {
	req := &pb.TxnRequest{}
	for range n {
		key := make([]byte, keyLen)
		c := &pb.Compare{Result: pb.Compare_EQUAL, Target: target, Key: key}
		if target == pb.Compare_CREATE {
			c.TargetUnion = &pb.Compare_CreateRevision{}
		} else {
			c.TargetUnion = &pb.Compare_ModRevision{}
		}
		req.Compare = append(req.Compare, c)
		req.Success = append(req.Success, then(key))
		if withElse {
			req.Failure = append(req.Failure, &pb.RequestOp{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: key}}})
		}
	}
	return req
}

// SetDirect sends the txns over conns (see DialDirect); the fill keeps the clients.
func (t *Txn) SetDirect(conns []grpc.ClientConnInterface) { t.direct = conns }

// Worker returns a loop that creates, deletes or updates by ratio.
func (t *Txn) Worker(id int) Op {
	val := []byte(t.value)
	put := func(key []byte) *pb.RequestOp {
		return &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: key, Value: val}}}
	}
	del := func(key []byte) *pb.RequestOp {
		return &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: &pb.DeleteRangeRequest{Key: key}}}
	}
	w := &txnWorker{
		t: t, kv: stubFor(t.clients, t.direct, id), id: id, val: val,
		update: casTxn(t.nops, t.keys.len(), pb.Compare_MOD, put, true),
		idx:    make([]uint64, t.nops),
	}
	if t.set != nil {
		w.acked = t.set.counter()
	}
	for _, c := range w.update.Compare {
		copy(c.Key, t.keys.prefix)
	}
	if t.create > 0 || t.delete > 0 {
		w.creates = casTxn(t.nops, 0, pb.Compare_CREATE, put, false)
		w.deletes = casTxn(t.nops, 0, pb.Compare_MOD, del, true)
	}
	rng := workerRand(id)
	return func(ctx context.Context, _ uint64) Outcome {
		x := rng.Float64()
		switch {
		case x < t.create:
			return w.doCreate(ctx)
		case x < t.create+t.delete:
			if len(w.created) < t.nops {
				return w.doCreate(ctx) // nothing of this worker's to delete yet
			}
			return w.doDelete(ctx)
		}
		start := rng.Uint64N(t.keys.n)
		for j, c := range w.update.Compare {
			i := (start + uint64(j)) % t.keys.n
			w.idx[j] = i
			t.keys.fill(c.Key, i)
			c.TargetUnion.(*pb.Compare_ModRevision).ModRevision = t.revs[i].Load()
		}
		return w.cas(ctx, w.update, txnUpdate, func(j int, rev int64) { t.seen(w.idx[j], rev) })
	}
}

// cas sends req until its compares hold, each time with the revisions its Else
// branch returned; learn records the revision of key j. A key that no longer
// exists fails the request.
func (w *txnWorker) cas(ctx context.Context, req *pb.TxnRequest, kind int, learn func(j int, rev int64)) Outcome {
	out := Outcome{Kind: w.t.kinds[kind], Sent: w.sent(req)}
	for attempt := 1; ; attempt++ {
		w.stamp()
		resp, err := w.kv.Txn(ctx, req)
		if err != nil {
			out.Err = err
			return out
		}
		if resp.Succeeded {
			for j := range req.Compare {
				learn(j, resp.Header.Revision)
			}
			w.ack()
			return out
		}
		out.Conflicts++
		for j, r := range resp.Responses {
			rr := r.GetResponseRange()
			if rr == nil || len(rr.Kvs) == 0 {
				out.Err = fmt.Errorf("txn: %q no longer exists", req.Compare[j].Key)
				return out
			}
			rev := rr.Kvs[0].ModRevision
			req.Compare[j].TargetUnion.(*pb.Compare_ModRevision).ModRevision = rev
			learn(j, rev)
			out.Recv += int64(len(rr.Kvs[0].Key) + len(rr.Kvs[0].Value))
		}
		if attempt == maxTxnAttempts {
			out.Err = ErrTxnConflicts
			return out
		}
		out.Sent += w.sent(req)
	}
}

// sent is the payload bytes of one attempt: keys and values of the Then branch.
func (w *txnWorker) sent(req *pb.TxnRequest) int64 {
	var n int64
	for _, op := range req.Success {
		if p := op.GetRequestPut(); p != nil {
			n += int64(len(p.Key) + len(p.Value))
		} else if d := op.GetRequestDeleteRange(); d != nil {
			n += int64(len(d.Key))
		}
	}
	return n
}

// stamp writes the send time into the head of the object, when watched.
func (w *txnWorker) stamp() {
	if w.acked != nil {
		binary.BigEndian.PutUint64(w.val, uint64(time.Now().UnixNano()))
	}
}

// ack counts the events of a txn that succeeded: one per key.
func (w *txnWorker) ack() {
	if w.acked != nil {
		w.acked[0] += int64(w.t.nops)
	}
}

// createdKey is the key of the worker's n-th created object.
func (w *txnWorker) createdKey(dst []byte, n uint64) []byte {
	dst = append(dst[:0], w.t.prefix...)
	dst = append(dst, 'c', '/')
	dst = strconv.AppendInt(dst, int64(w.id), 10)
	dst = append(dst, '/')
	return strconv.AppendUint(dst, n, 10)
}

// doCreate writes nops new objects, If create_revision == 0 for every one.
func (w *txnWorker) doCreate(ctx context.Context) Outcome {
	for j, c := range w.creates.Compare {
		c.Key = w.createdKey(c.Key, w.next+uint64(j))
		w.creates.Success[j].GetRequestPut().Key = c.Key
	}
	out := Outcome{Kind: w.t.kinds[txnCreate], Sent: w.sent(w.creates)}
	w.stamp()
	resp, err := w.kv.Txn(ctx, w.creates)
	switch {
	case err != nil:
		out.Err = err
	case !resp.Succeeded:
		out.Err = errTxnExists
	default:
		w.ack()
		for range w.creates.Compare {
			w.created = append(w.created, created{n: w.next, rev: resp.Header.Revision})
			w.next++
		}
	}
	return out
}

// doDelete removes the worker's nops oldest created objects, If mod_revision == seen.
func (w *txnWorker) doDelete(ctx context.Context) Outcome {
	for j, c := range w.deletes.Compare {
		c.Key = w.createdKey(c.Key, w.created[j].n)
		c.TargetUnion.(*pb.Compare_ModRevision).ModRevision = w.created[j].rev
		w.deletes.Success[j].GetRequestDeleteRange().Key = c.Key
		w.deletes.Failure[j].GetRequestRange().Key = c.Key
	}
	out := w.cas(ctx, w.deletes, txnDelete, func(j int, rev int64) { w.created[j].rev = rev })
	if out.Err == nil {
		w.created = w.created[w.t.nops:]
	}
	return out
}
