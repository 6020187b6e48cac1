package conn

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestOpenLoad connects to a real embedded etcd as a command does: the target's
// description, its /metrics URLs, and the extra clients and direct connections
// of a load over two connections, all closed by release.
func TestOpenLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	cfg := valid()
	cfg.Endpoints, cfg.CommandTimeout = c.Endpoints(), 5*time.Second
	tg, clis, release, err := OpenLoad(ctx, &cfg, nil, io.Discard, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if tg.Info.Embedded || tg.Info.ClusterID == "" || tg.Info.ServerVersion == "" || len(tg.Info.Members) != 1 || !tg.Info.Members[0].IsLeader {
		t.Errorf("target %+v", tg.Info)
	}
	if len(tg.MetricsURLs) != 1 || !strings.HasSuffix(tg.MetricsURLs[0], "/metrics") {
		t.Errorf("metrics URLs %v", tg.MetricsURLs)
	}
	if len(clis) != 2 || clis[0] != tg.Client || clis[1] == tg.Client {
		t.Fatalf("clients %v: want the target's and one more", clis)
	}
	for i, cli := range clis {
		if _, err := cli.Put(ctx, "/conn-test/k", "v"); err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	if _, err := tg.Client.Delete(ctx, "/conn-test/k"); err != nil {
		t.Error(err)
	}
	if n := len(tg.Direct); n != 0 && n != 2 {
		t.Errorf("%d direct connections for 2 load connections", n)
	}

	// No endpoint answering: the probe's cause, within the dial timeout.
	cfg.Endpoints, cfg.DialTimeout = []string{"127.0.0.1:1"}, time.Second
	if _, err := Connect(ctx, &cfg, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "cannot reach etcd at 127.0.0.1:1") {
		t.Errorf("unreachable: %v", err)
	}
}
