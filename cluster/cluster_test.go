package cluster

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/testcerts"
)

func TestMain(m *testing.M) {
	MaybeRunEtcd()
	os.Exit(m.Run())
}

func TestStartModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"embedded", Config{TickMs: 10, ElectionMs: 100}},
		{"process", Config{Processes: true, TickMs: 10, ElectionMs: 100}},
		{"three-members", Config{Members: 3, TickMs: 10, ElectionMs: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c, err := Start(ctx, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := c.Dir()
			cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if _, err := cli.Put(ctx, "/etcdperf/test", "v"); err != nil {
				t.Fatal(err)
			}
			ml, err := cli.MemberList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := max(tc.cfg.Members, 1)
			if len(ml.Members) != want {
				t.Errorf("members = %d, want %d", len(ml.Members), want)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("temp dir %s left behind", dir)
			}
		})
	}
}

func TestStoppedMemberCanBeClosed(t *testing.T) {
	c, err := Start(context.Background(), Config{Processes: true})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Members()[0]
	if m.Pid() == 0 {
		t.Fatal("no pid in process mode")
	}
	if err := m.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTLS(t *testing.T) {
	files, err := testcerts.Write(t.TempDir(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, processes := range []bool{false, true} {
		c, err := Start(context.Background(), Config{Processes: processes, TLS: &TLS{
			CertFile: files.ServerCert, KeyFile: files.ServerKey, TrustedCAFile: files.CA, ClientCertAuth: true,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.Endpoints()[0], "https://") {
			t.Errorf("endpoint %s is not https", c.Endpoints()[0])
		}
		c.Close()
	}
}

// TestJoinRemoveRestart adds a fresh member as a learner in its own data dir,
// promotes it once it caught up, removes an original member and restarts another.
func TestJoinRemoveRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member cluster")
	}
	ctx := context.Background()
	c, err := Start(ctx, Config{Members: 3, TickMs: 10, ElectionMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()[:2], DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, "/etcdperf/k", "v"); err != nil {
		t.Fatal(err)
	}
	m, err := c.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	// etcd refuses membership changes until every member has been connected for
	// 5 s (etcdserver's HealthInterval): "unhealthy cluster".
	var add *clientv3.MemberAddResponse
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if add, err = cli.MemberAddAsLearner(ctx, []string{m.PeerURL}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	var initial []string
	for _, x := range add.Members {
		name := x.Name
		if x.ID == add.Member.ID {
			name = m.Name
		}
		initial = append(initial, name+"="+x.PeerURLs[0])
	}
	if err := c.Join(m, strings.Join(initial, ",")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cli.MemberPromote(ctx, add.Member.ID)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("promote: %v (log %s)", err, m.LogFile)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.WaitHealthy(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m.DataDir == c.Members()[0].DataDir {
		t.Fatal("joined member shares a data dir")
	}

	// Restart m1, then remove m2 from the membership and the cluster.
	m1, m2 := c.Members()[1], c.Members()[2]
	if err := m1.StopGracefully(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(m1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx, m1); err != nil {
		t.Fatal(err)
	}
	ml, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ml.Members {
		if x.Name == m2.Name {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if _, err = cli.MemberRemove(ctx, x.ID); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal(err)
				}
			}
		}
	}
	if err := c.Remove(m2); err != nil {
		t.Fatal(err)
	}
	if len(c.Members()) != 3 {
		t.Fatalf("members = %d, want 3", len(c.Members()))
	}
	if _, err := os.Stat(m2.DataDir); !os.IsNotExist(err) {
		t.Errorf("data dir of the removed member left: %v", err)
	}
	ml, err = cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ml.Members {
		if x.IsLearner {
			t.Errorf("member %s is still a learner", x.Name)
		}
	}
	if len(ml.Members) != 3 {
		t.Errorf("member list has %d members, want 3", len(ml.Members))
	}
}
