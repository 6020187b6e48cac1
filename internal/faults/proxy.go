package faults

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// DelayProxy forwards TCP connections from a loopback port to target, holding every
// chunk for delay in each direction: added latency without a bandwidth limit, which
// `tc netem` would give if these kernels had it. It returns the proxy's host:port;
// cleanup closes it and every connection through it.
func DelayProxy(t testing.TB, target string, delay time.Duration) string {
	t.Helper()
	return proxy(t, target, func() time.Duration { return delay })
}

// HoldProxy forwards TCP connections from a loopback port to target and holds
// the link for hold once every period (at a random phase), each way: what it
// reads in a hold it writes when the hold ends, in order, and the rest at once.
// A link that loses a segment now and then, each loss paid with a
// retransmission timeout (Linux's RTO is 200 ms at least: RFC 6298 and
// TCP_RTO_MIN), the stream behind it waiting. The median is untouched while the
// holds are a small share of the time; the tail is the hold. Periodic, not
// drawn per packet, so that every window of a few periods holds as often as
// the next (tc netem loss, where the kernel has it, is the random kind).
func HoldProxy(t testing.TB, target string, every, hold time.Duration) string {
	t.Helper()
	phase := time.Duration(rand.Int64N(int64(every)))
	origin := time.Now().Add(-phase)
	return proxy(t, target, func() time.Duration { return holdLeft(time.Since(origin), every, hold) })
}

// holdLeft is how much of a hold is left at since into holds of hold every
// period, each at the start of its period.
func holdLeft(since, every, hold time.Duration) time.Duration {
	if in := since % every; in < hold {
		return hold - in
	}
	return 0
}

// proxy forwards TCP connections from a loopback port to target, holding each
// chunk for what delay says, in each direction.
func proxy(t testing.TB, target string, delay func() time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); delayCopy(out, in, delay) }()
			go func() { defer wg.Done(); delayCopy(in, out, delay) }()
		}
	}()
	return l.Addr().String()
}

// delayCopy copies src to dst, writing each chunk delay() after it was read
// (in order: a chunk waits for the one before it).
func delayCopy(dst io.WriteCloser, src io.Reader, delay func() time.Duration) {
	type chunk struct {
		due  time.Time
		data []byte
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(delay()), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	dst.Close()
	for range q { // let the reader finish
	}
}
