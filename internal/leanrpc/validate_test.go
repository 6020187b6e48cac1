package leanrpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/etcdperf/etcdperf/internal/testcerts"
)

// TestInvalidSettings: a SETTINGS value outside RFC 9113 §6.5.2's bounds is a
// connection error (the framer finds some, applySettings the others): in the
// handshake Dial fails; later the client answers with a GOAWAY of the
// error's code and closes the connection.
func TestInvalidSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    http2.Setting
		code http2.ErrCode
	}{
		{"max frame size below 16384", http2.Setting{ID: http2.SettingMaxFrameSize, Val: 100}, http2.ErrCodeProtocol},
		{"max frame size above 2^24-1", http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 24}, http2.ErrCodeProtocol},
		{"initial window above 2^31-1", http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31}, http2.ErrCodeFlowControl},
		{"enable push 2", http2.Setting{ID: http2.SettingEnablePush, Val: 2}, http2.ErrCodeProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := listenPeers(t, tc.s)
			o := opts()
			o.DialTimeout = 2 * time.Second
			if c, err := Dial(context.Background(), []string{addr}, o); err == nil {
				c.Close()
				t.Fatal("Dial accepted the settings")
			} else if !strings.Contains(err.Error(), tc.code.String()) {
				t.Errorf("Dial: %v, want %s", err, tc.code)
			}

			addr, peers := listenPeers(t)
			dial(t, addr)
			p := <-peers
			if err := p.fr.WriteSettings(tc.s); err != nil {
				t.Fatal(err)
			}
			f, err := p.next(http2.FrameGoAway)
			if err != nil {
				t.Fatalf("no GOAWAY: %v", err)
			}
			if code := f.(*http2.GoAwayFrame).ErrCode; code != tc.code {
				t.Errorf("GOAWAY %s, want %s", code, tc.code)
			}
		})
	}
}

// TestALPNEnforced: a TLS server that negotiates no protocol is refused, as
// gRPC-go (1.67 on) refuses it.
func TestALPNEnforced(t *testing.T) {
	files, err := testcerts.Write(t.TempDir(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			defer c.Close()
		}
	}()
	pem, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	o := opts()
	o.DialTimeout = 2 * time.Second
	o.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	c, err := Dial(context.Background(), []string{ln.Addr().String()}, o)
	if err == nil {
		c.Close()
		t.Fatal("Dial connected to a TLS server without ALPN")
	}
	if !strings.Contains(err.Error(), "ALPN") {
		t.Errorf("Dial: %v, want the missing ALPN named", err)
	}
}
