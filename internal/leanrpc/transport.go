package leanrpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

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

// transport is one HTTP/2 connection carrying unary gRPC calls: writers share
// a buffered writer under wmu (the last one queued flushes, so concurrent
// calls share a write syscall), and one reader goroutine dispatches the
// frames to the waiting calls by stream id.
type transport struct {
	conn      net.Conn
	addr      string
	scheme    string // http or https, the :scheme of every request
	authority string
	opts      *Options

	// ok is false once the connection is lost, going away or out of stream
	// ids: new calls dial another.
	ok atomic.Bool
	// waiting counts the writers queued for wmu: one that finds none flushes.
	waiting atomic.Int32

	wmu    sync.Mutex
	bw     *bufio.Writer
	henc   *hpack.Encoder
	hbuf   bytes.Buffer
	hdr    [9]byte // a frame header being written
	nextID uint32
	werr   error // the first write error: every later write fails with it

	mu       sync.Mutex
	cond     sync.Cond // on mu: a send window opened, a stream slot freed, or the connection ended
	streams  map[uint32]*call
	active   uint32 // streams open or reserved
	sendConn int64  // the connection's send window
	initSend int64  // the server's initial stream window
	maxFrame int    // the largest DATA payload the server accepts
	maxConc  uint32 // the server's MAX_CONCURRENT_STREAMS
	err      error  // why the connection ended, once it has
	retired  bool   // replaced by a new connection: close once idle

	// Reader state, touched by the reader goroutine only.
	fr          *http2.Framer
	hdec        *hpack.Decoder
	hcall       *call // the call whose header block is being decoded
	hend        bool  // that header block ends its stream
	recvPending uint32
	activity    atomic.Bool // a frame arrived since the keepalive last looked
	done        chan struct{}
}

// dialTransport connects to addr and exchanges the HTTP/2 preface and
// settings; it returns once the server's SETTINGS have arrived, with the
// reader running.
func dialTransport(ctx context.Context, addr string, tlsCfg *tls.Config, opts *Options) (*transport, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
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
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "h2" {
			conn.Close()
			return nil, fmt.Errorf("the server negotiated %q, not HTTP/2 (ALPN h2)", p)
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
	}
	t.cond.L = &t.mu
	t.henc = hpack.NewEncoder(&t.hbuf)
	t.fr = http2.NewFramer(nil, bufio.NewReaderSize(conn, bufSize))
	t.fr.SetReuseFrames()
	t.fr.SetMaxReadFrameSize(16384) // HTTP/2's default; none other is advertised
	t.hdec = hpack.NewDecoder(4096, t.onField)
	t.hdec.SetMaxStringLength(1 << 20)
	if err := t.handshake(); err != nil {
		return nil, err
	}
	return t, nil
}

// start makes the connection usable: the reader runs, and the keepalive.
func (t *transport) start() {
	t.ok.Store(true)
	go t.read()
	if t.opts.KeepaliveTime > 0 {
		go t.keepalive()
	}
}

// handshake writes the client preface, this client's settings and window,
// and reads the server's SETTINGS, which must come first (RFC 9113 §3.4).
func (t *transport) handshake() error {
	t.bw.WriteString(http2.ClientPreface)
	t.writeFrameHeader(3*6, http2.FrameSettings, 0, 0)
	for _, s := range []http2.Setting{
		{ID: http2.SettingEnablePush, Val: 0},
		{ID: http2.SettingInitialWindowSize, Val: streamWindow},
		{ID: http2.SettingMaxHeaderListSize, Val: 1 << 20},
	} {
		var b [6]byte
		binary.BigEndian.PutUint16(b[:2], uint16(s.ID))
		binary.BigEndian.PutUint32(b[2:], s.Val)
		t.bw.Write(b[:])
	}
	t.writeWindowUpdate(0, connWindow-65535)
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
	t.applySettings(sf)
	return t.bw.Flush()
}

// writeFrameHeader appends a frame header to the write buffer; wmu is held
// (or the connection is not shared yet).
func (t *transport) writeFrameHeader(length int, typ http2.FrameType, flags http2.Flags, id uint32) {
	h := &t.hdr
	h[0], h[1], h[2] = byte(length>>16), byte(length>>8), byte(length)
	h[3], h[4] = byte(typ), byte(flags)
	binary.BigEndian.PutUint32(h[5:], id)
	t.bw.Write(h[:])
}

func (t *transport) writeWindowUpdate(id, inc uint32) {
	t.writeFrameHeader(4, http2.FrameWindowUpdate, 0, id)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], inc)
	t.bw.Write(b[:])
}

func (t *transport) writeRST(id uint32, code http2.ErrCode) {
	t.writeFrameHeader(4, http2.FrameRSTStream, 0, id)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(code))
	t.bw.Write(b[:])
}

// lockWrite takes wmu, counting this writer as queued while it waits.
func (t *transport) lockWrite() {
	t.waiting.Add(1)
	t.wmu.Lock()
	t.waiting.Add(-1)
}

// unlockWrite flushes unless another writer is queued (it will flush what
// this one wrote with its own), and releases wmu. A write error is kept and
// closes the connection, so the reader fails the calls in flight.
func (t *transport) unlockWrite() error {
	if t.werr == nil && t.waiting.Load() == 0 {
		t.werr = t.bw.Flush()
		if t.werr != nil {
			t.conn.Close()
		}
	}
	err := t.werr
	t.wmu.Unlock()
	return err
}

// control writes one connection-level frame (an ack, a window update, a
// reset) from the reader or the keepalive.
func (t *transport) control(write func()) {
	t.lockWrite()
	if t.werr == nil {
		write()
	}
	_ = t.unlockWrite()
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
		return t.err
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
		return connError(t.addr, err)
	}
	id := t.nextID
	t.nextID += 2
	if t.nextID > math.MaxInt32-2 {
		t.ok.Store(false) // stream ids run out: the next call dials anew
	}
	c.id = id
	t.mu.Lock()
	if t.err != nil {
		err := t.err
		t.mu.Unlock()
		t.wmu.Unlock()
		t.release()
		return err
	}
	c.sendWin = t.initSend
	t.streams[id] = c
	n := t.takeWindow(c, len(msg))
	t.mu.Unlock()

	t.hbuf.Reset()
	t.field(":method", "POST")
	t.field(":scheme", t.scheme)
	t.field(":path", path)
	t.field(":authority", t.authority)
	t.field("content-type", "application/grpc")
	t.field("te", "trailers")
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
		t.control(func() { t.writeRST(c.id, http2.ErrCodeCancel) })
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

// keepalive pings the server when nothing arrived for KeepaliveTime and
// closes the connection when the ping is not answered within
// KeepaliveTimeout, as gRPC's client keepalive does.
func (t *transport) keepalive() {
	tick := time.NewTicker(t.opts.KeepaliveTime)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
		if t.activity.Swap(false) {
			continue
		}
		t.mu.Lock()
		idle := t.active == 0
		t.mu.Unlock()
		if idle && !t.opts.PermitWithoutStream {
			continue
		}
		t.control(func() {
			t.writeFrameHeader(8, http2.FramePing, 0, 0)
			t.bw.Write(make([]byte, 8))
		})
		select {
		case <-t.done:
			return
		case <-time.After(t.opts.KeepaliveTimeout):
		}
		if !t.activity.Load() {
			t.fail(connError(t.addr, errors.New("keepalive ping not answered")))
			return
		}
	}
}
