package leanrpc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// peer is the server side of one HTTP/2 connection, scripted by a test: it
// plays the protocol edge cases (a connection closed mid-call, GOAWAY, resets,
// tiny windows) that a real gRPC server cannot be made to produce on demand.
type peer struct {
	t    testing.TB
	conn net.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	dec  *hpack.Decoder
	hdrs map[string]string
	acks [][8]byte // PING acks read so far
}

// listenPeers accepts connections on 127.0.0.1 and hands each, after the
// handshake with settings, to the channel; the listener closes with the test.
func listenPeers(t testing.TB, settings ...http2.Setting) (addr string, peers <-chan *peer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan *peer, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p := newPeer(t, c)
			if err := p.handshake(settings...); err != nil {
				c.Close()
				continue
			}
			ch <- p
		}
	}()
	return ln.Addr().String(), ch
}

func newPeer(t testing.TB, c net.Conn) *peer {
	p := &peer{t: t, conn: c, fr: http2.NewFramer(c, c), hdrs: map[string]string{}}
	p.enc = hpack.NewEncoder(&p.hbuf)
	p.dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) { p.hdrs[f.Name] = f.Value })
	t.Cleanup(func() { c.Close() })
	// A test that waits for a frame that never comes fails, not hangs.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return p
}

// handshake reads the client preface and writes the server's settings.
func (p *peer) handshake(settings ...http2.Setting) error {
	pre := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(p.conn, pre); err != nil {
		return err
	}
	return p.fr.WriteSettings(settings...)
}

// request reads frames until a request ends its stream (acking settings,
// skipping the rest) and returns its stream id, headers and body.
func (p *peer) request() (id uint32, hdrs map[string]string, body []byte, err error) {
	p.hdrs = map[string]string{}
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			return 0, nil, nil, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = p.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if f.IsAck() {
				p.acks = append(p.acks, f.Data)
			}
		case *http2.HeadersFrame:
			if _, err := p.dec.Write(f.HeaderBlockFragment()); err != nil {
				return 0, nil, nil, err
			}
			if f.HeadersEnded() {
				_ = p.dec.Close() // the next block may start with a table size update
			}
		case *http2.DataFrame:
			body = append(body, f.Data()...)
			if f.StreamEnded() {
				return f.StreamID, p.hdrs, body, nil
			}
		}
	}
}

// next reads frames until one of type typ (acking settings) and returns it.
func (p *peer) next(typ http2.FrameType) (http2.Frame, error) {
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			return nil, err
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			_ = p.fr.WriteSettingsAck()
		}
		if pf, ok := f.(*http2.PingFrame); ok && pf.IsAck() {
			p.acks = append(p.acks, pf.Data)
		}
		if f.Header().Type == typ {
			return f, nil
		}
	}
}

// headers writes a header block on stream id.
func (p *peer) headers(id uint32, end bool, fields ...string) {
	p.hbuf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		_ = p.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	// A write error is the client's closing, which the test checks on its side.
	_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.hbuf.Bytes(), EndHeaders: true, EndStream: end})
}

// reply answers stream id with message msg (already marshalled) and an OK
// status, as a gRPC server does.
func (p *peer) reply(id uint32, msg []byte) {
	p.headers(id, false, ":status", "200", "content-type", "application/grpc")
	body := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(body[1:5], uint32(len(msg)))
	copy(body[5:], msg)
	for len(body) > 0 {
		n := min(len(body), 16384)
		if err := p.fr.WriteData(id, false, body[:n]); err != nil {
			return
		}
		body = body[n:]
	}
	p.headers(id, true, "grpc-status", "0")
}

// pingAck is the first PING ack from the client, read now if not yet seen.
func (p *peer) pingAck() ([8]byte, error) {
	if len(p.acks) == 0 {
		if _, err := p.next(http2.FramePing); err != nil {
			return [8]byte{}, err
		}
	}
	return p.acks[0], nil
}
