package leanrpc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// call is one unary call in flight. Between its registration and its done
// signal only the reader writes it (the sender touches sendWin and finished
// under the transport's mu); the caller reads it after done.
type call struct {
	id      uint32
	done    chan struct{} // one signal per call, capacity 1
	sendWin int64         // under mu
	// finished: the stream has ended (under mu), so a large request stops.
	finished bool

	buf         []byte // the response body (gRPC-framed messages)
	recvPending uint32 // body bytes not yet returned to the stream's window
	headers     bool   // the response headers have arrived (the next block is trailers)
	httpStatus  int
	hasStatus   bool
	code        codes.Code
	msg         string
	err         error // a transport or size error, in place of the status
	// unprocessed: the server never processed the stream (it is above a
	// GOAWAY's last stream id, or refused), so the call may be made again.
	unprocessed bool
}

// finish signals the caller; the call is no longer in the streams map.
func (c *call) finish() { c.done <- struct{}{} }

// read is the reader goroutine: it dispatches every frame until the
// connection fails, then fails the calls still in flight.
func (t *transport) read() {
	defer close(t.done)
	for {
		t.throttle()
		f, err := t.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				t.resetStream(se.StreamID, http2.ErrCodeProtocol, status.Errorf(codes.Internal, "bad frame from %s: %v", t.addr, se))
				continue
			}
			var ce http2.ConnectionError // a frame the framer found invalid
			if errors.As(err, &ce) {
				t.goAway(http2.ErrCode(ce))
			}
			t.fail(connError(t.addr, err))
			return
		}
		if err := t.dispatch(f); err != nil {
			code := http2.ErrCodeProtocol
			var ce http2.ConnectionError
			if errors.As(err, &ce) {
				code = http2.ErrCode(ce)
			}
			t.goAway(code)
			t.fail(connError(t.addr, err))
			return
		}
	}
}

// dispatch handles one frame; an error is a connection error.
func (t *transport) dispatch(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		t.onData(f)
	case *http2.HeadersFrame:
		t.pings.replied.Store(true) // the server wrote since it handled our last PING (see ping.go)
		t.hcall, t.hend = t.lookup(f.StreamID), f.StreamEnded()
		return t.onBlock(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		return t.onBlock(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.RSTStreamFrame:
		if c := t.remove(f.StreamID); c != nil {
			c.err = status.Errorf(rstCode(f.ErrCode), "the server reset the stream: %s", f.ErrCode)
			c.unprocessed = f.ErrCode == http2.ErrCodeRefusedStream
			c.finish()
		}
	case *http2.SettingsFrame:
		if !f.IsAck() {
			return t.applySettings(f)
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			t.queuePing(true, f.Data)
		} else {
			t.pings.acked(f.Data, time.Since(t.born))
		}
	case *http2.GoAwayFrame:
		t.onGoAway(f)
	case *http2.WindowUpdateFrame:
		t.mu.Lock()
		if f.StreamID == 0 {
			t.sendConn += int64(f.Increment)
		} else if c := t.streams[f.StreamID]; c != nil {
			c.sendWin += int64(f.Increment)
		}
		t.cond.Broadcast()
		t.mu.Unlock()
	}
	return nil
}

// lookup is the call of stream id, nil when it has none (any longer).
func (t *transport) lookup(id uint32) *call {
	t.mu.Lock()
	c := t.streams[id]
	t.mu.Unlock()
	return c
}

// remove takes the call of stream id out of the map, marking it finished.
func (t *transport) remove(id uint32) *call {
	t.mu.Lock()
	c := t.streams[id]
	if c != nil {
		delete(t.streams, id)
		t.active--
		c.finished = true
		t.cond.Broadcast()
	}
	idle := t.retired && t.active == 0
	t.mu.Unlock()
	if idle {
		t.conn.Close() // the reader ends with nothing in flight
	}
	return c
}

// resetStream fails the call of stream id with err and resets the stream.
func (t *transport) resetStream(id uint32, code http2.ErrCode, err error) {
	if c := t.remove(id); c != nil {
		c.err = err
		c.finish()
	}
	t.queueRST(id, code, true)
}

// goAway tells the server, if the write buffer is free, that this client
// closes the connection on an error of the server's; a writer blocked on the
// connection leaves it unsaid.
func (t *transport) goAway(code http2.ErrCode) {
	if !t.wmu.TryLock() {
		return
	}
	if t.werr == nil {
		_ = t.wfr.WriteGoAway(0, code, nil)
		_ = t.conn.SetWriteDeadline(time.Now().Add(time.Second))
		t.werr = t.bw.Flush()
	}
	t.wmu.Unlock()
}

// onData appends a DATA frame to its call's body and returns the window it
// used once a quarter of a window is due. Frames of streams already gone
// still count against the connection's window.
func (t *transport) onData(f *http2.DataFrame) {
	n := f.Header().Length
	t.recvPending += n
	if t.recvPending >= connWindow/4 {
		inc := t.recvPending
		t.recvPending = 0
		t.queueWindowUpdate(0, inc)
	}
	c := t.lookup(f.StreamID)
	if c == nil {
		return
	}
	data := f.Data()
	if len(c.buf)+len(data) > t.opts.MaxRecvMsgSize+5 {
		t.resetStream(f.StreamID, http2.ErrCodeCancel, status.Errorf(codes.ResourceExhausted,
			"received message larger than max (%d bytes so far vs. %d)", len(c.buf)+len(data)-5, t.opts.MaxRecvMsgSize))
		return
	}
	c.buf = append(c.buf, data...)
	if f.StreamEnded() {
		if c := t.remove(f.StreamID); c != nil {
			c.finish() // no trailers: result reports the missing status
		}
		return
	}
	c.recvPending += n
	if c.recvPending >= streamWindow/4 {
		inc := c.recvPending
		c.recvPending = 0
		t.queueWindowUpdate(f.StreamID, inc)
	}
}

// onBlock decodes a header block fragment into t.hcall (HPACK state is the
// connection's, so blocks of streams already gone are decoded too).
func (t *transport) onBlock(frag []byte, ended bool) error {
	if _, err := t.hdec.Write(frag); err != nil {
		return fmt.Errorf("HPACK: %w", err)
	}
	if !ended {
		return nil
	}
	if err := t.hdec.Close(); err != nil {
		return fmt.Errorf("HPACK: %w", err)
	}
	c := t.hcall
	t.hcall = nil
	if c == nil {
		return nil
	}
	c.headers = true
	if t.hend {
		if c := t.remove(c.id); c != nil {
			c.finish()
		}
	}
	return nil
}

// onField records the fields of a response that its result reads.
func (t *transport) onField(f hpack.HeaderField) {
	c := t.hcall
	if c == nil {
		return
	}
	switch f.Name {
	case ":status":
		if f.Value == "200" {
			c.httpStatus = 200
		} else if n, err := strconv.Atoi(f.Value); err == nil {
			c.httpStatus = n
		}
	case "content-type":
		if !strings.HasPrefix(f.Value, "application/grpc") && c.httpStatus == 200 {
			c.httpStatus = 415 // gRPC-go reads a foreign content type as an HTTP error too
		}
	case "grpc-status":
		c.code, c.hasStatus = parseStatus(f.Value), true
	case "grpc-message":
		c.msg = decodeMessage(f.Value)
	}
}

// applySettings takes the server's settings and acknowledges them; an
// invalid value is a connection error (RFC 9113 §6.5.2, and §6.9.2 for an
// initial window that would take a stream's window past 2^31-1).
func (t *transport) applySettings(f *http2.SettingsFrame) error {
	if err := f.ForeachSetting(http2.Setting.Valid); err != nil {
		return fmt.Errorf("the server's HTTP/2 SETTINGS: %w", err)
	}
	var table, hasTable = uint32(0), false
	t.mu.Lock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - t.initSend
			for _, c := range t.streams {
				if c.sendWin+delta > math.MaxInt32 {
					return fmt.Errorf("the server's SETTINGS_INITIAL_WINDOW_SIZE %d takes stream %d's window past 2^31-1: %w", s.Val, c.id, http2.ConnectionError(http2.ErrCodeFlowControl))
				}
			}
			t.initSend = int64(s.Val)
			for _, c := range t.streams {
				c.sendWin += delta
			}
		case http2.SettingMaxFrameSize:
			t.maxFrame = int(s.Val)
		case http2.SettingMaxConcurrentStreams:
			t.maxConc = s.Val
		case http2.SettingHeaderTableSize:
			table, hasTable = s.Val, true
		}
		return nil
	})
	t.cond.Broadcast()
	t.mu.Unlock()
	if err != nil {
		return err
	}
	if !t.ok.Load() { // the handshake: the connection is not shared yet
		if hasTable {
			t.henc.SetMaxDynamicTableSizeLimit(table)
		}
		return t.wfr.WriteSettingsAck()
	}
	if hasTable {
		t.cmu.Lock()
		t.ctable, t.ctableOK = table, true
		t.cmu.Unlock()
	}
	t.queueSettingsAck()
	return nil
}

// onGoAway stops new calls on the connection and fails those the server will
// not process (ids above its last) as unprocessed, for another connection to
// take; the others finish, and the connection closes after them. A server
// that finds this client pinging too often says too_many_pings
// (ENHANCE_YOUR_CALM), and the owner pings its next connections half as often.
func (t *transport) onGoAway(f *http2.GoAwayFrame) {
	t.ok.Store(false)
	err := status.Errorf(codes.Unavailable, "the server at %s is going away (GOAWAY %s %q)", t.addr, f.ErrCode, f.DebugData())
	tooManyPings := f.ErrCode == http2.ErrCodeEnhanceYourCalm && string(f.DebugData()) == "too_many_pings"
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	var gone []*call
	for id, c := range t.streams {
		if id > f.LastStreamID {
			delete(t.streams, id)
			t.active--
			c.finished = true
			gone = append(gone, c)
		}
	}
	t.cond.Broadcast()
	t.mu.Unlock()
	for _, c := range gone {
		c.err, c.unprocessed = err, true
		c.finish()
	}
	t.leave(tooManyPings)
}
