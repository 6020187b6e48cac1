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
