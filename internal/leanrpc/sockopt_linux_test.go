package leanrpc

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTCPUserTimeout: with keepalive on, the socket's TCP_USER_TIMEOUT is the
// keepalive timeout, as gRPC-go sets it; with keepalive off it is left alone.
func TestTCPUserTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ka      time.Duration
		timeout time.Duration
		want    int // ms
	}{
		{"keepalive on", 10 * time.Second, 6 * time.Second, 6000},
		{"keepalive off", 0, 6 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := listenPeers(t)
			o := opts()
			o.KeepaliveTime, o.KeepaliveTimeout = tc.ka, tc.timeout
			c, err := Dial(context.Background(), []string{addr}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			raw, err := c.eps[0].cur.Load().conn.(*net.TCPConn).SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var got int
			var gerr error
			if err := raw.Control(func(fd uintptr) {
				got, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
			}); err != nil || gerr != nil {
				t.Fatal(err, gerr)
			}
			if got != tc.want {
				t.Errorf("TCP_USER_TIMEOUT %d ms, want %d", got, tc.want)
			}
		})
	}
}
