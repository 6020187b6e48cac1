package leanrpc

import (
	"context"
	"strconv"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRetryPolicy: a failed call is made again as clientv3's retry
// interceptor makes it: a Range (repeatable) on Unavailable, any call on a
// deadline that is not its context's; a Put (nonRepeatable) not on
// Unavailable, nor a Range on an error that is not Unavailable. Each attempt
// after the first counts in the context's Retries.
func TestRetryPolicy(t *testing.T) {
	const (
		rangeM = "/etcdserverpb.KV/Range"
		putM   = "/etcdserverpb.KV/Put"
	)
	for _, tc := range []struct {
		name, method string
		fail         codes.Code // the first attempt's status
		msg          string
		retried      bool
	}{
		{"range, leader changed", rangeM, codes.Unavailable, "etcdserver: leader changed", true},
		{"range, no leader", rangeM, codes.Unavailable, "etcdserver: no leader", true},
		{"range, compacted", rangeM, codes.OutOfRange, "etcdserver: mvcc: required revision has been compacted", false},
		{"range, server deadline", rangeM, codes.DeadlineExceeded, "deadline", true},
		{"put, leader changed", putM, codes.Unavailable, "etcdserver: leader changed", false},
		{"put, server deadline", putM, codes.DeadlineExceeded, "deadline", true},
		{"put, too many requests", putM, codes.ResourceExhausted, "etcdserver: too many requests", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, peers := listenPeers(t)
			c := dial(t, addr)
			p := <-peers
			go func() {
				id, _, _, err := p.request()
				if err != nil {
					return
				}
				p.headers(id, true, ":status", "200", "content-type", "application/grpc", "grpc-status", strconv.Itoa(int(tc.fail)), "grpc-message", tc.msg)
				if id, _, _, err = p.request(); err == nil {
					p.reply(id, nil)
				}
			}()
			var r Retries
			ctx := WithRetries(context.Background(), &r)
			var err error
			if tc.method == rangeM {
				err = c.Invoke(ctx, tc.method, &pb.RangeRequest{}, &pb.RangeResponse{})
			} else {
				err = c.Invoke(ctx, tc.method, &pb.PutRequest{}, &pb.PutResponse{})
			}
			if tc.retried {
				if err != nil || r.Load() != 1 {
					t.Errorf("got %v after %d retries, want success after 1", err, r.Load())
				}
				return
			}
			if st, _ := status.FromError(err); st.Code() != tc.fail || st.Message() != tc.msg || r.Load() != 0 {
				t.Errorf("got %v after %d retries, want %s %q and none", err, r.Load(), tc.fail, tc.msg)
			}
		})
	}
}
