package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/conn"
)

// Connector opens the canary's connection to its cluster (conn.OpenLoad):
// the session, the load's clients and what closes them.
type Connector func(ctx context.Context) (*conn.Session, []*clientv3.Client, func(), error)

// Reasons of etcdperf_probe_reason_info beside the skip reasons: why the last
// tick did not end in a probe whose every request succeeded.
const (
	ReasonOK       = "ok"
	ReasonTLS      = "tls"
	ReasonError    = "error"
	ReasonRequests = "request_errors"
)

// Open connects now, as the first probe would (serve opens an embedded etcd
// before it starts).
func (p *Prober) Open(ctx context.Context) error { return p.connect(ctx) }

// connect opens the connection when there is none, or when a TLS file changed
// since it was opened (a renewed certificate, a rotated CA): the canary starts
// and keeps reporting whatever the cluster and its files do.
func (p *Prober) connect(ctx context.Context) error {
	if p.Connect == nil {
		return nil // a fixed Target (tests)
	}
	stamp := fileStamps(p.TLSFiles)
	if p.Target != nil && stamp == p.stamp {
		return nil
	}
	p.disconnect()
	t, clis, release, err := p.Connect(ctx)
	if err != nil {
		return p.diagnose(ctx, err)
	}
	p.Target, p.Clients, p.release, p.stamp = t, clis, release, stamp
	if p.DiskDir == "" {
		p.DiskDir = t.DataDir() // the embedded etcd's; "" for --endpoints
	}
	return nil
}

// diagnose tells a failed connect due to TLS from an unreachable cluster:
// clientv3's blocking dial reports only that it timed out. The TLS files must
// read, and a handshake of its own with the first endpoint must succeed.
func (p *Prober) diagnose(ctx context.Context, err error) error {
	if p.TLS == nil {
		return err
	}
	cfg, terr := p.TLS()
	switch {
	case terr != nil:
		return tlsError{terr}
	case cfg == nil || len(p.Endpoints) == 0:
		return err
	}
	host := p.Endpoints[0]
	if u, perr := url.Parse(host); perr == nil && u.Host != "" {
		host = u.Host
	}
	ctx, cancel := context.WithTimeout(ctx, max(p.DialTimeout, time.Second))
	defer cancel()
	raw, derr := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if derr != nil {
		return err // not even TCP: unreachable
	}
	defer raw.Close()
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(host)
	}
	if herr := tls.Client(raw, cfg).HandshakeContext(ctx); herr != nil {
		return tlsError{fmt.Errorf("%w; TLS handshake with %s: %w", err, host, herr)}
	}
	return err
}

// tlsError is a connect that failed on TLS: its files or its handshake.
type tlsError struct{ error }

func (e tlsError) Unwrap() error { return e.error }

// disconnect closes the connection Connect opened.
func (p *Prober) disconnect() {
	p.closeMembers()
	if p.release != nil {
		p.release()
	}
	p.Target, p.Clients, p.release = nil, nil, nil
}

// fileStamps is the size and modification time of each file, to see a change.
func fileStamps(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d;", f, fi.Size(), fi.ModTime().UnixNano())
		} else {
			fmt.Fprintf(&b, "%s missing;", f)
		}
	}
	return b.String()
}

// CertExpiry reads the PEM certificates of each file and returns the earliest
// NotAfter of each: a CA bundle expires with its first certificate. Files
// that do not read or hold no certificate (a key) are left out.
func CertExpiry(files []string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for {
			var blk *pem.Block
			if blk, b = pem.Decode(b); blk == nil {
				break
			}
			if blk.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				continue
			}
			if t, ok := out[f]; !ok || c.NotAfter.Before(t) {
				out[f] = c.NotAfter
			}
		}
	}
	return out
}

// Reason is why the result is not a clean probe: a skip reason, tls when the
// connection failed on a certificate, request_errors when some requests
// failed, error for any other failure, ok otherwise.
func (r Result) Reason() string {
	switch {
	case r.Skipped == SkipUnreachable && isTLS(r.Err):
		return ReasonTLS
	case r.Skipped != "":
		return r.Skipped
	case r.Err != nil || !r.Ran():
		return ReasonError
	case r.Run.Paced().Errors > 0:
		return ReasonRequests
	}
	return ReasonOK
}

// isTLS says whether err comes from the TLS handshake or its files.
func isTLS(err error) bool {
	if err == nil {
		return false
	}
	var te tlsError
	return errors.As(err, &te)
}
