package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testcerts"
)

// serve accepts connections on 127.0.0.1 and hands each to handle; the
// listener closes when the test ends.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return ln.Addr().String()
}

// settings answers the HTTP/2 preface with a SETTINGS frame, as a gRPC server does.
func settings(c net.Conn) {
	buf := make([]byte, len(http2Preface))
	if _, err := io.ReadFull(c, buf); err == nil {
		c.Write([]byte{0, 0, 0, 0x4, 0, 0, 0, 0, 0})
	}
	io.Copy(io.Discard, c)
}

func certs(t *testing.T) (testcerts.Files, *tls.Config, *x509.CertPool) {
	t.Helper()
	f, err := testcerts.Write(t.TempDir(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return f, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}}, pool
}

func TestProbe(t *testing.T) {
	f, srvTLS, pool := certs(t)
	grpcLike := serve(t, settings)
	http1 := serve(t, func(c net.Conn) { io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n") })
	closes := serve(t, func(c net.Conn) {})
	stalled := serve(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	tlsOK := serve(t, func(c net.Conn) { settings(tls.Server(c, srvTLS)) })
	mtls := srvTLS.Clone()
	mtls.ClientAuth, mtls.ClientCAs = tls.RequireAndVerifyClientCert, pool
	tlsClientCert := serve(t, func(c net.Conn) { settings(tls.Server(c, mtls)) })
	refused := func() string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	trusted := &tls.Config{RootCAs: pool}
	client, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ep   string
		tls  *tls.Config
		want string // "" for no error
	}{
		{"grpc", grpcLike, nil, ""},
		{"http prefix drops TLS", "http://" + grpcLike, trusted, ""},
		{"unix socket not judged", "unix:///nonexistent.sock", nil, ""},
		{"refused", refused, nil, "connection refused"},
		{"not grpc", http1, nil, "does not speak gRPC"},
		{"closes", closes, nil, "name it https://"},
		{"stalled", stalled, nil, "no answer within the dial timeout"},
		{"plain server, TLS client", "https://" + grpcLike, trusted, "does not speak TLS"},
		{"tls", "https://" + tlsOK, trusted, ""},
		{"unknown CA", "https://" + tlsOK, &tls.Config{}, "not signed by the CA of --cacert"},
		{"wrong name", "https://" + tlsOK, &tls.Config{RootCAs: pool, ServerName: "etcd.example"}, "name the endpoint as the certificate does"},
		{"client cert required", "https://" + tlsClientCert, trusted, "requires a client certificate"},
		{"client cert", "https://" + tlsClientCert, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{client}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The stalled case waits out its short timeout; the others answer
			// at once, within a timeout no slow machine (-race) reaches.
			timeout := 10 * time.Second
			if c.name == "stalled" {
				timeout = 300 * time.Millisecond
			}
			err := Probe(context.Background(), []string{c.ep}, c.tls, timeout)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Probe(%s) = %v, want no error", c.ep, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Probe(%s) = %v, want an error with %q", c.ep, err, c.want)
			}
		})
	}
	if err := Probe(context.Background(), []string{refused, grpcLike}, nil, time.Second); err != nil {
		t.Errorf("one endpoint answering: %v", err)
	}
}
