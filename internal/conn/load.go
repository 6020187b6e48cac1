package conn

import (
	"context"
	"fmt"
	"io"
	"os"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// OpenLoad connects (or starts the embedded etcd, see Connect) and opens conns
// clients to drive load with: the target's own and conns-1 more, each with its
// own gRPC connection, and the target's direct load connections. release closes
// them all and stops an embedded cluster.
func OpenLoad(ctx context.Context, c *Config, stdin *os.File, stderr io.Writer, conns int) (t *Session, clis []*clientv3.Client, release func(), err error) {
	t, err = Connect(ctx, c, stdin, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	clis, err = Clients(c, t, conns)
	if err != nil {
		t.Close()
		return nil, nil, nil, err
	}
	release = func() {
		for _, c := range t.Direct {
			c.Close()
		}
		for _, c := range clis[1:] {
			c.Close()
		}
		t.Close()
	}
	if t.Direct, err = directConns(ctx, c, t, conns); err != nil {
		release()
		return nil, nil, nil, err
	}
	if want := c.Transport; want != "" && want != t.Transport {
		fmt.Fprintf(stderr, "etcdperf: --transport %s cannot carry these requests (a user's auth tokens under grpc-tuned, or endpoints of mixed or other schemes); they go over clientv3 (grpc)\n", want)
	}
	return t, clis, release, nil
}

// Clients returns conns clients: the target's own and conns-1 more with the same
// settings, each with its own gRPC connection.
func Clients(c *Config, t *Session, conns int) ([]*clientv3.Client, error) {
	clis := []*clientv3.Client{t.Client}
	if conns == 1 {
		return clis, nil
	}
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	cfg := c.ClientConfig(t.Info.Endpoints, tlsCfg, t.Client.Username, t.Client.Password)
	for len(clis) < conns {
		cli, err := clientv3.New(cfg)
		if err != nil {
			for _, cli := range clis[1:] {
				cli.Close()
			}
			return nil, fmt.Errorf("open connection %d of %d: %w", len(clis)+1, conns, err)
		}
		clis = append(clis, cli)
	}
	return clis, nil
}

// directConns opens conns direct load connections of c.Transport (see
// DialLoad) with the configuration of the clients, and sets t.Transport to the
// transport the loops use.
func directConns(ctx context.Context, c *Config, t *Session, conns int) ([]LoadConn, error) {
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	cfg := c.ClientConfig(t.Info.Endpoints, tlsCfg, t.Client.Username, t.Client.Password)
	var out []LoadConn
	t.Transport = TransportGRPC
	for range conns {
		cc, used, err := DialLoad(ctx, c.Transport, cfg)
		if err != nil || cc == nil {
			for _, cc := range out {
				cc.Close()
			}
			return nil, err
		}
		t.Transport = used
		out = append(out, cc)
	}
	return out, nil
}
