package leanrpc

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestKeepaliveFloor: a keepalive time below gRPC-go's 10 s is raised to it.
func TestKeepaliveFloor(t *testing.T) {
	addr := strings.TrimPrefix(startNull(t), "http://")
	for _, tc := range []struct{ set, want time.Duration }{
		{0, 0}, {2 * time.Second, minKeepaliveTime}, {10 * time.Second, 10 * time.Second}, {30 * time.Second, 30 * time.Second},
	} {
		o := opts()
		o.KeepaliveTime = tc.set
		c, err := Dial(context.Background(), []string{addr}, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.eps[0].cur.Load().kaTime; got != tc.want {
			t.Errorf("--keepalive-time %s: the connection pings after %s, want %s", tc.set, got, tc.want)
		}
		c.Close()
	}
}

// kaOpts are a test connection's options with keepalive at ka (the floor
// lowered to it) and the given timeout.
func kaOpts(ka, timeout time.Duration) Options {
	o := opts()
	o.KeepaliveTime, o.KeepaliveTimeout, o.keepaliveFloor = ka, timeout, ka
	return o
}

// TestKeepalive: with a call in flight and nothing read, the client pings
// kaTime after the last read, never sooner; answered pings keep the
// connection, and the call gets its late answer. With no call in flight it
// does not ping (PermitWithoutStream is off, and etcd counts such pings
// against the client). An unanswered ping closes the connection after the
// timeout.
func TestKeepalive(t *testing.T) {
	const ka = 50 * time.Millisecond
	addr, peers := listenPeers(t)
	c, err := Dial(context.Background(), []string{addr}, kaOpts(ka, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := <-peers
	// Idle: no ping in 10 keepalive times.
	_ = p.conn.SetReadDeadline(time.Now().Add(10 * ka))
	if f, err := p.next(http2.FramePing); err == nil {
		t.Errorf("a ping with no call in flight: %v", f)
	}
	_ = p.conn.SetDeadline(time.Now().Add(30 * time.Second))
	done := make(chan error, 1)
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	}()
	id, _, _, err := p.request()
	if err != nil {
		t.Fatal(err)
	}
	var acked time.Time // when the peer last wrote: the client read it later
	for i := range 3 {
		f, err := p.next(http2.FramePing)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(acked); i > 0 && d < ka {
			t.Errorf("a ping %s after the last read, want %s at least", d, ka)
		}
		_ = p.fr.WritePing(true, f.(*http2.PingFrame).Data)
		acked = time.Now()
	}
	p.reply(id, nil)
	if err := <-done; err != nil {
		t.Errorf("the call answered after three pings: %v", err)
	}

	// Unanswered: the connection fails within the timeout, its call with it.
	c2, err := Dial(context.Background(), []string{addr}, kaOpts(ka, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	p2 := <-peers
	go func() {
		done <- c2.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	}()
	if _, _, _, err := p2.request(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "keepalive") {
		t.Errorf("a call on a connection whose ping is not answered: %v, want Unavailable (keepalive)", err)
	}
}

// TestTooManyPings: a GOAWAY too_many_pings doubles the keepalive time of the
// connections dialled after it, as gRPC-go does.
func TestTooManyPings(t *testing.T) {
	const ka = time.Second
	addr, peers := listenPeers(t)
	c, err := Dial(context.Background(), []string{addr}, kaOpts(ka, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := <-peers
	was := c.eps[0].cur.Load()
	if err := p.fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte("too_many_pings")); err != nil {
		t.Fatal(err)
	}
	<-peers // the next connection, dialled on the GOAWAY
	for c.eps[0].cur.Load() == was {
		time.Sleep(time.Millisecond)
	}
	if got := c.eps[0].cur.Load().kaTime; got != 2*ka {
		t.Errorf("keepalive time after too_many_pings: %s, want %s", got, 2*ka)
	}
}
