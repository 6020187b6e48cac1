package leanrpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/testcerts"
)

// TestEtcd makes the calls of the put and range loops against a real etcd:
// the answers, etcd's errors with their codes, and values and responses
// larger than the flow-control windows on either side.
func TestEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := clustertest.Start(t, cluster.Config{})
	c := dial(t, strings.TrimPrefix(cl.Endpoints()[0], "http://"))
	put := func(key string, value []byte) (*pb.PutResponse, error) {
		var resp pb.PutResponse
		err := c.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte(key), Value: value}, &resp)
		return &resp, err
	}

	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := range 20 {
				k := fmt.Sprintf("/etcdperf/small/%d/%d", w, i)
				if _, err := put(k, []byte(k)); err != nil {
					t.Errorf("put %s: %v", k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	var rr pb.RangeResponse
	if err := c.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/etcdperf/small/"), RangeEnd: []byte("/etcdperf/small0")}, &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Count != 200 || len(rr.Kvs) != 200 || string(rr.Kvs[0].Key) != string(rr.Kvs[0].Value) {
		t.Errorf("range over the small keys: count %d, %d kvs", rr.Count, len(rr.Kvs))
	}

	// 1 MiB values: each put crosses etcd's 64 KiB initial stream window,
	// and the range over six of them this client's 4 MiB stream window.
	big := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 6 {
		if _, err := put(fmt.Sprintf("/etcdperf/big/%d", i), big); err != nil {
			t.Fatalf("put of 1 MiB: %v", err)
		}
	}
	rr.Reset()
	if err := c.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/etcdperf/big/"), RangeEnd: []byte("/etcdperf/big0")}, &rr); err != nil {
		t.Fatal(err)
	}
	if len(rr.Kvs) != 6 || !bytes.Equal(rr.Kvs[5].Value, big) {
		t.Errorf("range over the big keys: %d kvs", len(rr.Kvs))
	}

	head, err := put("/etcdperf/rev", nil)
	if err != nil {
		t.Fatal(err)
	}
	past, stop := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer stop()
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		// etcd's --max-request-bytes is 1.5 MiB; clientv3's send limit 2 MiB.
		{"request too large", func() error { _, err := put("/etcdperf/huge", make([]byte, 1600<<10)); return err },
			codes.InvalidArgument, "etcdserver: request is too large"},
		{"future revision", func() error {
			return c.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/etcdperf/rev"), Revision: head.Header.Revision + 100}, &pb.RangeResponse{})
		}, codes.OutOfRange, "future revision"},
		{"deadline passed", func() error {
			return c.Invoke(past, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/late")}, &pb.PutResponse{})
		}, codes.DeadlineExceeded, ""},
	} {
		err := tc.call()
		if s, _ := status.FromError(err); s.Code() != tc.code || !strings.Contains(s.Message(), tc.msg) {
			t.Errorf("%s: %v, want %s with %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if _, err := put("/etcdperf/after", []byte("ok")); err != nil {
		t.Errorf("put after the errors: %v", err)
	}
}

// TestEtcdTLS: a put and a range over TLS (ALPN h2, a client certificate) to
// an etcd serving https.
func TestEtcdTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	files, err := testcerts.Write(t.TempDir(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := clustertest.Start(t, cluster.Config{TLS: &cluster.TLS{CertFile: files.ServerCert, KeyFile: files.ServerKey, TrustedCAFile: files.CA}})
	pem, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	o := opts()
	cert, err := tls.LoadX509KeyPair(files.ClientCert, files.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	o.TLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	c, err := Dial(ctx, []string{strings.TrimPrefix(cl.Endpoints()[0], "https://")}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/tls"), Value: []byte("v")}, &pb.PutResponse{}); err != nil {
		t.Fatal(err)
	}
	var rr pb.RangeResponse
	if err := c.Invoke(ctx, "/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("/etcdperf/tls")}, &rr); err != nil || len(rr.Kvs) != 1 || string(rr.Kvs[0].Value) != "v" {
		t.Errorf("range over TLS: %v, %+v", err, &rr)
	}
}
