package faults

import (
	"io"
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

// delayCopy copies src to dst, writing each chunk delay after it was read.
func delayCopy(dst io.WriteCloser, src io.Reader, delay time.Duration) {
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
				q <- chunk{time.Now().Add(delay), buf[:n]}
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
