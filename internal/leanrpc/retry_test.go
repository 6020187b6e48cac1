package leanrpc

import (
	"context"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTransparentRetry: a call the server never processed (its stream above
// a GOAWAY's last stream id, or refused) is made again, once, as gRPC-go's
// transparent retry makes it; one the server may have processed is not.
func TestTransparentRetry(t *testing.T) {
	answer := func(p *peer, id uint32) {
		p.reply(id, mustMarshal(t, &pb.PutResponse{Header: &pb.ResponseHeader{Revision: 9}}))
	}
	for _, tc := range []struct {
		name string
		// first answers the first attempt (on the first connection); again
		// the second, on the connection it finds (nil: the same).
		first, again func(p *peer, id uint32)
		newConn      bool
		code         codes.Code
		msg          string
	}{
		{"goaway above the stream", func(p *peer, id uint32) { _ = p.fr.WriteGoAway(id-1, http2.ErrCodeNo, []byte("bye")) }, answer, true, codes.OK, ""},
		{"refused", func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) }, answer, false, codes.OK, ""},
		{"refused twice", func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) },
			func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) }, false, codes.Unavailable, "REFUSED_STREAM"},
		{"goaway then refused", func(p *peer, id uint32) { _ = p.fr.WriteGoAway(id-1, http2.ErrCodeNo, nil) },
			func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) }, true, codes.Unavailable, "REFUSED_STREAM"},
		// Processed, or perhaps: the server's answer is the call's.
		{"goaway including the stream", func(p *peer, id uint32) {
			_ = p.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
			answer(p, id)
		}, nil, false, codes.OK, ""},
		{"reset", func(p *peer, id uint32) { _ = p.fr.WriteRSTStream(id, http2.ErrCodeInternal) }, nil, false, codes.Internal, "INTERNAL_ERROR"},
		{"lost mid-call", func(p *peer, id uint32) { p.conn.Close() }, nil, false, codes.Unavailable, "lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, peers := listenPeers(t)
			c := dial(t, addr)
			first := <-peers
			go func() {
				id, _, _, err := first.request()
				if err != nil {
					t.Error(err)
					return
				}
				tc.first(first, id)
				if tc.again == nil {
					return
				}
				p := first
				if tc.newConn {
					p = <-peers
				}
				id, _, body, err := p.request()
				if err != nil {
					t.Error(err)
					return
				}
				var req pb.PutRequest
				if err := req.Unmarshal(body[5:]); err != nil || string(req.Key) != "retried" {
					t.Errorf("the second attempt carries %q (%v), want the call's request", req.Key, err)
				}
				tc.again(p, id)
			}()
			var resp pb.PutResponse
			err := c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("retried")}, &resp)
			if status.Code(err) != tc.code || (tc.msg != "" && !strings.Contains(err.Error(), tc.msg)) {
				t.Fatalf("got %v, want %s with %q", err, tc.code, tc.msg)
			}
			if err == nil && resp.Header.GetRevision() != 9 {
				t.Errorf("response %+v, want the second attempt's", &resp)
			}
		})
	}
}

// TestStreamIDsRunOut: a connection whose stream ids near their end (the ids
// start high here) takes its last call and retires: the next call goes over
// a new connection, starting at id 1, and the old one closes once its calls
// are done.
func TestStreamIDsRunOut(t *testing.T) {
	addr, peers := listenPeers(t)
	c := dial(t, addr)
	old := <-peers
	tr := c.eps[0].cur.Load()
	tr.wmu.Lock()
	tr.nextID = maxStreamID - 2
	tr.wmu.Unlock()
	put := func() error {
		return c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- put() }()
	}
	var ids []uint32
	for range 2 {
		id, _, _, err := old.request()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if min(ids[0], ids[1]) != maxStreamID-2 || max(ids[0], ids[1]) != maxStreamID {
		t.Errorf("stream ids %v, want %d and %d", ids, maxStreamID-2, maxStreamID)
	}
	go func() {
		p := <-peers
		if id, _, _, err := p.request(); err != nil || id != 1 {
			t.Errorf("the new connection's first stream %d (%v), want 1", id, err)
		} else {
			p.reply(id, nil)
		}
	}()
	if err := put(); err != nil {
		t.Errorf("a call after the last stream id: %v", err)
	}
	for _, id := range ids {
		old.reply(id, nil)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a call on the old connection: %v", err)
		}
	}
	if f, err := old.next(http2.FrameData); err == nil {
		t.Errorf("the old connection is still open after its last call: %v", f)
	}
}
