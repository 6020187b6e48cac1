package faults

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// TestHoldProxy checks the hold proxy forwards both ways, and holdLeft when
// what the proxy reads is held.
func TestHoldProxy(t *testing.T) {
	for _, tc := range []struct{ since, want time.Duration }{
		{0, 200 * time.Millisecond},
		{150 * time.Millisecond, 50 * time.Millisecond},
		{200 * time.Millisecond, 0},
		{time.Second + 199*time.Millisecond, 0}, // the next period starts at 2 s
		{2*time.Second + 10*time.Millisecond, 190 * time.Millisecond},
	} {
		if got := holdLeft(tc.since, 2*time.Second, 200*time.Millisecond); got != tc.want {
			t.Errorf("holdLeft(%s, every 2s, hold 200ms) = %s, want %s", tc.since, got, tc.want)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // an echo server
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", HoldProxy(t, l.Addr().String(), time.Hour, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo through the proxy: %q, %v", line, err)
	}
}
