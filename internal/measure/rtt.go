package measure

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"github.com/etcdperf/etcdperf/results"
)

// RoundTrips measures the baselines the network class is judged by, to the
// first endpoint: the Status round trip (a whole gRPC request that does almost
// no server work) and the HTTP/2 PING round trip on a connection of its own (no
// gRPC or etcd code handles a PING, so it is the network and the kernels
// alone), and with the PING the same PING to this host's own loopback (the
// kernels' and wake-ups' part). nil when neither could be measured.
func RoundTrips(ctx context.Context, t *ClusterConn) *results.Network {
	if len(t.Info.Endpoints) == 0 {
		return nil
	}
	n := &results.Network{Endpoint: t.Info.Endpoints[0], StatusRTTMs: StatusRTTMs(ctx, t), PingRTTMs: PingRTTMs(ctx, t.Info.Endpoints[0], t.TLS)}
	if n.StatusRTTMs <= 0 && n.PingRTTMs <= 0 {
		return nil
	}
	if n.PingRTTMs > 0 {
		n.HostPingRTTMs = HostPingRTTMs(ctx)
	}
	return n
}

// PingRTTMs is the fastest HTTP/2 PING round trip to endpoint over three
// connections of its own, two PINGs on each after one to warm it; TLS (with
// ALPN h2) for an https endpoint, or any endpoint when tlsCfg is set. 0 when it
// cannot be measured. Three PINGs a connection: a gRPC server (etcd's) answers
// a fourth on a connection with no stream by closing it (gRPC's keepalive
// enforcement, too_many_pings).
func PingRTTMs(ctx context.Context, endpoint string, tlsCfg *tls.Config) float64 {
	best := 0.0
	for range 3 {
		if v := pingConn(ctx, endpoint, tlsCfg); v > 0 && (best == 0 || v < best) {
			best = v
		}
	}
	return best
}

// pingConn is the faster of two PINGs on a new connection, after a warm one.
func pingConn(ctx context.Context, endpoint string, tlsCfg *tls.Config) float64 {
	host, secure := endpoint, tlsCfg != nil
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return 0
		}
		host, secure = u.Host, u.Scheme == "https" || (tlsCfg != nil && u.Scheme != "http")
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var c net.Conn
	var err error
	if secure {
		cfg := &tls.Config{}
		if tlsCfg != nil {
			cfg = tlsCfg.Clone()
		}
		cfg.NextProtos = []string{http2.NextProtoTLS}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(host)
		}
		c, err = (&tls.Dialer{Config: cfg}).DialContext(dctx, "tcp", host)
	} else {
		c, err = (&net.Dialer{}).DialContext(dctx, "tcp", host)
	}
	if err != nil {
		return 0
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	} else {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	// The client preface and SETTINGS, then PINGs one at a time; the server's
	// SETTINGS are acknowledged as any HTTP/2 client does.
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return 0
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return 0
	}
	var rtts []float64
	for i := range 3 {
		data := [8]byte{byte(i + 1)}
		start := time.Now()
		if fr.WritePing(false, data) != nil {
			return 0
		}
		for acked := false; !acked; {
			f, err := fr.ReadFrame()
			if err != nil {
				return 0
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() && fr.WriteSettingsAck() != nil {
					return 0
				}
			case *http2.PingFrame:
				acked = f.IsAck() && f.Data == data
			case *http2.GoAwayFrame:
				return 0
			}
		}
		rtts = append(rtts, float64(time.Since(start))/float64(time.Millisecond))
	}
	return slices.Min(rtts[1:])
}

// HostPingRTTMs is PingRTTMs to a PING echo on this host's loopback, on a
// thread of its own in this process: what a round trip costs the kernel and
// the thread wake-ups at both ends, with no network between them, measured the
// same way and at the same time as the round trip to the cluster. No network
// change removes that part. 0 when it cannot be measured.
func HostPingRTTMs(ctx context.Context) float64 {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go echoPings(c)
		}
	}()
	return PingRTTMs(ctx, l.Addr().String(), nil)
}

// echoPings answers a client's PINGs and SETTINGS as an HTTP/2 server does,
// until the client closes the connection. Its own thread: a server in another
// process is woken on one of its own, not on the client's. Unlocked before it
// returns: a goroutine that ends locked ends its thread, and a child process
// that thread started (an embedded etcd member) dies with it (Pdeathsig).
func echoPings(c net.Conn) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		}
	}
}
