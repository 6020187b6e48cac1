package leanrpc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// result is the outcome of call c, read by the caller once the reader has
// signalled c.done: a transport error, the status of the trailers, or the one
// response message unmarshalled into reply.
func (c *call) result(reply any) error {
	if c.err != nil {
		return c.err
	}
	if !c.hasStatus {
		if c.httpStatus != 0 && c.httpStatus != 200 {
			return status.Errorf(httpCode(c.httpStatus), "unexpected HTTP status %d from the server", c.httpStatus)
		}
		return status.Error(codes.Internal, "the server ended the stream without a grpc-status")
	}
	if c.code != codes.OK {
		return status.Error(c.code, c.msg)
	}
	msg, err := message(c.buf)
	if err != nil {
		return err
	}
	m, ok := reply.(gogoMessage)
	if !ok {
		return status.Errorf(codes.Internal, "leanrpc: %T is not an etcd API message", reply)
	}
	if err := m.Unmarshal(msg); err != nil {
		return status.Errorf(codes.Internal, "unmarshal %T: %v", reply, err)
	}
	return nil
}

// message is the one message of a unary response body: a 5-byte gRPC prefix
// (compression flag, big-endian length) and that many bytes.
func message(body []byte) ([]byte, error) {
	if len(body) < 5 {
		return nil, status.Errorf(codes.Internal, "the server sent no response message (%d bytes)", len(body))
	}
	if body[0] != 0 {
		// No grpc-accept-encoding is sent, so a server never compresses.
		return nil, status.Errorf(codes.Internal, "the server sent a message with compression flag %d", body[0])
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(n) != uint64(len(body)-5) {
		return nil, status.Errorf(codes.Internal, "the response body holds %d bytes after a message of %d: one message expected", len(body)-5, n)
	}
	return body[5:], nil
}

// httpCode maps an HTTP status without a grpc-status to a code, as gRPC-go
// does (its HTTPStatusConvTab, after the gRPC HTTP/2 protocol spec).
func httpCode(s int) codes.Code {
	switch s {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// rstCode maps the error code of a RST_STREAM from the server to a code, as
// gRPC-go does (its http2ErrConvTab).
func rstCode(e http2.ErrCode) codes.Code {
	switch e {
	case http2.ErrCodeFlowControl, http2.ErrCodeEnhanceYourCalm:
		return codes.ResourceExhausted
	case http2.ErrCodeRefusedStream:
		return codes.Unavailable
	case http2.ErrCodeCancel:
		return codes.Canceled
	case http2.ErrCodeInadequateSecurity:
		return codes.PermissionDenied
	}
	return codes.Internal
}

// parseStatus reads a grpc-status value; anything but a decimal code is Unknown.
func parseStatus(v string) codes.Code {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return codes.Unknown
	}
	return codes.Code(n)
}

// decodeMessage undoes the percent-encoding of grpc-message (the gRPC HTTP/2
// protocol: bytes outside 0x20–0x7E, and '%', are sent as %XX). A malformed
// escape is kept as it is, as gRPC-go does.
func decodeMessage(v string) string {
	i := 0
	for i < len(v) && v[i] != '%' {
		i++
	}
	if i == len(v) {
		return v // the common case: nothing to decode, no copy
	}
	out := make([]byte, 0, len(v))
	out = append(out, v[:i]...)
	for ; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if b, err := strconv.ParseUint(v[i+1:i+3], 16, 8); err == nil {
				out = append(out, byte(b))
				i += 2
				continue
			}
		}
		out = append(out, v[i])
	}
	return string(out)
}

// maxTimeoutValue is the largest grpc-timeout value (the gRPC
// HTTP/2 protocol: TimeoutValue is at most 8 ASCII digits).
const maxTimeoutValue = 99_999_999

// encodeTimeout is the grpc-timeout of d: the finest unit whose value fits 8
// digits, rounded up, as gRPC-go encodes it.
func encodeTimeout(d time.Duration) string {
	if d <= 0 {
		return "0n"
	}
	for _, u := range []struct {
		d      time.Duration
		suffix string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}} {
		if v := ceilDiv(d, u.d); v <= maxTimeoutValue {
			return strconv.FormatInt(v, 10) + u.suffix
		}
	}
	return strconv.FormatInt(min(ceilDiv(d, time.Hour), maxTimeoutValue), 10) + "H"
}

func ceilDiv(d, u time.Duration) int64 {
	if d%u > 0 {
		return int64(d/u) + 1
	}
	return int64(d / u)
}

// connError is the status of calls that a lost connection failed: Unavailable,
// as gRPC-go reports a transport that closed under its streams.
func connError(addr string, err error) error {
	return status.Error(codes.Unavailable, fmt.Sprintf("connection to %s lost: %v", addr, err))
}
