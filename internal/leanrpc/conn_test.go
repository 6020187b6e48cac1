package leanrpc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/nullkv"
)

// opts are a test connection's options: clientv3's size limits.
func opts() Options {
	return Options{DialTimeout: 5 * time.Second, MaxSendMsgSize: 2 << 20, MaxRecvMsgSize: 1 << 30}
}

func dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), []string{addr}, opts())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestNullKV makes concurrent puts and ranges against the null KV server
// (run it with -race): every response is its own call's.
func TestNullKV(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dial(t, strings.TrimPrefix(s.URL(), "http://"))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 20 {
		wg.Go(func() {
			put := &pb.PutRequest{Key: []byte("/k"), Value: []byte("v")}
			for range 100 {
				var resp pb.PutResponse
				if err := c.Invoke(ctx, "/etcdserverpb.KV/Put", put, &resp); err != nil || resp.Header == nil || resp.Header.Revision < 2 {
					t.Errorf("worker %d: put: %v, %+v", w, err, &resp)
					return
				}
				var rr pb.RangeResponse
				if err := c.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/k")}, &rr); err != nil || rr.Header == nil || rr.Count != 0 {
					t.Errorf("worker %d: range: %v, %+v", w, err, &rr)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := c.Invoke(ctx, "/etcdserverpb.KV/Nope", &pb.PutRequest{}, &pb.PutResponse{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v, want Unimplemented", err)
	}
	if _, err := c.NewStream(ctx, nil, "/etcdserverpb.Watch/Watch"); status.Code(err) != codes.Unimplemented {
		t.Errorf("NewStream: %v, want Unimplemented", err)
	}
}

// TestRedial: a server that goes away fails the calls, and once it is back
// the next call dials it again.
func TestRedial(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(s.URL(), "http://")
	c := dial(t, addr)
	ctx := context.Background()
	put := func(ctx context.Context) error {
		return c.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("k")}, &pb.PutResponse{})
	}
	if err := put(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// The connection's loss reaches the reader at some point after Close;
	// until it has, a call may still find it open and fail on it.
	for c.Ready() {
		time.Sleep(time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if err := put(short); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("put with no server: %v, want DeadlineExceeded (waiting for a connection)", err)
	}
	cancel()
	if s, err = nullkv.Listen(addr); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The failed attempt above waits out a backoff of about a second.
	long, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := put(long); err != nil {
		t.Errorf("put after the server came back: %v", err)
	}
}

// TestLostMidCall: a connection closed under a call in flight fails it
// with Unavailable; the next call dials a new connection.
func TestLostMidCall(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	p := <-peers
	done := make(chan error, 1)
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("k")}, &pb.PutResponse{})
	}()
	if _, _, _, err := p.request(); err != nil {
		t.Fatal(err)
	}
	p.conn.Close()
	if err := <-done; status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "lost") {
		t.Errorf("call on a closed connection: %v, want Unavailable (connection lost)", err)
	}
	go func() {
		p := <-peers
		id, _, _, err := p.request()
		if err == nil {
			p.reply(id, mustMarshal(t, &pb.PutResponse{Header: &pb.ResponseHeader{Revision: 7}}))
		}
	}()
	var resp pb.PutResponse
	if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &resp); err != nil || resp.Header.GetRevision() != 7 {
		t.Errorf("call after the loss: %v, %+v; want the new connection's answer", err, &resp)
	}
}

func mustMarshal(t testing.TB, m interface{ Marshal() ([]byte, error) }) []byte {
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPeerProtocol plays the server's side of the cases a real server
// produces rarely: each answer must map to the call's error (or result).
func TestPeerProtocol(t *testing.T) {
	okMsg := mustMarshal(t, &pb.PutResponse{Header: &pb.ResponseHeader{Revision: 3}})
	for _, tc := range []struct {
		name   string
		answer func(p *peer, id uint32)
		code   codes.Code
		msg    string
	}{
		{"ok", func(p *peer, id uint32) { p.reply(id, okMsg) }, codes.OK, ""},
		{"trailers only", func(p *peer, id uint32) {
			p.headers(id, true, ":status", "200", "content-type", "application/grpc", "grpc-status", "8", "grpc-message", "etcdserver: too many requests %E2%9C%93")
		}, codes.ResourceExhausted, "etcdserver: too many requests ✓"},
		{"status after a message", func(p *peer, id uint32) {
			p.headers(id, false, ":status", "200", "content-type", "application/grpc")
			_ = p.fr.WriteData(id, false, []byte{0, 0, 0, 0, 0})
			p.headers(id, true, "grpc-status", "11", "grpc-message", "etcdserver: mvcc: required revision is a future revision")
		}, codes.OutOfRange, "etcdserver: mvcc: required revision is a future revision"},
		{"http error", func(p *peer, id uint32) { p.headers(id, true, ":status", "503") }, codes.Unavailable, "HTTP status 503"},
		{"no status", func(p *peer, id uint32) {
			p.headers(id, false, ":status", "200", "content-type", "application/grpc")
			_ = p.fr.WriteData(id, true, []byte{0, 0, 0, 0, 0})
		}, codes.Internal, "without a grpc-status"},
		{"reset", func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeInternal) }, codes.Internal, "INTERNAL_ERROR"},
		{"two messages", func(p *peer, id uint32) {
			p.headers(id, false, ":status", "200", "content-type", "application/grpc")
			_ = p.fr.WriteData(id, false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
			p.headers(id, true, "grpc-status", "0")
		}, codes.Internal, "one message expected"},
		{"compressed", func(p *peer, id uint32) {
			p.headers(id, false, ":status", "200", "content-type", "application/grpc")
			_ = p.fr.WriteData(id, false, []byte{1, 0, 0, 0, 0})
			p.headers(id, true, "grpc-status", "0")
		}, codes.Internal, "compression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, peers := listenPeers(t)
			c := dial(t, addr)
			p := <-peers
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				// A PING first: the client must answer it and go on.
				_ = p.fr.WritePing(false, [8]byte{1, 2, 3})
				id, hdrs, _, err := p.request()
				if err != nil {
					t.Error(err)
					return
				}
				if hdrs[":path"] != "/etcdserverpb.KV/Put" || hdrs["te"] != "trailers" || hdrs["content-type"] != "application/grpc" || hdrs[":method"] != "POST" {
					t.Errorf("request headers %v", hdrs)
				}
				tc.answer(p, id)
			}()
			var resp pb.PutResponse
			err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("k")}, &resp)
			if status.Code(err) != tc.code || (tc.msg != "" && !strings.Contains(err.Error(), tc.msg)) {
				t.Errorf("got %v, want %s with %q", err, tc.code, tc.msg)
			}
			if tc.code == codes.OK && resp.Header.GetRevision() != 3 {
				t.Errorf("response %+v", &resp)
			}
			<-answered
			if data, err := p.pingAck(); err != nil || data != [8]byte{1, 2, 3} {
				t.Errorf("PING ack: %v, %v", data, err)
			}
		})
	}
}

// TestCancel: a call whose context ends fails with the context's code at
// once, and the server sees the stream reset; its deadline went out as
// grpc-timeout.
func TestCancel(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	p := <-peers
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	done := make(chan error, 1)
	go func() { done <- c.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{}) }()
	id, hdrs, _, err := p.request()
	if err != nil {
		t.Fatal(err)
	}
	if v := hdrs["grpc-timeout"]; !strings.HasSuffix(v, "m") && !strings.HasSuffix(v, "S") {
		t.Errorf("grpc-timeout %q, want about an hour in milliseconds or seconds", v)
	}
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Errorf("cancelled call: %v, want Canceled", err)
	}
	f, err := p.next(http2.FrameRSTStream)
	if err != nil || f.Header().StreamID != id || f.(*http2.RSTStreamFrame).ErrCode != http2.ErrCodeCancel {
		t.Errorf("RST_STREAM: %v, %v; want CANCEL on stream %d", f, err, id)
	}
	// A late answer to the cancelled stream is dropped; the connection goes on.
	p.reply(id, nil)
	go func() {
		if id, _, _, err := p.request(); err == nil {
			p.reply(id, nil)
		}
	}()
	if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{}); err != nil {
		t.Errorf("call after the cancel: %v", err)
	}
}

// TestHeaderBlocks: calls of a few methods in turn, with and without a
// deadline, each decode to their own headers: once their header blocks are
// reused, after a new method's block moved the table's indices, and after a
// header table size update.
func TestHeaderBlocks(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	p := <-peers
	const put, rng = "/etcdserverpb.KV/Put", "/etcdserverpb.KV/Range"
	for round := range 3 {
		if round == 2 {
			if err := p.fr.WriteSettings(http2.Setting{ID: http2.SettingHeaderTableSize, Val: 100}); err != nil {
				t.Fatal(err)
			}
			p.dec.SetAllowedMaxDynamicTableSize(100)
			if f, err := p.next(http2.FrameSettings); err != nil || !f.(*http2.SettingsFrame).IsAck() {
				t.Fatalf("no SETTINGS ack: %v, %v", f, err)
			}
		}
		// A method new to the connection each round, amid the others.
		paths := []string{put, rng, put, rng, fmt.Sprintf("/etcdserverpb.KV/New%d", round), put, rng, put}
		for i, path := range paths {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if i%3 == 1 {
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
			}
			done := make(chan error, 1)
			go func() { done <- c.Invoke(ctx, path, &pb.PutRequest{}, &pb.PutResponse{}) }()
			id, hdrs, _, err := p.request()
			if err != nil {
				t.Fatalf("round %d, call %d to %s: %v", round, i, path, err)
			}
			_, timed := hdrs["grpc-timeout"]
			if hdrs[":path"] != path || hdrs[":method"] != "POST" || hdrs[":scheme"] != "http" || hdrs[":authority"] != addr ||
				hdrs["content-type"] != "application/grpc" || hdrs["te"] != "trailers" || timed != (i%3 == 1) {
				t.Errorf("round %d, call %d to %s: headers %v", round, i, path, hdrs)
			}
			p.reply(id, nil)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	}
}

// TestSendWindow: a request larger than the server's windows goes out as
// the server opens them, in frames no larger than it allows.
func TestSendWindow(t *testing.T) {
	addr, peers := listenPeers(t, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	c := dial(t, addr)
	p := <-peers
	value := strings.Repeat("v", 100_000)
	done := make(chan error, 1)
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("k"), Value: []byte(value)}, &pb.PutResponse{})
	}()
	var body []byte
	for {
		f, err := p.next(http2.FrameData)
		if err != nil {
			t.Fatal(err)
		}
		d := f.(*http2.DataFrame)
		if len(d.Data()) > 1000 {
			t.Fatalf("a DATA frame of %d bytes in a window of 1000", len(d.Data()))
		}
		body = append(body, d.Data()...)
		if d.StreamEnded() {
			p.reply(d.StreamID, nil)
			break
		}
		_ = p.fr.WriteWindowUpdate(d.StreamID, uint32(len(d.Data())))
		_ = p.fr.WriteWindowUpdate(0, uint32(len(d.Data())))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var req pb.PutRequest
	if err := req.Unmarshal(body[5:]); err != nil || string(req.Value) != value {
		t.Errorf("the server read a value of %d bytes (%v), want %d", len(req.Value), err, len(value))
	}
}

// TestSizeLimits: a request over the send limit never leaves, a response
// over the receive limit fails with ResourceExhausted.
func TestSizeLimits(t *testing.T) {
	addr, peers := listenPeers(t)
	o := opts()
	o.MaxSendMsgSize, o.MaxRecvMsgSize = 100, 100
	c, err := Dial(context.Background(), []string{addr}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := <-peers
	big := &pb.PutRequest{Value: make([]byte, 200)}
	if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", big, &pb.PutResponse{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a put of 200 bytes over a limit of 100: %v, want ResourceExhausted", err)
	}
	go func() {
		if id, _, _, err := p.request(); err == nil {
			p.reply(id, make([]byte, 300))
		}
	}()
	if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Range", &pb.RangeRequest{}, &pb.RangeResponse{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a response of 300 bytes over a limit of 100: %v, want ResourceExhausted", err)
	}
}

// TestDialFails: nothing listening fails Dial within the dial timeout with
// the cause.
func TestDialFails(t *testing.T) {
	o := opts()
	o.DialTimeout = 2 * time.Second
	_, err := Dial(context.Background(), []string{"127.0.0.1:1"}, o)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Dial to a closed port: %v, want connection refused", err)
	}
	if _, err := Dial(context.Background(), nil, o); err == nil {
		t.Error("Dial with no endpoints succeeded")
	}
	closed := dial(t, strings.TrimPrefix(startNull(t), "http://"))
	closed.Close()
	err = closed.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	if status.Code(err) != codes.Canceled {
		t.Errorf("call on a closed Conn: %v, want Canceled", err)
	}
}

func startNull(t testing.TB) string {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.URL()
}

// TestGoAwayDrain: after a GOAWAY, the calls the server keeps finish on the
// old connection, new calls go over a new one, and the old one closes once
// idle.
func TestGoAwayDrain(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	old := <-peers
	was := c.eps[0].cur.Load()
	first := make(chan error, 1)
	go func() {
		first <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	}()
	id, _, _, err := old.request()
	if err != nil {
		t.Fatal(err)
	}
	if err := old.fr.WriteGoAway(id, http2.ErrCodeNo, nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		p := <-peers
		if id, _, _, err := p.request(); err == nil {
			p.reply(id, nil)
		}
	}()
	// Wait for the new connection, dialled on the GOAWAY: a call sent before
	// would reach the old peer (and be made again on the new connection).
	for c.eps[0].cur.Load() == was {
		time.Sleep(time.Millisecond)
	}
	if err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{}); err != nil {
		t.Errorf("a call after the GOAWAY: %v, want it on a new connection", err)
	}
	old.reply(id, nil)
	if err := <-first; err != nil {
		t.Errorf("the call the server kept: %v", err)
	}
	if _, err := old.next(http2.FrameData); err == nil {
		t.Error("the old connection is still open after its last call")
	}
}
