//go:build !linux

package leanrpc

import (
	"net"
	"time"
)

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist, as
// gRPC-go's does nothing there.
func setUserTimeout(net.Conn, time.Duration) error { return nil }
