package leanrpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Flow-control windows this client grants the server. Larger than HTTP/2's
// 64 KiB defaults, so responses of a few MiB (wide ranges) need no round trip
// per window and small ones almost never a WINDOW_UPDATE; a window update is
// sent once a quarter of a window is used.
const (
	streamWindow = 4 << 20
	connWindow   = 16 << 20
	// bufSize is the read and write buffer of a connection, gRPC-go's 32 KiB.
	bufSize = 32 << 10
)

// What gRPC-go v1.83 does, so that a run sees what a clientv3 application sees:
const (
	// minKeepaliveTime is the floor of a client's keepalive time:
	// grpc.WithKeepaliveParams raises a shorter one to
	// internal.KeepaliveMinPingTime, 10 s (dialoptions.go, internal/internal.go).
	// It also keeps the pings slower than etcd's --grpc-keepalive-min-time (5 s
	// by default), which answers a client pinging faster with GOAWAY
	// too_many_pings.
	minKeepaliveTime = 10 * time.Second
	// maxStreamID is where a connection stops opening streams and a new one
	// takes the calls: internal/transport's MaxStreamID, 75% of 2^31-1
	// (defaults.go), well before the 31-bit ids run out.
	maxStreamID = math.MaxInt32 / 4 * 3
	// maxQueuedResponses is how many answers to the server's frames (PING and
	// SETTINGS acks, resets) may wait to be written before the reader stops
	// reading: internal/transport's maxQueuedControlBufferItems
	// (envconfig.ControlBufferThrottleLimit, 100 by default).
	maxQueuedResponses = 100
)

// transport is one HTTP/2 connection carrying unary gRPC calls: writers share
// a buffered writer under wmu (the last one queued flushes, after yielding
// once, so concurrent calls share a write syscall), and one reader goroutine
// dispatches the frames to the waiting calls by stream id. The reader, the
// keepalive and a cancel never take wmu: their frames go into a control queue
// that the next writer, or the control writer goroutine, moves into the
// buffer, so a write blocked on a peer that stopped reading holds up no PING
// ack, window update or keepalive timeout.
type transport struct {
	conn      net.Conn
	addr      string
	scheme    string // http or https, the :scheme of every request
	authority string
	opts      *Options

	// ok is false once the connection is lost, going away or out of stream
	// ids: new calls dial another.
	ok atomic.Bool
	// waiting counts the writers queued for wmu: one that finds none, and no
	// flush pending, flushes.
	waiting atomic.Int32

	wmu  sync.Mutex
	bw   *bufio.Writer
	henc *hpack.Encoder
	hbuf bytes.Buffer
	// hblocks are request header blocks by path that encode with the HPACK
	// tables as they are (see keepBlock); dropped when the table size changes.
	hblocks map[string][]byte
	htoken  string  // the auth token of the blocks in hblocks
	hdr     [9]byte // a frame header being written (see writeFrameHeader)
	// wfr writes the frames other than a request's into bw, wmu held.
	wfr    *http2.Framer
	nextID uint32
	werr   error // the first write error: every later write fails with it
	// flushing: a writer has yielded and will flush what is buffered, with
	// the control queue.
	flushing atomic.Bool
	// wtimeout bounds a write that makes no progress (0: none); the write
	// deadline is moved on at most every wtimeout/8, from wrenew on.
	wtimeout time.Duration
	wrenew   time.Time

	cmu      sync.Mutex
	ccond    sync.Cond     // on cmu: the queue was drained, or the connection ended
	cbuf     appender      // control frames queued
	cfr      *http2.Framer // writes into cbuf, cmu held
	cspare   []byte        // the other buffer, while drainControl writes one
	ctable   uint32        // a header table size for the encoder, set before its SETTINGS ack goes
	ctableOK bool
	cdead    bool          // the connection ended: the reader stops waiting
	cresp    atomic.Int32  // answers to the server's frames in cbuf
	cqueued  atomic.Bool   // cbuf holds frames
	ckick    chan struct{} // capacity 1: wakes the control writer

	mu       sync.Mutex
	cond     sync.Cond // on mu: a send window opened, a stream slot freed, or the connection ended
	streams  map[uint32]*call
	active   uint32 // streams open or reserved
	sendConn int64  // the connection's send window
	initSend int64  // the server's initial stream window
	maxFrame int    // the largest DATA payload the server accepts
	maxConc  uint32 // the server's MAX_CONCURRENT_STREAMS
	err      error  // why the connection ended, once it has
	retired  bool   // replaced by a new connection or going away: close once idle

	// Reader state, touched by the reader goroutine only.
	fr          *http2.Framer
	hdec        *hpack.Decoder
	hcall       *call // the call whose header block is being decoded
	hend        bool  // that header block ends its stream
	recvPending uint32
	done        chan struct{}

	// kaTime is the keepalive time (0: none), KeepaliveTimeout its timeout.
	// lastRead is when bytes last arrived, in ns since born, for the
	// keepalive.
	kaTime   time.Duration
	born     time.Time
	lastRead atomic.Int64
	// gone tells the connection's owner, once, that it takes no new calls
	// any more (lost, a GOAWAY, its stream ids used up), so another is
	// dialled at once; tooManyPings says the server's GOAWAY was
	// too_many_pings.
	gone func(tooManyPings bool)
	told atomic.Bool
	// ep is the index of the connection's endpoint in its Conn.
	ep int
	// pings is the state of the paced PINGs (ping.go).
	pings pingState
}

// dialTransport connects to addr and exchanges the HTTP/2 preface and
// settings; it returns once the server's SETTINGS have arrived, with the
// reader running, pinging after kaTime without reads (0: never) and telling
// gone when it stops taking calls.
func dialTransport(ctx context.Context, addr string, tlsCfg *tls.Config, opts *Options, kaTime time.Duration, gone func(bool)) (*transport, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if kaTime > 0 {
		if err := setUserTimeout(conn, opts.KeepaliveTimeout); err != nil {
			conn.Close()
			return nil, fmt.Errorf("set TCP_USER_TIMEOUT: %w", err)
		}
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
		cfg := tlsCfg.Clone()
		cfg.NextProtos = []string{"h2"}
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		// gRPC-go refuses a server that negotiates no protocol
		// (credentials/tls.go, ALPN enforced since 1.67); one that picks
		// another fails the TLS handshake.
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			conn.Close()
			return nil, fmt.Errorf("the TLS server negotiated %q, not HTTP/2 (ALPN h2), as gRPC requires", p)
		}
		conn = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	t, err := newTransport(conn, addr, scheme, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	t.kaTime, t.gone = kaTime, gone
	t.start()
	return t, nil
}

// newTransport makes the HTTP/2 handshake over conn (see handshake).
func newTransport(conn net.Conn, addr, scheme string, opts *Options) (*transport, error) {
	t := &transport{
		conn: conn, addr: addr, scheme: scheme, authority: addr, opts: opts,
		bw: bufio.NewWriterSize(conn, bufSize), nextID: 1,
		streams: make(map[uint32]*call), sendConn: 65535, initSend: 65535,
		maxFrame: 16384, maxConc: math.MaxUint32, done: make(chan struct{}),
		ckick: make(chan struct{}, 1), born: time.Now(), kaTime: opts.KeepaliveTime,
		gone: func(bool) {},
	}
	t.cond.L = &t.mu
	t.ccond.L = &t.cmu
	t.henc = hpack.NewEncoder(&t.hbuf)
	t.fr = http2.NewFramer(nil, bufio.NewReaderSize(readClock{t}, bufSize))
	t.wfr = http2.NewFramer(t.bw, nil)
	t.cfr = http2.NewFramer(&t.cbuf, nil)
	t.fr.SetReuseFrames()
	t.fr.SetMaxReadFrameSize(16384) // HTTP/2's default; none other is advertised
	t.hdec = hpack.NewDecoder(4096, t.onField)
	t.hdec.SetMaxStringLength(1 << 20)
	if err := t.handshake(); err != nil {
		return nil, err
	}
	return t, nil
}

// readClock reads the connection, noting when bytes arrived.
type readClock struct{ t *transport }

func (r readClock) Read(p []byte) (int, error) {
	n, err := r.t.conn.Read(p)
	if n > 0 && r.t.kaTime > 0 {
		r.t.lastRead.Store(int64(time.Since(r.t.born)))
	}
	return n, err
}

// start makes the connection usable: the reader runs, the control writer,
// and the keepalive. A write that makes no progress fails the connection
// after the keepalive timeout, plus the keepalive time when pings are on: a
// ping is sent that long after the last read, and its answer given that long.
func (t *transport) start() {
	t.wtimeout = t.opts.KeepaliveTimeout + t.kaTime
	t.ok.Store(true)
	go t.read()
	go t.writeControl()
	if t.kaTime > 0 {
		go t.keepalive()
	}
}

// handshake writes the client preface, this client's settings and window,
// and reads the server's SETTINGS, which must come first (RFC 9113 §3.4).
func (t *transport) handshake() error {
	t.bw.WriteString(http2.ClientPreface)
	_ = t.wfr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: 1 << 20},
	)
	_ = t.wfr.WriteWindowUpdate(0, connWindow-65535)
	if err := t.bw.Flush(); err != nil {
		return err
	}
	f, err := t.fr.ReadFrame()
	if err != nil {
		return fmt.Errorf("reading the server's HTTP/2 settings: %w", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("the server sent %s first, not its HTTP/2 settings: is it a gRPC server?", f.Header().Type)
	}
	if err := t.applySettings(sf); err != nil {
		return err
	}
	return t.bw.Flush()
}

// writeFrameHeader appends a frame header to the write buffer, wmu held.
// A request's HEADERS and DATA are written by hand, not by http2.Framer's
// WriteHeaders and WriteData: the Framer copies each frame into a buffer of
// its own before it writes it to bw, a second copy of every request's header
// block and message. BenchmarkWriteRequest (a put of 256 B) measured 26 ns
// by hand against 59 ns through the Framer (medians of 6, busy machine), on
// every request. Every other frame lean writes (the preface's SETTINGS and
// WINDOW_UPDATE, the control queue's acks, window updates, resets and pings,
// a GOAWAY) goes through a Framer (wfr, cfr): they are few per request, if
// any, and BenchmarkPut's allocations stay 3 per put with them.
func (t *transport) writeFrameHeader(length int, typ http2.FrameType, flags http2.Flags, id uint32) {
	h := &t.hdr
	h[0], h[1], h[2] = byte(length>>16), byte(length>>8), byte(length)
	h[3], h[4] = byte(typ), byte(flags)
	binary.BigEndian.PutUint32(h[5:], id)
	t.bw.Write(h[:])
}

// lockWrite takes wmu, counting this writer as queued while it waits, and
// moves the write deadline on (a large frame is written through the buffer,
// so the deadline covers every write, not only flushes).
func (t *transport) lockWrite() {
	t.waiting.Add(1)
	t.wmu.Lock()
	t.waiting.Add(-1)
	if t.wtimeout > 0 {
		if now := time.Now(); now.After(t.wrenew) {
			_ = t.conn.SetWriteDeadline(now.Add(t.wtimeout))
			t.wrenew = now.Add(t.wtimeout / 8)
		}
	}
}

// unlockWrite releases wmu once what was written is sure to be flushed: by a
// writer queued for wmu or one about to flush, with its own frames; else by
// this one, after yielding the processor once, as gRPC-go's loopy writer does
// with a small batch, so that calls already runnable (woken by the same read of
// responses) add their frames to the same write syscall. A write error is kept
// and fails the connection with the calls in flight.
func (t *transport) unlockWrite() error {
	if t.werr != nil || t.waiting.Load() > 0 || t.flushing.Load() {
		err := t.werr
		t.wmu.Unlock()
		return err
	}
	t.flushing.Store(true)
	t.wmu.Unlock()
	runtime.Gosched()
	t.lockWrite()
	t.flushing.Store(false)
	if t.werr == nil {
		if t.cqueued.Load() {
			t.drainControl()
		}
		if t.werr = t.bw.Flush(); t.werr != nil {
			t.fail(connError(t.addr, t.werr))
		}
	}
	err := t.werr
	t.wmu.Unlock()
	return err
}

// appender is an io.Writer that appends to a byte slice: the control
// queue, which cfr writes frames into.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// queued ends the queueing of a connection-level frame (an ack, a window
// update, a reset, a ping), which the caller wrote into cbuf with cmu held:
// it releases cmu and wakes the control writer unless a flush is coming;
// resp counts the frame among the answers to the server's frames. A frame
// the Framer refused (err: a window increment out of range, which lean
// never sends) queues nothing.
func (t *transport) queued(err error, resp bool) {
	if err != nil {
		t.cmu.Unlock()
		return
	}
	t.cqueued.Store(true)
	if resp {
		t.cresp.Add(1)
	}
	t.cmu.Unlock()
	// A writer queued for wmu, or one that has yielded to flush, drains the
	// queue after this (it reads cqueued once it holds wmu): waking the
	// control writer would cost a write syscall of its own.
	if t.waiting.Load() > 0 || t.flushing.Load() {
		return
	}
	select {
	case t.ckick <- struct{}{}:
	default:
	}
}

func (t *transport) queueWindowUpdate(id, inc uint32) {
	t.cmu.Lock()
	t.queued(t.cfr.WriteWindowUpdate(id, inc), false)
}

func (t *transport) queueRST(id uint32, code http2.ErrCode, resp bool) {
	t.cmu.Lock()
	t.queued(t.cfr.WriteRSTStream(id, code), resp)
}

// queuePing queues a PING, or with ack the answer to the server's.
func (t *transport) queuePing(ack bool, data [8]byte) {
	t.cmu.Lock()
	t.queued(t.cfr.WritePing(ack, data), ack)
}

func (t *transport) queueSettingsAck() {
	t.cmu.Lock()
	t.queued(t.cfr.WriteSettingsAck(), true)
}

// drainControl moves the queued control frames into the write buffer; wmu
// is held. The queue's lock is not held across the write, which may block on
// the socket: the reader goes on queueing its answers meanwhile, into a
// second buffer.
func (t *transport) drainControl() {
	t.cmu.Lock()
	if t.ctableOK {
		t.henc.SetMaxDynamicTableSizeLimit(t.ctable)
		clear(t.hblocks) // they hold indices the new size may have evicted
		t.ctableOK = false
	}
	buf := t.cbuf
	t.cbuf, t.cspare = t.cspare[:0], nil
	t.cqueued.Store(false)
	t.cresp.Store(0)
	t.ccond.Broadcast()
	t.cmu.Unlock()
	t.bw.Write(buf)
	t.cmu.Lock()
	t.cspare = buf[:0]
	t.cmu.Unlock()
}

// writeControl writes the queued control frames when no call's writer
// does, until the connection ends.
func (t *transport) writeControl() {
	for {
		select {
		case <-t.ckick:
		case <-t.done:
			return
		}
		if !t.cqueued.Load() {
			continue // a writer took them
		}
		t.lockWrite()
		if t.werr == nil {
			t.drainControl()
		}
		_ = t.unlockWrite()
	}
}

// throttle holds the reader while too many of its answers wait to be
// written (a server that sends PINGs and does not read), as gRPC-go's reader
// does.
func (t *transport) throttle() {
	if t.cresp.Load() < maxQueuedResponses {
		return
	}
	t.cmu.Lock()
	for t.cresp.Load() >= maxQueuedResponses && !t.cdead {
		t.ccond.Wait()
	}
	t.cmu.Unlock()
}

// reserve waits for a stream slot under the server's MAX_CONCURRENT_STREAMS.
func (t *transport) reserve(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active >= t.maxConc && t.err == nil {
		stop := context.AfterFunc(ctx, t.wake)
		defer stop()
		for t.active >= t.maxConc && t.err == nil && ctx.Err() == nil {
			t.cond.Wait()
		}
	}
	if t.err != nil {
		return notSent{t.err}
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	t.active++
	return nil
}

// wake wakes every goroutine waiting on cond (a context ended).
func (t *transport) wake() {
	t.mu.Lock()
	t.cond.Broadcast()
	t.mu.Unlock()
}

// send opens a stream for c and writes its request: HEADERS, then msg (a
// framed gRPC message) as DATA ending the stream. A message that fits the send
// windows goes out under one lock with its headers; a larger one waits for
// window updates between frames.
func (t *transport) send(ctx context.Context, c *call, path, timeout string, msg []byte) error {
	if err := t.reserve(ctx); err != nil {
		return err
	}
	t.lockWrite()
	if t.werr != nil {
		err := t.werr
		t.wmu.Unlock()
		t.release()
		return notSent{connError(t.addr, err)}
	}
	if t.nextID > maxStreamID {
		_ = t.unlockWrite() // with the control frames the queue holds for it
		t.release()
		t.leave(false)
		return notSent{status.Errorf(codes.Unavailable, "the connection to %s has used its stream ids", t.addr)}
	}
	id := t.nextID
	t.nextID += 2
	c.id = id
	t.mu.Lock()
	if t.err != nil {
		err := t.err
		t.mu.Unlock()
		_ = t.unlockWrite()
		t.release()
		return notSent{err}
	}
	c.sendWin = t.initSend
	t.streams[id] = c
	n := t.takeWindow(c, len(msg))
	t.mu.Unlock()

	t.hbuf.Reset()
	tok := t.opts.authToken(path)
	if tok != t.htoken {
		clear(t.hblocks) // kept with the old token
		t.htoken = tok
	}
	if b, ok := t.hblocks[path]; ok {
		t.hbuf.Write(b)
	} else {
		t.field(":method", "POST")
		t.field(":scheme", t.scheme)
		t.field(":path", path)
		t.field(":authority", t.authority)
		t.field("content-type", "application/grpc")
		t.field("te", "trailers")
		fields := 6
		if tok != "" {
			// Indexed as gRPC-go's encoder indexes it: the same token costs
			// one byte on the next calls.
			t.field(rpctypes.TokenFieldNameGRPC, tok)
			fields++
		}
		t.keepBlock(path, fields)
	}
	if timeout != "" {
		// Never indexed: a new value per call would churn the server's table.
		_ = t.henc.WriteField(hpack.HeaderField{Name: "grpc-timeout", Value: timeout, Sensitive: true})
	}
	t.writeFrameHeader(t.hbuf.Len(), http2.FrameHeaders, http2.FlagHeadersEndHeaders, id)
	t.bw.Write(t.hbuf.Bytes())
	for {
		var flags http2.Flags
		if n == len(msg) {
			flags = http2.FlagDataEndStream
		}
		if n > 0 || flags != 0 {
			t.writeFrameHeader(n, http2.FrameData, flags, id)
			t.bw.Write(msg[:n])
			msg = msg[n:]
		}
		if err := t.unlockWrite(); err != nil {
			return connError(t.addr, err)
		}
		if flags != 0 {
			if id+2 > maxStreamID {
				t.leave(false) // the last id: a new connection takes the next call
			}
			return nil
		}
		var err error
		if n, err = t.awaitWindow(ctx, c, len(msg)); err != nil || n < 0 {
			return err // n < 0: the server ended the stream; its status is the call's
		}
		t.lockWrite()
	}
}

func (t *transport) field(name, value string) {
	_ = t.henc.WriteField(hpack.HeaderField{Name: name, Value: value})
}

// keepBlock keeps the request headers of path just encoded in hbuf when each
// of the fields (six, seven with a token) came out as a one-byte index, which changes no HPACK
// table: the same bytes encode them again, without the encoder's table search
// (5% of a put's CPU). A block that added to the dynamic table moved the
// indices of the blocks kept before it, so it drops them.
func (t *transport) keepBlock(path string, fields int) {
	b := t.hbuf.Bytes()
	indexed := len(b) == fields
	for _, c := range b {
		indexed = indexed && c&0x80 != 0 && c != 0xff // 0xff: a longer index follows
	}
	if !indexed {
		clear(t.hblocks)
		return
	}
	if t.hblocks == nil {
		t.hblocks = map[string][]byte{}
	}
	t.hblocks[path] = bytes.Clone(b)
}

// takeWindow is how much of a message of size want may be sent now, taken
// from the connection's and c's send windows; mu is held.
func (t *transport) takeWindow(c *call, want int) int {
	n := min(int64(want), t.sendConn, c.sendWin, int64(t.maxFrame))
	if n < 0 {
		n = 0
	}
	t.sendConn -= n
	c.sendWin -= n
	return int(n)
}

// awaitWindow waits until some of the want bytes left of c's request may be
// sent; -1 when the server has ended c's stream meanwhile.
func (t *transport) awaitWindow(ctx context.Context, c *call, want int) (int, error) {
	stop := context.AfterFunc(ctx, t.wake)
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		switch {
		case c.finished:
			return -1, nil
		case t.err != nil:
			return 0, t.err
		case ctx.Err() != nil:
			return 0, status.FromContextError(ctx.Err()).Err()
		}
		if n := t.takeWindow(c, want); n > 0 {
			return n, nil
		}
		t.cond.Wait()
	}
}

// release frees a stream slot reserved by a call that never opened its stream.
func (t *transport) release() {
	t.mu.Lock()
	t.active--
	t.cond.Broadcast()
	idle := t.retired && t.active == 0
	t.mu.Unlock()
	if idle {
		t.conn.Close()
	}
}

// cancel forgets c after its context ended, and resets its stream; false when
// the reader has finished c meanwhile (its result is then the call's).
func (t *transport) cancel(c *call) bool {
	t.mu.Lock()
	_, open := t.streams[c.id]
	if open {
		delete(t.streams, c.id)
		t.active--
		t.cond.Broadcast()
	}
	idle := t.retired && t.active == 0
	t.mu.Unlock()
	if open {
		t.queueRST(c.id, http2.ErrCodeCancel, false)
	}
	if idle {
		t.conn.Close()
	}
	return open
}

// fail ends the connection: every call in flight fails with err, and so does
// every later call on it.
func (t *transport) fail(err error) {
	t.ok.Store(false)
	t.cmu.Lock()
	t.cdead = true
	t.ccond.Broadcast()
	t.cmu.Unlock()
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	calls := t.streams
	t.streams = map[uint32]*call{}
	t.active -= uint32(len(calls))
	for _, c := range calls {
		c.finished = true
	}
	t.cond.Broadcast()
	t.mu.Unlock()
	for _, c := range calls {
		c.err = err
		c.finish()
	}
	t.conn.Close()
	t.tell(false)
}

// tell tells the owner, the first time, that the connection takes no new calls.
func (t *transport) tell(tooManyPings bool) {
	if t.told.CompareAndSwap(false, true) {
		t.gone(tooManyPings)
	}
}

// retire closes a connection that a new one replaced (after a GOAWAY, or out
// of stream ids) once its last call has finished.
func (t *transport) retire() {
	t.ok.Store(false)
	t.mu.Lock()
	t.retired = true
	idle := t.active == 0
	t.mu.Unlock()
	if idle {
		t.conn.Close()
	}
}

// close ends the connection from this side (Conn.Close).
func (t *transport) close() {
	t.fail(status.Error(codes.Canceled, "leanrpc: the connection is closing"))
	<-t.done
}

// leave stops new calls on the connection, closes it once its calls have
// finished, and tells the owner (once) so that another is dialled.
func (t *transport) leave(tooManyPings bool) {
	t.ok.Store(false)
	t.mu.Lock()
	t.retired = true
	idle := t.active == 0
	t.mu.Unlock()
	if idle {
		t.conn.Close()
	}
	t.tell(tooManyPings)
}

// keepalive pings the server when nothing arrived for kaTime and closes the
// connection when nothing arrives within KeepaliveTimeout of the ping: gRPC-go's
// client keepalive (internal/transport/http2_client.go), timed from the last
// read. With no call in flight it pings only if PermitWithoutStream.
func (t *transport) keepalive() {
	timer := time.NewTimer(t.kaTime)
	defer timer.Stop()
	var prev int64 // lastRead when the timer last fired
	pinging := false
	var left time.Duration // of the ping's timeout
	for {
		select {
		case <-t.done:
			return
		case <-timer.C:
		}
		if last := t.lastRead.Load(); last > prev {
			prev, pinging = last, false
			timer.Reset(time.Duration(last) + t.kaTime - time.Since(t.born))
			continue
		}
		if pinging && left <= 0 {
			t.fail(connError(t.addr, fmt.Errorf("keepalive ping not answered within %s", t.opts.KeepaliveTimeout)))
			return
		}
		if !pinging {
			t.mu.Lock()
			idle := t.active == 0
			t.mu.Unlock()
			if idle && !t.opts.PermitWithoutStream {
				timer.Reset(t.kaTime)
				continue
			}
			t.queuePing(false, [8]byte{})
			pinging, left = true, t.opts.KeepaliveTimeout
		}
		d := min(t.kaTime, left)
		left -= d
		timer.Reset(d)
	}
}
