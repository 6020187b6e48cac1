package bundle

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/results"
)

// Target is the cluster to bundle: a client that reached at least one member,
// and how to reach each member's /metrics.
type Target struct {
	Client    *clientv3.Client
	Endpoints []string
	HTTP      *http.Client
	// TLS is the client's TLS configuration, for the PINGs; nil for plain connections.
	TLS *tls.Config
	// MetricsURLs replace each member's client URL + /metrics when set.
	MetricsURLs []string
}

// Options bound what Live collects.
type Options struct {
	// Interval is the time between the two /metrics scrapes of every member.
	Interval time.Duration
	// Reads is the number of linearizable and of serializable reads timed per member.
	Reads int
	// Keys is KeysNone, KeysHashed or KeysPlain.
	Keys string
	// MaxKeys bounds the key names read for Keys.
	MaxKeys int
	// Timeout bounds each call to one member (etcdctl's --command-timeout).
	Timeout time.Duration
	// Rates are the throughputs the repair cost is computed with.
	Rates Rates
	// Tool and Flags are what the manifest records.
	Tool  results.Tool
	Flags map[string]string
	// Probe runs --probe's short check after the second scrape; nil without --probe.
	Probe func(context.Context) (*results.Run, error)
	// Log receives one line per step (stderr); nil is silent.
	Log io.Writer
}

// readKey is the key every timed read asks for: absent (the reads are
// CountOnly, so no value could come back even if it existed), under the prefix
// etcdperf writes under.
const readKey = "/etcdperf/bundle/read-probe"

// Live bundles a running cluster, read-only: the first /metrics scrape, then
// membership, each member's status and timed reads (one member at a time, so
// that a member that does not answer is a finding), the alarms and the key
// space, then the second scrape once Interval has passed since the first, the
// probe, host facts of local members, and the verdict. It fails only when the
// context ends; whatever a member does not answer is recorded.
func Live(ctx context.Context, t Target, o Options) (*Bundle, error) {
	start := time.Now().UTC()
	host, _ := os.Hostname()
	b := &Bundle{Manifest: Manifest{Kind: KindLive, Tool: o.Tool, CreatedAt: start, Host: host, Endpoints: t.Endpoints, Flags: o.Flags}}
	run := &results.Run{Version: results.Version, Tool: o.Tool, Command: "bundle", StartedAt: start, Valid: true,
		Target: results.ClusterInfo{Endpoints: t.Endpoints}, Flags: o.Flags}
	b.Run = run

	logf(o.Log, "membership")
	members := b.membership(ctx, t, o)
	urls := metricsURLs(t, members)
	logf(o.Log, "first /metrics scrape of %d member(s)", len(urls))
	for _, u := range urls {
		run.Scrapes = append(run.Scrapes, analyze.ScrapeOne(ctx, t.HTTP, u, results.PhaseBefore))
	}
	scraped := time.Now()
	for i := range members {
		logf(o.Log, "status and reads of %s", members[i].Endpoint)
		probeMember(ctx, t, &members[i], o)
	}
	run.Target.Members = targetMembers(members)
	run.Network = network(members)
	run.Alarms = alarms(ctx, t, o.Timeout)
	for _, a := range run.Alarms {
		for i := range members {
			if members[i].ID == a.Member {
				members[i].Alarms = append(members[i].Alarms, a.Type)
			}
		}
	}
	b.Data.Members = members
	for _, m := range members {
		if m.Up() && run.Target.ServerVersion == "" {
			run.Target.ServerVersion = m.Version
		}
	}
	if o.Keys != KeysNone {
		logf(o.Log, "key names (%s, at most %d)", o.Keys, o.MaxKeys)
		b.Data.Keys = readKeys(ctx, t.Client, o)
	}

	wait := max(o.Interval-time.Since(scraped), 0)
	logf(o.Log, "second /metrics scrape in %s", wait.Round(time.Second))
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(wait):
	}
	for _, u := range urls {
		run.Scrapes = append(run.Scrapes, analyze.ScrapeOne(ctx, t.HTTP, u, results.PhaseAfter))
	}
	run.EndedAt = time.Now().UTC()
	run.DurationS = run.EndedAt.Sub(scraped).Seconds()
	b.Data.WindowS = run.DurationS
	b.Data.Repair = liveRepair(run.Scrapes, members, o.Rates)

	if dir := localDataDir(members); dir != "" || anyLocal(members) {
		run.Host = hardware.Collect(hardware.Config{DataDir: dir})
	}
	if o.Probe != nil {
		logf(o.Log, "probe: check --load tiny")
		p, err := o.Probe(ctx)
		if err != nil {
			b.Manifest.Notes = append(b.Manifest.Notes, "--probe: "+err.Error())
		}
		b.Probe = p
	}
	rep, err := Judge(b)
	if err != nil {
		return nil, err
	}
	run.Diagnosis = rep.Diagnosis()
	return b, nil
}

// membership lists the members, linearizably, else from one member's own view,
// else as the endpoints given.
func (b *Bundle) membership(ctx context.Context, t Target, o Options) []MemberStatus {
	list := func(opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error) {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		return t.Client.MemberList(cctx, opts...)
	}
	ml, err := list()
	if err != nil {
		b.Data.MembershipError = err.Error()
		if ml, err = list(clientv3.WithSerializable()); err == nil {
			b.Data.MembershipSerializable = true
		}
	}
	var out []MemberStatus
	if err != nil {
		for _, ep := range t.Endpoints {
			out = append(out, MemberStatus{Endpoint: ep, ClientURLs: []string{ep}})
		}
		return out
	}
	b.Run.Target.ClusterID = fmt.Sprintf("%x", ml.Header.ClusterId)
	for _, m := range ml.Members {
		s := MemberStatus{ID: fmt.Sprintf("%x", m.ID), Name: m.Name, ClientURLs: m.ClientURLs, PeerURLs: m.PeerURLs, IsLearner: m.IsLearner}
		if len(m.ClientURLs) > 0 {
			s.Endpoint = m.ClientURLs[0]
		} else {
			s.Error = "the member has no client URL: it was added but never started"
		}
		out = append(out, s)
	}
	return out
}

// metricsURLs are --metrics-urls, else each member's client URL + /metrics.
func metricsURLs(t Target, members []MemberStatus) []string {
	if len(t.MetricsURLs) > 0 {
		return t.MetricsURLs
	}
	var out []string
	for _, m := range members {
		if m.Endpoint != "" {
			out = append(out, strings.TrimSuffix(m.Endpoint, "/")+"/metrics")
		}
	}
	return out
}

// probeMember asks one member for its status and times reads on it, over a
// connection of its own: a member that does not answer within the timeout gets
// its Error and nothing else.
func probeMember(ctx context.Context, t Target, m *MemberStatus, o Options) {
	if m.Endpoint == "" {
		return
	}
	conn, err := t.Client.Dial(m.Endpoint)
	if err != nil {
		m.Error = fmt.Sprintf("cannot connect: %v", err)
		return
	}
	defer conn.Close()
	mc, kv := pb.NewMaintenanceClient(conn), pb.NewKVClient(conn)
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	st, err := mc.Status(cctx, &pb.StatusRequest{})
	cancel()
	if err != nil {
		m.Error = fmt.Sprintf("status: %v", err)
		return
	}
	m.Version, m.Leader, m.IsLeader = st.Version, fmt.Sprintf("%x", st.Leader), st.Leader == st.Header.MemberId
	m.RaftTerm, m.RaftIndex, m.RaftAppliedIndex = st.RaftTerm, st.RaftIndex, st.RaftAppliedIndex
	m.DBSize, m.DBSizeInUse, m.Errors, m.IsLearner = st.DbSize, st.DbSizeInUse, st.Errors, st.IsLearner
	if m.ID == "" {
		m.ID = fmt.Sprintf("%x", st.Header.MemberId)
	}
	timed := func(serializable bool) *Latency {
		return timeCalls(ctx, o.Reads, o.Timeout, func(ctx context.Context) error {
			_, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(readKey), CountOnly: true, Serializable: serializable})
			return err
		})
	}
	m.Linearizable, m.Serializable = timed(false), timed(true)
	if s := timeCalls(ctx, 6, o.Timeout, func(ctx context.Context) error {
		_, err := mc.Status(ctx, &pb.StatusRequest{})
		return err
	}); s.Errors == 0 {
		m.StatusRTTMs = s.MinMs
	}
	m.PingRTTMs = measure.PingRTTMs(ctx, m.Endpoint, t.TLS)
}

// timeCalls times n calls, after one that warms the connection up.
func timeCalls(ctx context.Context, n int, timeout time.Duration, call func(context.Context) error) *Latency {
	l := &Latency{}
	var ms []float64
	for i := range n + 1 {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		began := time.Now()
		err := call(cctx)
		took := time.Since(began)
		cancel()
		if i == 0 {
			continue
		}
		if err != nil {
			if l.Errors == 0 {
				l.Error = err.Error()
			}
			l.Errors++
			continue
		}
		ms = append(ms, float64(took)/float64(time.Millisecond))
	}
	l.N = len(ms)
	if len(ms) == 0 {
		return l
	}
	slices.Sort(ms)
	at := func(q float64) float64 { return ms[min(len(ms)-1, int(q*float64(len(ms))))] }
	l.MinMs, l.P50Ms, l.P90Ms, l.MaxMs = ms[0], at(0.5), at(0.9), ms[len(ms)-1]
	return l
}

// targetMembers is the membership as the run file records it; a member that
// answered on a loopback URL is local, and its process's cgroup limits (which
// the analyzer grades it by) and data dir are read.
func targetMembers(ms []MemberStatus) []results.Member {
	var out []results.Member
	for i := range ms {
		m := &ms[i]
		rm := results.Member{ID: m.ID, Name: m.Name, ClientURLs: m.ClientURLs, PeerURLs: m.PeerURLs, IsLeader: m.IsLeader, IsLearner: m.IsLearner}
		if m.Up() && hardware.AllLoopback(m.ClientURLs) && hardware.ReadMember("", &rm, 0) == nil {
			m.Local, m.DataDir = true, rm.DataDir
		}
		out = append(out, rm)
	}
	return out
}

// network is the round trips the network class is judged by: the first member
// that answered, and every member's fastest Status call and median linearizable read.
func network(ms []MemberStatus) *results.Network {
	var n *results.Network
	for _, m := range ms {
		if !m.Up() || m.StatusRTTMs <= 0 {
			continue
		}
		if n == nil {
			n = &results.Network{Endpoint: m.Endpoint, StatusRTTMs: m.StatusRTTMs, PingRTTMs: m.PingRTTMs}
		}
		if m.Linearizable != nil && m.Linearizable.N > 0 && len(ms) > 1 {
			n.Endpoints = append(n.Endpoints, results.EndpointRound{Endpoint: m.Endpoint, StatusRTTMs: m.StatusRTTMs, ReadMs: m.Linearizable.MinMs})
		}
	}
	if n != nil && n.PingRTTMs > 0 {
		n.HostPingRTTMs = measure.HostPingRTTMs(context.Background())
	}
	return n
}

// alarms are the cluster's alarms; nil when they cannot be read.
func alarms(ctx context.Context, t Target, timeout time.Duration) []results.Alarm {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := t.Client.AlarmList(cctx)
	if err != nil {
		return nil
	}
	out := []results.Alarm{}
	for _, a := range resp.Alarms {
		out = append(out, results.Alarm{Member: fmt.Sprintf("%x", a.MemberID), Type: a.Alarm.String()})
	}
	return out
}

func anyLocal(ms []MemberStatus) bool {
	return slices.ContainsFunc(ms, func(m MemberStatus) bool { return m.Local })
}

// localDataDir is the data dir of the first local member whose dir is known:
// the disk the host facts describe.
func localDataDir(ms []MemberStatus) string {
	for _, m := range ms {
		if m.Local && m.DataDir != "" {
			return m.DataDir
		}
	}
	return ""
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "etcdperf bundle: "+format+"\n", a...)
	}
}
