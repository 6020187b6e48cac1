package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}

// Secrets the live test puts in the cluster and its client; none may be in the archive.
const (
	secretKey      = "/app/secret-token-name"
	secretValue    = "s3cr3t-VALUE-8f2a61"
	secretPassword = "pa55-W0RD-91c3e7"
)

// TestLiveOneMemberDown bundles a 3-member cluster with auth enabled, a secret
// value stored and one member stopped: the bundle is written, the stopped member
// is a finding that fails the verdict, the others are described, and no value,
// password or key name is anywhere in the archive.
func TestLiveOneMemberDown(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{Members: 3, TickMs: 20, ElectionMs: 200})
	root := clustertest.Client(t, c)
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { _, err := root.Put(ctx, secretKey, secretValue); return err },
		func() error { _, err := root.UserAdd(ctx, "root", secretPassword); return err },
		func() error { _, err := root.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := root.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	stopped := c.Members()[2]
	stopped.Stop()

	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		Username: "root", Password: secretPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	b, err := Live(ctx, Target{Client: cli, Endpoints: c.Endpoints(), HTTP: &http.Client{Timeout: 5 * time.Second}},
		Options{Interval: time.Second, Reads: 5, Keys: KeysHashed, MaxKeys: 1000, Timeout: 2 * time.Second,
			Flags: map[string]string{"user": "root"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}

	v := b.Run.Diagnosis.Verdict
	if v.Status != finding.StatusFail || !strings.Contains(v.Summary, "did not answer") {
		t.Errorf("verdict %s: %s; want fail naming the member that did not answer", v.Status, v.Summary)
	}
	up, leaders := 0, 0
	for _, m := range b.Data.Members {
		switch {
		case m.Endpoint == stopped.ClientURL:
			if m.Up() {
				t.Errorf("stopped member %s reads as up", m.Name)
			}
		case !m.Up():
			t.Errorf("member %s: %s", m.Name, m.Error)
		default:
			up++
			if m.IsLeader {
				leaders++
			}
			if m.Version == "" || m.RaftTerm == 0 || m.RaftIndex == 0 || m.DBSize == 0 || m.Linearizable.N != 5 || m.Serializable.N != 5 || !m.Local {
				t.Errorf("member %s: %+v", m.Name, m)
			}
		}
	}
	if up != 2 || leaders != 1 || len(b.Data.Members) != 3 {
		t.Errorf("%d members, %d up, %d leaders; want 3, 2, 1", len(b.Data.Members), up, leaders)
	}
	if b.Data.Keys == nil || b.Data.Keys.Read == 0 {
		t.Errorf("keys: %+v", b.Data.Keys)
	}
	good := 0
	for _, sc := range b.Run.Scrapes {
		if sc.Error == "" {
			good++
		}
	}
	if good != 4 {
		t.Errorf("%d good scrapes, want 2 members × 2", good)
	}
	if r := b.Data.Repair; r == nil || len(r.Members) != 2 || r.Members[0].DefragS <= 0 || r.Members[0].GrowthBytesPerS == nil {
		t.Errorf("repair cost %+v", r)
	}

	// Nothing secret anywhere: every file of the archive, uncompressed.
	all := extract(t, path)
	for _, s := range []string{secretValue, secretPassword, "secret-token-name"} {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("the archive holds %q", s)
		}
	}

	// Read back: the same verdict, from the stored run, and again by Judge.
	got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Run.Diagnosis.Verdict.Summary != v.Summary || len(got.Data.Members) != 3 {
		t.Errorf("read back: %+v", got.Run.Diagnosis.Verdict)
	}
	again, err := Judge(got)
	if err != nil {
		t.Fatal(err)
	}
	if again.Verdict.Status != v.Status || again.Verdict.Summary != v.Summary {
		t.Errorf("Judge again: %s: %s\nstored: %s: %s", again.Verdict.Status, again.Verdict.Summary, v.Status, v.Summary)
	}
}

// extract is every header and body of the archive at path, concatenated.
func extract(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var all bytes.Buffer
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString(hdr.Name + "\n")
		if _, err := io.Copy(&all, tr); err != nil {
			t.Fatal(err)
		}
	}
	if all.Len() == 0 {
		t.Fatal("empty archive")
	}
	return all.Bytes()
}
