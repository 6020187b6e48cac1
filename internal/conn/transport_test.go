package conn

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/internal/nullkv"
)

// TestDialLoad: each --transport opens its own kind of load connection, and
// names the transport the request loops then use: clientv3's (grpc) for grpc
// itself and wherever a direct connection must not be used (a user's tokens).
func TestDialLoad(t *testing.T) {
	s, err := nullkv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := clientv3.Config{Endpoints: []string{s.URL()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	user := cfg
	user.Username, user.Password = "u", "p"
	for _, tc := range []struct {
		transport string
		cfg       clientv3.Config
		conn      bool
		used      string
	}{
		{TransportLean, cfg, true, TransportLean},
		{"", cfg, true, TransportLean}, // a Config without the flag
		{TransportGRPCTuned, cfg, true, TransportGRPCTuned},
		{TransportGRPC, cfg, false, TransportGRPC},
		{TransportLean, user, false, TransportGRPC},
		{TransportGRPCTuned, user, false, TransportGRPC},
	} {
		cc, used, err := DialLoad(context.Background(), tc.transport, tc.cfg)
		if err != nil || (cc != nil) != tc.conn || used != tc.used {
			t.Errorf("%q (user %q): connection %v, used %q, %v; want a connection %v, %q", tc.transport, tc.cfg.Username, cc != nil, used, err, tc.conn, tc.used)
		}
		if cc == nil {
			continue
		}
		cc.Close()
	}
}
