package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/etcdctl"
)

// ErrNoEndpoints is ConnectAny's refusal when the flags name no cluster.
var ErrNoEndpoints = errors.New("no --endpoints (or --discovery-srv) given")

// ConnectAny reaches a cluster of which some members may be down, for a command
// that describes the cluster rather than loads it (bundle): one answering
// endpoint is enough, no member's status is asked, and it never starts an
// embedded etcd (ErrNoEndpoints). The session's Info holds the endpoints only.
func ConnectAny(ctx context.Context, c *Config, stdin *os.File, stderr io.Writer) (*Session, error) {
	eps := c.Endpoints
	if c.DiscoverySrv != "" {
		found, err := etcdctl.Lookup(c.DiscoverySrv, c.DiscoverySrvName, c.InsecureDiscovery, stderr)
		if err != nil && len(eps) == 0 {
			return nil, err
		}
		if len(found) > 0 {
			eps = found
		}
	}
	if len(eps) == 0 {
		return nil, ErrNoEndpoints
	}
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	user, pass, err := c.Credentials(stdin, stderr)
	if err != nil {
		return nil, err
	}
	if err := Probe(ctx, eps, tlsCfg, c.DialTimeout); err != nil {
		return nil, err
	}
	cli, err := clientv3.New(c.ClientConfig(eps, tlsCfg, user, pass))
	if err != nil {
		return nil, fmt.Errorf("cannot reach etcd at %s: %w", strings.Join(eps, ","), err)
	}
	t := &Session{}
	t.Client, t.TLS, t.MetricsURLs = cli, tlsCfg, c.MetricsURLs
	t.Info.Endpoints = eps
	t.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	return t, nil
}
