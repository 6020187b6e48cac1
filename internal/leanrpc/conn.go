// Package leanrpc is a unary gRPC client over HTTP/2 for the load
// connections of etcdperf's request loops, below gRPC-go's stream machinery:
// a call is a HEADERS and a DATA frame written into a buffer shared by the
// concurrent calls (one write syscall for several), and one reader goroutine
// that hands each response to its waiting call by stream id. It does what a
// unary etcd KV call needs and nothing more: no streams, no compression, no
// name resolution beyond the dialer's. Auth tokens are clientv3's (policy.go).
// Failed calls are made again as clientv3's retry
// interceptor makes them (policy.go), besides gRPC-go's transparent retry.
// Connection- and stream-level flow control, the server's settings, PING,
// GOAWAY, keepalive and message size limits are honoured as gRPC-go honours
// them; errors are gRPC status errors with gRPC-go's codes.
package leanrpc

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Options are a connection's settings, as clientv3.Config has them.
type Options struct {
	// TLS, when set, secures every endpoint (ALPN h2).
	TLS *tls.Config
	// DialTimeout bounds Dial's wait for a first ready endpoint; 5 s when
	// zero. One connection attempt may take minConnectTimeout, as gRPC-go's.
	DialTimeout time.Duration
	// MaxSendMsgSize and MaxRecvMsgSize bound a request and a response.
	MaxSendMsgSize, MaxRecvMsgSize int
	// KeepaliveTime, when set, pings a connection that has read nothing that
	// long (10 s at least, as gRPC-go has it); one that reads nothing within
	// KeepaliveTimeout (20 s when zero, gRPC's default) of the ping is closed,
	// and so is one whose write makes no progress for both together.
	// PermitWithoutStream pings with no call in flight too.
	KeepaliveTime, KeepaliveTimeout time.Duration
	PermitWithoutStream             bool

	// Username and Password, when set, authenticate the connection (etcd's
	// Auth/Authenticate) as clientv3 does: the token goes in each call's
	// metadata, and a call the server finds without a valid token gets a new
	// one and is made again.
	Username, Password string

	// keepaliveFloor replaces minKeepaliveTime in tests, as gRPC-go's tests
	// lower internal.KeepaliveMinPingTime.
	keepaliveFloor time.Duration
	// token is the current auth token (nil without a user).
	token *atomic.Pointer[string]
}

// authToken is the token a call of method carries; none for Authenticate.
func (o *Options) authToken(method string) string {
	if o.token == nil || method == methodAuthenticate {
		return ""
	}
	if p := o.token.Load(); p != nil {
		return *p
	}
	return ""
}

// Connection backoff as gRPC-go has it (connection-backoff.md in the gRPC
// repository; grpc-go's backoff.DefaultConfig and clientconn.go's
// minConnectTimeout): after the n-th failed attempt in a row to one endpoint
// the next waits 1 s × 1.6^n, ±20%, 120 s at most; an attempt may take 20 s,
// or its backoff when longer. A connection that was ready and is lost is
// dialled again at once, as round_robin's subchannels leave IDLE at once.
const (
	backoffBase       = time.Second
	backoffMult       = 1.6
	backoffJitter     = 0.2
	backoffMax        = 120 * time.Second
	minConnectTimeout = 20 * time.Second
)

// backoff is the wait after retries+1 failed attempts in a row: gRPC-go's
// internal/backoff Exponential.Backoff (the first is the base, unjittered).
func backoff(retries int) time.Duration {
	if retries == 0 {
		return backoffBase
	}
	d := float64(backoffBase)
	for ; d < float64(backoffMax) && retries > 0; retries-- {
		d *= backoffMult
	}
	d = min(d, float64(backoffMax))
	return time.Duration(d * (1 + backoffJitter*(2*rand.Float64()-1)))
}

// Conn is a load connection: one HTTP/2 connection per endpoint, calls spread
// over the ready ones round-robin, as gRPC-go's round_robin picker spreads
// them. An endpoint whose connection is lost is dialled again, with backoff
// while attempts fail, whatever the state of the others, and takes its share
// again once ready. A call finding none ready waits, as gRPC's WaitForReady
// does, for one to be, until its context ends. It implements
// grpc.ClientConnInterface for unary calls of etcd's messages.
type Conn struct {
	eps  []*endpoint
	opts Options
	next atomic.Uint32
	// picker is the ready connections, rebuilt (under mu) whenever one is
	// ready or lost; a call skips one found lost meanwhile.
	picker atomic.Pointer[[]*transport]
	// kaTime is the keepalive time of new connections; a GOAWAY
	// too_many_pings doubles it (clientconn.go, gRFC A8).
	kaTime atomic.Int64

	ctx  context.Context // ends on Close: dials stop
	stop context.CancelFunc

	mu      sync.Mutex
	changed chan struct{} // closed when a dial ends; then replaced

	authMu sync.Mutex // one Authenticate at a time
}

// endpoint is one server address and its current connection.
type endpoint struct {
	idx  int // in Conn.eps
	addr string
	cur  atomic.Pointer[transport]

	mu       sync.Mutex
	dialing  bool
	retryAt  time.Time
	attempts int
	lastErr  error
}

// Dial starts connecting to addrs (host:port) and returns once one is ready,
// or an error after opts.DialTimeout naming the last failure.
func Dial(ctx context.Context, addrs []string, opts Options) (*Conn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("leanrpc: no endpoints")
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.KeepaliveTimeout <= 0 {
		opts.KeepaliveTimeout = 20 * time.Second
	}
	if opts.KeepaliveTime > 0 {
		floor := opts.keepaliveFloor
		if floor == 0 {
			floor = minKeepaliveTime
		}
		opts.KeepaliveTime = max(opts.KeepaliveTime, floor)
	}
	c := &Conn{opts: opts, changed: make(chan struct{})}
	c.picker.Store(new([]*transport))
	c.kaTime.Store(int64(opts.KeepaliveTime))
	c.ctx, c.stop = context.WithCancel(context.Background())
	for i, a := range addrs {
		c.eps = append(c.eps, &endpoint{idx: i, addr: a})
	}
	if opts.Username != "" {
		c.opts.token = new(atomic.Pointer[string])
	}
	ctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	for _, ep := range c.eps {
		c.startDial(ep)
	}
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if c.ready() != nil {
			if err := c.authenticate(ctx, ""); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		}
		if err := c.allFailed(); err != nil {
			c.Close()
			return nil, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			c.Close()
			return nil, fmt.Errorf("no endpoint ready within the dial timeout (%s): %w", opts.DialTimeout, c.lastError())
		}
	}
}

// Invoke makes the unary call method with request args and response reply,
// both etcd API messages. Call options are ignored. A call that fails is made
// again as clientv3's retry interceptor makes it (see retry), so its latency
// includes its retries, as an application's does.
func (c *Conn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	_, err := c.InvokeAt(ctx, method, args, reply)
	return err
}

// InvokeAt is Invoke, and names the endpoint whose connection carried the
// call's last attempt: its index in Dial's addrs, -1 when none did.
func (c *Conn) InvokeAt(ctx context.Context, method string, args, reply any) (endpoint int, err error) {
	tok := c.opts.authToken(method)
	endpoint, err = c.call(ctx, method, args, reply)
	if err == nil {
		return endpoint, nil
	}
	return c.retry(ctx, method, args, reply, endpoint, tok, err)
}

// call makes the call once, as far as the application can tell: it is made
// again on another connection, as gRPC-go's transparent retry does
// (stream.go, shouldRetry), whenever none of it went out, and once when the
// server did not process its stream (above a GOAWAY's last stream id, or
// refused). endpoint is as InvokeAt's.
func (c *Conn) call(ctx context.Context, method string, args, reply any) (endpoint int, err error) {
	if err := ctx.Err(); err != nil {
		return -1, status.FromContextError(err).Err()
	}
	first := true
	for {
		t, err := c.pick(ctx)
		if err != nil {
			return -1, err
		}
		again, err := t.invoke(ctx, method, args, reply)
		switch {
		case again == retryUnsent:
			first = false
			continue
		case again == retryUnprocessed && first:
			first = false
			continue
		}
		return t.ep, err
	}
}

// retry says whether a failed call may be made again.
type retry uint8

const (
	retryNone        retry = iota
	retryUnsent            // nothing of the call went out
	retryUnprocessed       // the server did not process the call's stream
)

// notSent is a send error before any of the call went out.
type notSent struct{ error }

// NewStream fails: a load connection carries unary calls only.
func (c *Conn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "leanrpc: a load connection carries unary calls only")
}

// Close ends every connection; calls in flight fail with Canceled.
func (c *Conn) Close() error {
	c.stop()
	for _, ep := range c.eps {
		if t := ep.cur.Swap(nil); t != nil {
			t.close()
		}
	}
	return nil
}

// Ready says whether a call would find a connection ready now.
func (c *Conn) Ready() bool { return c.ready() != nil }

// ready is a ready connection, the next one round-robin; nil when none is.
func (c *Conn) ready() *transport {
	ts := *c.picker.Load()
	n := uint32(len(ts))
	start := c.next.Add(1)
	for i := range n {
		if t := ts[(start+i)%n]; t.ok.Load() {
			return t
		}
	}
	return nil
}

// rebuild makes the picker of the connections ready now.
func (c *Conn) rebuild() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ts []*transport
	for _, ep := range c.eps {
		if t := ep.cur.Load(); t != nil && t.ok.Load() {
			ts = append(ts, t)
		}
	}
	c.picker.Store(&ts)
}

// pick is a ready connection (its endpoint is Conn.eps[t.ep]); when none is,
// it waits for one, each endpoint being dialled again on its own.
func (c *Conn) pick(ctx context.Context) (*transport, error) {
	if t := c.ready(); t != nil {
		return t, nil
	}
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if c.ctx.Err() != nil {
			return nil, status.Error(codes.Canceled, "leanrpc: the connection is closing")
		}
		if t := c.ready(); t != nil {
			return t, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-c.ctx.Done():
		}
	}
}

// startDial starts a connection attempt to ep unless the Conn is closed, one
// is under way, ep has a ready connection, or it waits out its backoff (a
// timer then starts the attempt).
func (c *Conn) startDial(ep *endpoint) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if t := ep.cur.Load(); c.ctx.Err() != nil || ep.dialing || (t != nil && t.ok.Load()) || time.Now().Before(ep.retryAt) {
		return
	}
	ep.dialing = true
	go c.dial(ep)
}

// lost is told by ep's connection t that it takes no new calls (lost, going
// away, out of stream ids): ep is dialled again at once.
func (c *Conn) lost(ep *endpoint, tooManyPings bool) {
	if tooManyPings {
		for {
			old := c.kaTime.Load()
			if c.kaTime.CompareAndSwap(old, 2*old) {
				break
			}
		}
	}
	c.rebuild()
	c.startDial(ep)
	c.signal()
}

// signal wakes the calls waiting for a change of the endpoints.
func (c *Conn) signal() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// dial makes one connection attempt to ep; a failed one schedules the next
// after its backoff.
func (c *Conn) dial(ep *endpoint) {
	ep.mu.Lock()
	wait := backoff(ep.attempts)
	ep.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, max(minConnectTimeout, wait))
	t, err := dialTransport(ctx, ep.addr, c.opts.TLS, &c.opts, time.Duration(c.kaTime.Load()), func(tooManyPings bool) {
		c.lost(ep, tooManyPings)
	})
	cancel()
	ep.mu.Lock()
	ep.dialing = false
	if err != nil {
		ep.lastErr = fmt.Errorf("%s: %w", ep.addr, err)
		ep.retryAt = time.Now().Add(wait)
		ep.attempts++
		time.AfterFunc(wait, func() { c.startDial(ep) })
		t = nil
	} else {
		t.ep = ep.idx
		ep.attempts, ep.lastErr, ep.retryAt = 0, nil, time.Time{}
		if old := ep.cur.Swap(t); old != nil {
			old.retire() // its calls in flight finish first (a GOAWAY's drain)
		}
		if c.ctx.Err() == nil {
			t = nil
		} else { // closed while dialling
			ep.cur.Store(nil)
		}
	}
	ep.mu.Unlock()
	if t != nil {
		t.close() // outside ep.mu: it tells lost
	}
	c.rebuild()
	c.signal()
}

// allFailed is the joined errors when every endpoint's last attempt failed
// and none is dialling; nil otherwise.
func (c *Conn) allFailed() error {
	var errs []error
	for _, ep := range c.eps {
		ep.mu.Lock()
		failed := !ep.dialing && ep.lastErr != nil
		err := ep.lastErr
		ep.mu.Unlock()
		if !failed {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *Conn) lastError() error {
	var msgs []string
	for _, ep := range c.eps {
		ep.mu.Lock()
		if ep.lastErr != nil {
			msgs = append(msgs, ep.lastErr.Error())
		} else if ep.dialing {
			msgs = append(msgs, ep.addr+": still connecting")
		}
		ep.mu.Unlock()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// gogoMessage is what etcd's gogo-generated API messages implement: a size, a
// marshal into a buffer of that size, and an unmarshal that merges into the
// message (the caller resets a reused one; generated code copies every bytes
// field, so the message keeps no reference to the buffer).
type gogoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
	Unmarshal([]byte) error
}

// maxPooled is the largest buffer kept for reuse, so one wide range does not
// pin its response's memory for the rest of a run.
const maxPooled = 64 << 10

var (
	bufPool  = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
	callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}
)

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

// invoke makes one call on t, saying whether it may be made again.
func (t *transport) invoke(ctx context.Context, method string, args, reply any) (retry, error) {
	m, ok := args.(gogoMessage)
	if !ok {
		return retryNone, status.Errorf(codes.Internal, "leanrpc: %T is not an etcd API message", args)
	}
	n := m.Size()
	if n > t.opts.MaxSendMsgSize {
		return retryNone, status.Errorf(codes.ResourceExhausted, "trying to send message larger than max (%d vs. %d)", n, t.opts.MaxSendMsgSize)
	}
	bp := bufPool.Get().(*[]byte)
	if cap(*bp) < 5+n {
		*bp = make([]byte, 0, 5+n)
	}
	msg := (*bp)[:5+n]
	msg[0] = 0
	binary.BigEndian.PutUint32(msg[1:5], uint32(n))
	if _, err := m.MarshalToSizedBuffer(msg[5:]); err != nil {
		putBuf(bp)
		return retryNone, status.Errorf(codes.Internal, "marshal %T: %v", args, err)
	}
	var timeout string
	if dl, ok := ctx.Deadline(); ok {
		timeout = encodeTimeout(time.Until(dl))
	}
	c := callPool.Get().(*call)
	rp := bufPool.Get().(*[]byte)
	c.buf = (*rp)[:0]
	err := t.send(ctx, c, method, timeout, msg)
	putBuf(bp)
	if err != nil {
		if c.id == 0 || !t.cancel(c) {
			// Never registered, or the reader finished it: wait for nothing
			// more than the signal it may have sent.
			select {
			case <-c.done:
			default:
			}
		}
		if ns, ok := err.(notSent); ok {
			return retryUnsent, ns.error
		}
		return retryNone, err
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		if t.cancel(c) {
			return retryNone, status.FromContextError(ctx.Err()).Err() // c stays with the reader, not pooled
		}
		<-c.done
	}
	again := retryNone
	if c.unprocessed {
		again = retryUnprocessed
	}
	err = c.result(reply)
	*rp = c.buf
	putBuf(rp)
	*c = call{done: c.done}
	callPool.Put(c)
	return again, err
}
