package leanrpc

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// setUserTimeout sets TCP_USER_TIMEOUT on conn, as gRPC-go sets it when
// keepalive is on (internal/transport/http2_client.go, to the keepalive
// timeout; internal/syscall/syscall_linux.go): data a peer leaves unacknowledged
// that long fails the connection, a partitioned member's calls with it.
func setUserTimeout(conn net.Conn, d time.Duration) error {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d/time.Millisecond))
	}); err != nil {
		return err
	}
	return serr
}
