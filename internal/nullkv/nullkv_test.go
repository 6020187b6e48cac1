package nullkv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "example.invalid:0", "no-port"} {
		if s, err := Listen(addr); err == nil {
			s.Close()
			t.Errorf("Listen(%q) succeeded; the null server listens on loopback only", addr)
		}
	}
}

// TestServesWhatTheGeneratorsCall drives the calls etcdperf and etcd's benchmark
// make around and during a load through etcd's own client.
func TestServesWhatTheGeneratorsCall(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	put, err := cli.Put(ctx, "/k", "v")
	if err != nil {
		t.Fatal(err)
	}
	get, err := cli.Get(ctx, "/k")
	if err != nil || len(get.Kvs) != 0 || get.Header.Revision != put.Header.Revision {
		t.Fatalf("get after put: %v, %+v; want no keys at revision %d", err, get, put.Header.Revision)
	}
	if _, err := cli.Delete(ctx, "/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	txn, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision("/k"), "=", 0)).
		Then(clientv3.OpPut("/k", "v"), clientv3.OpGet("/k")).Commit()
	if err != nil || !txn.Succeeded || len(txn.Responses) != 2 || txn.Responses[1].GetResponseRange() == nil {
		t.Fatalf("create-if-absent txn: %v, %+v", err, txn)
	}
	ml, err := cli.MemberList(ctx)
	if err != nil || len(ml.Members) != 1 || ml.Members[0].ClientURLs[0] != s.URL() {
		t.Fatalf("member list: %v, %+v", err, ml)
	}
	st, err := cli.Status(ctx, s.URL())
	if err != nil || st.Version != Version || st.Leader != ml.Members[0].ID {
		t.Fatalf("status: %v, %+v", err, st)
	}
	for path, want := range map[string]string{"/health": `"health":"true"`, "/metrics": ""} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}
}
