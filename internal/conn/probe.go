package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Probe connects to every endpoint as gRPC would, concurrently, and
// fails when none answers, with the first endpoint's cause. An endpoint it
// cannot judge (a unix socket) counts as answering.
func Probe(ctx context.Context, eps []string, tlsCfg *tls.Config, timeout time.Duration) error {
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { errs[i] = probeEndpoint(ctx, ep, tlsCfg, timeout) })
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("cannot reach etcd at %s: %w", eps[0], errs[0])
}

// http2Preface is a client's HTTP/2 connection preface and an empty SETTINGS
// frame: a gRPC server answers it with a SETTINGS frame of its own.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// probeEndpoint opens a TCP connection to ep, does the TLS handshake when tlsCfg
// is set and sends the HTTP/2 preface: a server that rejects the client's
// certificate says so only then (TLS 1.3 finishes the client's handshake before
// the server checks it), and a stalled server never answers.
func probeEndpoint(ctx context.Context, ep string, tlsCfg *tls.Config, timeout time.Duration) error {
	addr, ok := strings.CutPrefix(ep, "https://")
	if !ok {
		if addr, ok = strings.CutPrefix(ep, "http://"); ok {
			tlsCfg = nil // etcd's client drops TLS for http:// endpoints
		}
	}
	if !ok && strings.Contains(ep, "://") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no TCP connection within the dial timeout (%s)", timeout)
		}
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stalled := fmt.Errorf("connected, but no answer within the dial timeout (%s): is the server stalled, or not etcd?", timeout)
	if tlsCfg != nil {
		cfg := tlsCfg.Clone()
		cfg.NextProtos = []string{"h2"} // as gRPC: without it the server speaks HTTP/1.1
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return tlsCause(err, stalled)
		}
		conn = tc
	}
	if _, err := io.WriteString(conn, http2Preface); err != nil {
		return tlsCause(err, stalled)
	}
	head := make([]byte, 9)
	if _, err := io.ReadFull(conn, head); err != nil {
		if tlsCfg == nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			return errors.New("the server closed the connection: if it serves TLS, name it https:// (with --cacert)")
		}
		return tlsCause(err, stalled)
	}
	if head[3] != 0x4 { // not a SETTINGS frame
		return errors.New("the server does not speak gRPC (HTTP/2): is this etcd's client URL?")
	}
	return nil
}

// tlsCause turns what a probe saw into a cause a user can act on.
func tlsCause(err, stalled error) error {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	var opErr *net.OpError
	remote := errors.As(err, &opErr) && opErr.Op == "remote error" // a TLS alert from the server
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return stalled
	case errors.As(err, &unknownCA):
		return errors.New("x509: certificate signed by unknown authority: the server's certificate is not signed by the CA of --cacert (or the system's, without --cacert)")
	case errors.As(err, &hostErr):
		return fmt.Errorf("%w: name the endpoint as the certificate does", hostErr)
	case remote && strings.HasSuffix(err.Error(), "certificate required"):
		return errors.New("the server requires a client certificate: pass --cert and --key")
	case remote:
		return fmt.Errorf("the server rejected the client certificate of --cert: %w", err)
	case strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
		return errors.New("the server does not speak TLS: name it http://, or drop the TLS flags")
	}
	return err
}
