package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/conn"
)

// TestReconnectOnTLSChange: the connection is opened once, kept while the
// TLS files stay as they are, and opened again (the old one closed) when one
// changes; a failed connect is tried again at the next probe.
func TestReconnectOnTLSChange(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	opened, closed, fail := 0, 0, true
	p := &Prober{TLSFiles: []string{ca}, Connect: func(context.Context) (*conn.Session, []*clientv3.Client, func(), error) {
		if fail {
			return nil, nil, nil, errors.New("unreachable")
		}
		opened++
		return &conn.Session{}, nil, func() { closed++ }, nil
	}}
	ctx := context.Background()
	if err := p.Open(ctx); err == nil || p.Target != nil {
		t.Fatalf("failed connect: %v, target %v", err, p.Target)
	}
	fail = false
	for range 3 {
		if err := p.Open(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if opened != 1 || closed != 0 {
		t.Fatalf("unchanged files: opened %d closed %d, want 1 0", opened, closed)
	}
	if err := os.WriteFile(ca, []byte("renewed"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(ca, later, later); err != nil {
		t.Fatal(err)
	}
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if opened != 2 || closed != 1 {
		t.Errorf("after the CA changed: opened %d closed %d, want 2 1", opened, closed)
	}
	if err := p.Close(ctx); err != nil || closed != 2 {
		t.Errorf("Close: %v, closed %d", err, closed)
	}
}

// TestCertExpiry reads the earliest expiry of a PEM bundle and skips what is
// not a certificate.
func TestCertExpiry(t *testing.T) {
	dir := t.TempDir()
	soon, late := time.Now().Add(time.Hour).Truncate(time.Second), time.Now().Add(48*time.Hour).Truncate(time.Second)
	bundle := append(testCertPEM(t, late), testCertPEM(t, soon)...)
	files := map[string][]byte{"bundle.pem": bundle, "key.pem": []byte("-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n")}
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got := CertExpiry(append(paths, filepath.Join(dir, "missing.pem")))
	if len(got) != 1 || !got[filepath.Join(dir, "bundle.pem")].Equal(soon.UTC()) {
		t.Errorf("expiry %v, want the bundle's earliest %v only", got, soon.UTC())
	}
}

// testCertPEM is a self-signed certificate expiring at notAfter.
func testCertPEM(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
