package leanrpc

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Paced PINGs measure the round trip of every load connection through a run,
// beside its calls: an HTTP/2 PING is answered by the server's transport
// (gRPC-go's http2Server.handlePing queues the ack at once), with no gRPC or
// etcd code in between, so its round trip is the network's and the two
// kernels'.
//
// They must never draw a GOAWAY too_many_pings. gRPC-go's server (v1.83,
// internal/transport/http2_server.go, handlePing) counts a strike for a PING
// that comes within its keepalive policy's MinTime of the last one (etcd's
// --grpc-keepalive-min-time, 5 s by default), or with no stream open within
// 2 hours of it, and sends the GOAWAY past 2 strikes (maxPingStrikes); but a
// PING that finds resetPingStrikes set (the server wrote HEADERS or DATA
// since the last PING) counts no strike and clears the count. So a PING is
// sent only once a response's HEADERS has arrived after the last PING's ack:
// the server wrote it after writing the ack, hence after handling that PING
// (it queues the ack first). Every paced PING then finds the flag set, at any
// rate; with no responses (an idle or frozen connection) none is sent, and
// one that is outstanding waits for its answer. The keepalive's own PINGs come
// after 10 s without reads, past MinTime.

// pingState is a connection's paced PING: the one outstanding, its answer, and
// whether a response arrived since the last answer.
type pingState struct {
	// replied says a response's HEADERS arrived since the last PING's ack.
	replied atomic.Bool
	// sent is when the outstanding PING went, ns since the transport was
	// born (its payload); 0 when none is outstanding.
	sent atomic.Int64
	// rtt is the answered PING's round trip in ns, until the pinger takes it; 0 when none.
	rtt atomic.Int64
}

// acked takes a PING ack that arrived at now (since the transport was born):
// the outstanding paced PING's when its payload matches (a keepalive PING's
// payload is zero).
func (p *pingState) acked(data [8]byte, now time.Duration) {
	sent := p.sent.Load()
	if sent == 0 || int64(binary.BigEndian.Uint64(data[:])) != sent {
		return
	}
	// The round trip last: once the pinger sees it, the next PING waits for a new response.
	p.replied.Store(false)
	p.sent.Store(0)
	p.rtt.Store(max(int64(now)-sent, 1))
}

// Ping sends a PING on every endpoint's connection every interval on average,
// each gap drawn between half and one and a half intervals: a fixed period
// locks to the phase of a periodic event (a hold every second, a flush, a GC
// cycle) and samples it at one point only. One at a time per connection and only after a response since the last one's answer
// (see pingState), until ctx ends. record gets, from one goroutine, each
// answer's round trip with the endpoint's index (as InvokeAt names it), and,
// with answered false, how long a PING had waited when its connection was
// replaced or the pinging stopped.
func (c *Conn) Ping(ctx context.Context, interval time.Duration, record func(endpoint int, rtt time.Duration, answered bool)) {
	type outstanding struct {
		t    *transport
		sent time.Time
	}
	out := make([]outstanding, len(c.eps))
	tick := time.NewTimer(jittered(interval))
	defer tick.Stop()
	// collect records endpoint i's outstanding PING once answered, or as
	// unanswered when its connection is no longer cur or the pinging ends.
	collect := func(i int, cur *transport, end bool) {
		o := &out[i]
		if o.t == nil {
			return
		}
		if rtt := o.t.pings.rtt.Swap(0); rtt > 0 {
			record(i, time.Duration(rtt), true)
			o.t = nil
		} else if o.t != cur || end {
			record(i, time.Since(o.sent), false)
			o.t = nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			for i, ep := range c.eps {
				collect(i, ep.cur.Load(), true)
			}
			return
		case <-tick.C:
			tick.Reset(jittered(interval))
		}
		for i, ep := range c.eps {
			t := ep.cur.Load()
			collect(i, t, false)
			if out[i].t != nil || t == nil || !t.ok.Load() || !t.pings.replied.Load() {
				continue
			}
			var data [8]byte
			sent := max(int64(time.Since(t.born)), 1)
			binary.BigEndian.PutUint64(data[:], uint64(sent))
			t.pings.sent.Store(sent)
			t.queuePing(false, data)
			out[i] = outstanding{t: t, sent: time.Now()}
		}
	}
}

// jittered is a gap drawn evenly from [d/2, 3d/2): d on average.
func jittered(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(max(d, 1))))
}
