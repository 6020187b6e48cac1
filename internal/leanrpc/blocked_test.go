package leanrpc

import (
	"bufio"
	"context"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// bigWindows are a server's settings that let a client send 64 MiB without
// waiting for a window update: only the socket holds it back.
var bigWindows = []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 1 << 30}, {ID: http2.SettingMaxFrameSize, Val: 1 << 20}}

// blockWriter starts a put of 64 MiB on c, which the peer p does not read,
// and returns once the put's writer has held the connection's write lock for
// 100 ms of wall time (blocked in its syscall), or once the put has already
// ended (a keepalive may fail the connection before a slow host's polls see
// 100 ms; its error is put back on done). Held time is wall time, not a count
// of polls, because a loaded host (CI, -race) sleeps far past 5 ms.
func blockWriter(t *testing.T, c *Conn, p *peer, done chan error) *transport {
	t.Helper()
	if err := p.fr.WriteWindowUpdate(0, 1<<30); err != nil {
		t.Fatal(err)
	}
	tr := c.eps[0].cur.Load()
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("big"), Value: make([]byte, 64<<20)}, &pb.PutResponse{})
	}()
	var since time.Time
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writer never blocked")
		}
		select {
		case err := <-done:
			done <- err
			return tr
		default:
		}
		if tr.wmu.TryLock() {
			tr.wmu.Unlock()
			since = time.Time{}
			continue
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) >= 100*time.Millisecond {
			return tr
		}
	}
}

func bigOpts() Options {
	o := opts()
	o.MaxSendMsgSize = 128 << 20
	return o
}

// TestReaderNotBehindWriter: while a writer is blocked on a peer that does not
// read, the reader goes on: a PING from the peer (whose ack cannot go out yet)
// does not stop the answer that follows it from reaching its call. Once the
// peer reads again, the ack is there.
func TestReaderNotBehindWriter(t *testing.T) {
	addr, peers := listenPeers(t, bigWindows...)
	c, err := Dial(context.Background(), []string{addr}, bigOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := <-peers
	small := make(chan error, 1)
	go func() {
		small <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("small")}, &pb.PutResponse{})
	}()
	id, _, _, err := p.request()
	if err != nil {
		t.Fatal(err)
	}
	big := make(chan error, 1)
	blockWriter(t, c, p, big)
	if err := p.fr.WritePing(false, [8]byte{7}); err != nil {
		t.Fatal(err)
	}
	p.reply(id, nil)
	select {
	case err := <-small:
		if err != nil {
			t.Errorf("the small put: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the answer behind a PING did not reach its call while a write was blocked")
	}
	// The peer reads again: the big put and the ack arrive.
	bigID, _, _, err := p.request()
	if err != nil {
		t.Fatal(err)
	}
	p.reply(bigID, nil)
	if err := <-big; err != nil {
		t.Errorf("the big put: %v", err)
	}
	if data, err := p.pingAck(); err != nil || data != [8]byte{7} {
		t.Errorf("PING ack %v (%v)", data, err)
	}
}

// TestWriteBlockedPeer: a peer that stops reading (and says nothing) fails
// the connection and its calls with Unavailable, with keepalive off (the
// write deadline) and on (the ping is not answered).
func TestWriteBlockedPeer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ka      time.Duration
		timeout time.Duration
	}{
		{"keepalive off", 0, 300 * time.Millisecond},
		{"keepalive on", 100 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, peers := listenPeers(t, bigWindows...)
			o := bigOpts()
			o.KeepaliveTime, o.KeepaliveTimeout, o.keepaliveFloor = tc.ka, tc.timeout, tc.ka
			c, err := Dial(context.Background(), []string{addr}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			p := <-peers
			big := make(chan error, 1)
			blockWriter(t, c, p, big)
			select {
			case err := <-big:
				if status.Code(err) != codes.Unavailable {
					t.Errorf("a put to a peer that stopped reading: %v, want Unavailable", err)
				}
				t.Logf("%v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("a put to a peer that stopped reading still waits after 20 s")
			}
		})
	}
}

// stuckWriter blocks every Write until release is closed.
type stuckWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (w stuckWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return len(p), nil
}

// TestControlQueueNotBehindWrite: while the writer moving the control queue
// into the write buffer is blocked on the socket (the buffer was full), the
// reader can still queue its answers (a PING ack, a window update): the
// queue's lock is not held across the write.
func TestControlQueueNotBehindWrite(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	<-peers
	tr := c.eps[0].cur.Load()
	w := stuckWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	tr.lockWrite()
	real := tr.bw
	tr.bw = bufio.NewWriterSize(w, bufSize)
	tr.bw.Write(make([]byte, bufSize-1)) // the next frame does not fit
	tr.queueWindowUpdate(0, 1)
	drained := make(chan struct{})
	go func() {
		tr.drainControl() // blocks in the write
		close(drained)
	}()
	<-w.entered
	queued := make(chan struct{})
	go func() {
		tr.queuePing(true, [8]byte{})
		close(queued)
	}()
	select {
	case <-queued:
	case <-time.After(10 * time.Second):
		t.Error("queueing a PING ack waited for a blocked write of the control queue")
	}
	close(w.release)
	<-drained
	<-queued
	tr.bw = real
	tr.wmu.Unlock()
}
