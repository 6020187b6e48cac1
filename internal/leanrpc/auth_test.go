package leanrpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestEtcdAuth: against an etcd with auth enabled, a Conn with a user
// authenticates and sends its token with each call; a token the server
// refuses as invalid is replaced and the call made again, once, as clientv3
// does; a wrong password fails Dial, and a
// Conn without a user gets etcd's refusal.
func TestEtcdAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := clustertest.Start(t, cluster.Config{})
	cli := clustertest.Client(t, cl)
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	addr := strings.TrimPrefix(cl.Endpoints()[0], "http://")
	o := opts()
	o.Username, o.Password = "root", "rootpw"
	c, err := Dial(ctx, []string{addr}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	put := func() (int64, error) {
		var r Retries
		err := c.Invoke(WithRetries(ctx, &r), "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/auth"), Value: []byte("v")}, &pb.PutResponse{})
		return r.Load(), err
	}
	if n, err := put(); err != nil || n != 0 {
		t.Fatalf("put with a token: %v after %d retries", err, n)
	}

	bogus := "bogus.1"
	c.opts.token.Store(&bogus)
	if n, err := put(); err != nil || n != 1 {
		t.Errorf("put with an invalid token: %v after %d retries, want success after a new token and 1 retry", err, n)
	}

	o.Password = "wrong"
	if c, err := Dial(ctx, []string{addr}, o); err == nil {
		c.Close()
		t.Error("Dial with a wrong password succeeded")
	} else if !errors.Is(rpctypes.Error(errors.Unwrap(err)), rpctypes.ErrAuthFailed) {
		t.Errorf("Dial with a wrong password: %v, want %v", err, rpctypes.ErrAuthFailed)
	}
	anon := dial(t, addr)
	err = anon.Invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("/etcdperf/auth")}, &pb.PutResponse{})
	if !errors.Is(rpctypes.Error(err), rpctypes.ErrUserEmpty) {
		t.Errorf("put without a user: %v, want %v", err, rpctypes.ErrUserEmpty)
	}
}
