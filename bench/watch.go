package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/etcdperf/etcdperf/results"
)

// stampBytes is the put value's head that carries its send time (unix ns, big endian).
const stampBytes = 8

// WatchConfig shapes the watch workload.
type WatchConfig struct {
	Prefix      string
	KeySize     int    // bytes after the prefix
	ValSize     int    // bytes; at least 8, which carry the put's send time
	Watchers    int    // watchers in all
	Streams     int    // gRPC watch streams the watchers spread over
	WatchedKeys uint64 // keys the watchers spread over and the puts cycle through
	// PrefixWatch makes every watcher watch the whole prefix, as kube-apiserver's
	// watch cache watches a resource type: every event reaches every watcher.
	PrefixWatch bool
}

// Watch opens watchers on a few keys and puts to those keys; its latency is from
// each put's send to the event's arrival at each watcher.
type Watch struct {
	set     *watchSet
	clients []*clientv3.Client
	direct  []grpc.ClientConnInterface
	value   string
}

// NewWatch checks cfg.
func NewWatch(clients []*clientv3.Client, cfg WatchConfig) (*Watch, error) {
	if len(clients) == 0 {
		return nil, errors.New("watch: no clients")
	}
	ks, err := newKeySpace(cfg.Prefix, cfg.KeySize, cfg.WatchedKeys)
	if err != nil {
		return nil, err
	}
	if cfg.ValSize < stampBytes {
		return nil, fmt.Errorf("watch: values carry their send time in %d bytes; --val-size must be at least %d", stampBytes, stampBytes)
	}
	if err := CheckRequestSize(ks.len(), cfg.ValSize); err != nil {
		return nil, err
	}
	set, err := newWatchSet(clients, ks, cfg.Watchers, cfg.Streams, 0, cfg.PrefixWatch)
	if err != nil {
		return nil, err
	}
	return &Watch{set: set, clients: clients, value: newValue(cfg.ValSize)}, nil
}

// Ops reports the watch events and the puts that cause them.
func (w *Watch) Ops() []OpKind { return []OpKind{{Name: "watch"}, {Name: "put", Share: 1}} }

// Prepare opens the watchers and measures their creation.
func (w *Watch) Prepare(ctx context.Context, emit Emit) error { return w.set.open(ctx, emit) }

// SetDirect sends the puts over conns (see DialDirect); the watch streams stay
// on the clients' connections.
func (w *Watch) SetDirect(conns []grpc.ClientConnInterface) { w.direct = conns }

// Worker returns a put loop that cycles through the watched keys.
func (w *Watch) Worker(id int) Op {
	invoke, acked := invokerOf(loadConn(w.clients, w.direct, id)), w.set.counter()
	req := &pb.PutRequest{Key: w.set.keys.buf(), Value: []byte(w.value)}
	resp := &pb.PutResponse{Header: &pb.ResponseHeader{}}
	sent := int64(len(req.Key) + len(req.Value))
	return func(ctx context.Context, seq uint64) Outcome {
		i := seq % w.set.keys.n
		w.set.keys.fill(req.Key, i) // gRPC has marshalled the previous request by now
		stampInto(req.Value)
		// The codec merges into the response (see Put.Worker): reset it, keeping its header.
		h := resp.Header
		*h = pb.ResponseHeader{}
		*resp = pb.PutResponse{Header: h}
		ep, err := invoke(ctx, methodPut, req, resp)
		if err == nil {
			acked[w.set.slot(i)]++
			w.set.revs.ack(resp.Header.Revision, w.set.slot(i))
		}
		return Outcome{Kind: 1, Sent: sent, Endpoint: ep, Err: err}
	}
}

// Finish waits for the events in flight and closes the watchers.
func (w *Watch) Finish(ctx context.Context) { w.set.close(ctx) }

// Annotate adds the watch counts to the watch op.
func (w *Watch) Annotate(ops []results.Op) { w.set.annotate(&ops[0]) }

// stampInto writes the current time into the head of buf, a request's value.
func stampInto(buf []byte) { binary.BigEndian.PutUint64(buf, uint64(time.Now().UnixNano())) }

// watchSet is W watchers over S streams on the keys of a key space, or each on
// its whole prefix. Puts to a watched key count themselves in a per-worker
// counter (counter, at index slot), so the set knows how many events every
// watcher should have received.
type watchSet struct {
	clients  []*clientv3.Client
	keys     keySpace
	streams  int
	kind     int // op kind of the events
	watchers []*watcher
	acked    [][]int64 // per worker, per slot: puts acknowledged
	// prefix: every watcher watches the whole prefix, and one slot counts every put.
	prefix bool
	revs   revTable // misses by revision

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	settled bool
	ended   []bool // per watcher: its watch had ended when the wait for events in flight did
	create  *results.Summary
}

// watcher is one watch on one key (or the prefix); its goroutine owns it until the set is closed.
type watcher struct {
	key        uint64
	cancel     context.CancelFunc // stops this watcher alone (tests lose one with it)
	received   atomic.Int64
	outOfOrder int64
	lastRev    atomic.Int64 // the highest revision received; written by the watcher's goroutine alone
	done       atomic.Bool  // the watch ended (its channel closed): no event comes after lastRev
}

// watchCreateTimeout bounds the creation of all watchers.
const watchCreateTimeout = 30 * time.Second

// settleQuiet ends the wait for events in flight when none arrived for that long.
const settleQuiet = time.Second

// settleMax bounds the whole wait for events in flight. etcd does not drop the
// events of a slow watcher: it moves it to its victims and unsynced watchers,
// which catch up from the store later, so a fan-out larger than the watchers
// read leaves a backlog that arrives after the last put (2,000 prefix watchers
// of 500 puts/s were still receiving 21 s after the load began, 10 s after it
// ended). The latency histograms end at 60 s: an event later than that could
// not be timed anyway.
const settleMax = time.Duration(results.HistMaxUs) * time.Microsecond

func newWatchSet(clients []*clientv3.Client, ks keySpace, watchers, streams, kind int, prefix bool) (*watchSet, error) {
	if watchers <= 0 || streams <= 0 {
		return nil, fmt.Errorf("watch: watchers and streams must be at least 1, got %d and %d", watchers, streams)
	}
	if streams > watchers {
		return nil, fmt.Errorf("watch: %d streams for %d watchers; streams cannot outnumber watchers", streams, watchers)
	}
	s := &watchSet{clients: clients, keys: ks, streams: streams, kind: kind, prefix: prefix}
	for i := range watchers {
		s.watchers = append(s.watchers, &watcher{key: s.slot(uint64(i) % ks.n)})
	}
	return s, nil
}

// slots is the number of put counters: one per watched key, or one for the prefix.
func (s *watchSet) slots() uint64 {
	if s.prefix {
		return 1
	}
	return s.keys.n
}

// slot is the counter of a put to watched key i.
func (s *watchSet) slot(i uint64) uint64 {
	if s.prefix {
		return 0
	}
	return i
}

// counter returns a new worker's put counters, indexed by slot.
func (s *watchSet) counter() []int64 {
	c := make([]int64, s.slots())
	s.acked = append(s.acked, c)
	return c
}

// open creates every watcher, concurrently, and returns once all are created.
// Streams are told apart by gRPC metadata: clientv3 multiplexes the watches of
// one client whose contexts carry the same metadata onto one stream.
func (s *watchSet) open(ctx context.Context, emit Emit) error {
	sctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	created := make([]time.Duration, len(s.watchers))
	createdRev := make([]int64, len(s.watchers))
	errs := make(chan error, len(s.watchers))
	var ready sync.WaitGroup
	for i, w := range s.watchers {
		stream := i % s.streams
		wctx := metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(sctx), "etcdperf-stream", strconv.Itoa(stream))
		wctx, w.cancel = context.WithCancel(wctx)
		cli := client(s.clients, stream)
		ready.Add(1)
		s.wg.Go(func() {
			buf := s.keys.buf()
			t := time.Now()
			var wch clientv3.WatchChan
			if s.prefix {
				wch = cli.Watch(wctx, s.keys.prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
			} else {
				wch = cli.Watch(wctx, s.keys.key(buf, w.key), clientv3.WithCreatedNotify())
			}
			first, ok := <-wch
			if !ok || !first.Created {
				err := first.Err()
				if err == nil {
					err = errors.New("watch closed before it was created")
				}
				errs <- fmt.Errorf("watcher %d: %w", i, err)
				ready.Done()
				return
			}
			created[i] = time.Since(t)
			createdRev[i] = first.Header.Revision
			ready.Done()
			w.receive(wch, s.kind, emit, &s.revs)
		})
	}
	allReady := make(chan struct{})
	go func() { ready.Wait(); close(allReady) }()
	select {
	case <-allReady:
	case <-time.After(watchCreateTimeout):
		// Unblocks every watcher still waiting: their channels close.
		cancel()
		<-allReady
		return fmt.Errorf("watch: %d watchers not created within %s", len(s.watchers), watchCreateTimeout)
	}
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	// Every put of the load comes after every watcher's creation revision.
	s.revs.base = slices.Min(createdRev) + 1
	h := results.NewHist()
	for _, d := range created {
		_ = h.RecordValue(usec(int64(d)))
	}
	sum := results.Summarize(h)
	s.create = &sum
	return nil
}

// receive counts and times events until the watch ends, and marks each new
// revision received in revs.
func (w *watcher) receive(wch clientv3.WatchChan, kind int, emit Emit, revs *revTable) {
	defer w.done.Store(true)
	for resp := range wch {
		arrived := time.Now()
		if err := resp.Err(); err != nil {
			emit(kind, arrived, arrived, err)
			continue
		}
		for _, ev := range resp.Events {
			// Revisions of one key (and of a prefix) only grow; one that does not is
			// delivered out of order.
			if ev.Kv.ModRevision <= w.lastRev.Load() {
				w.outOfOrder++
			} else {
				w.lastRev.Store(ev.Kv.ModRevision)
				revs.receive(ev.Kv.ModRevision)
			}
			w.received.Add(1)
			if len(ev.Kv.Value) >= stampBytes {
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(ev.Kv.Value)))
				emit(kind, sent, arrived, nil)
			}
		}
	}
}

// expected is, per slot, the puts acknowledged by the server. It is read after
// the workers stopped.
func (s *watchSet) expected() []int64 {
	e := make([]int64, s.slots())
	for _, c := range s.acked {
		for k, n := range c {
			e[k] += n
		}
	}
	return e
}

// close waits until every watcher has seen the events of the acknowledged puts
// (or none arrived for settleQuiet, or settleMax passed), then stops the
// watchers. When ctx is done the run was interrupted: no wait, and missed
// events are not judged.
func (s *watchSet) close(ctx context.Context) {
	defer func() {
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
	}()
	if ctx.Err() != nil || s.create == nil {
		return
	}
	exp := s.expected()
	deadline := time.Now().Add(settleMax)
	last, quietSince := int64(-1), time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var got int64
		behind := false
		for _, w := range s.watchers {
			n := w.received.Load()
			got += n
			// A watch that ended receives nothing more: waiting cannot help it.
			behind = behind || (n < exp[w.key] && !w.done.Load())
		}
		if !behind {
			break
		}
		if got != last {
			last, quietSince = got, time.Now()
		} else if time.Since(quietSince) >= settleQuiet {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Before the watchers are stopped: which watches ended by themselves.
	s.ended = make([]bool, len(s.watchers))
	for i, w := range s.watchers {
		s.ended[i] = w.done.Load()
	}
	s.settled = ctx.Err() == nil
}

// annotate writes the watch counts into op; it runs after close.
func (s *watchSet) annotate(op *results.Op) {
	op.Watchers = len(s.watchers)
	op.CreateMs = s.create
	for _, w := range s.watchers {
		op.Events += w.received.Load()
		op.OutOfOrder += w.outOfOrder
	}
	if s.settled {
		op.MissedEvents, op.UndeliveredEvents = s.revs.missed(s.reach())
	}
}

// reach is, per slot, what each of its watchers had received when the wait for
// events in flight ended: etcd delivers a watcher's events in revision order,
// so one it lacks below its last revision is missed, and those above it are
// still on their way unless its watch ended.
func (s *watchSet) reach() [][]watcherReach {
	r := make([][]watcherReach, s.slots())
	for i, w := range s.watchers {
		r[w.key] = append(r[w.key], watcherReach{last: w.lastRev.Load(), ended: i < len(s.ended) && s.ended[i]})
	}
	return r
}
