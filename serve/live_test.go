package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// TestMain lets cluster.Start re-execute this test binary as an etcd member
// (the slow-disk test limits a member process of its own).
func TestMain(m *testing.M) {
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}

// connect opens a load target on eps as serve does (conn.OpenLoad).
func connect(t *testing.T, ctx context.Context, eps []string) *conn.Session {
	t.Helper()
	cfg := &conn.Config{Endpoints: eps, DialTimeout: 5 * time.Second, CommandTimeout: 5 * time.Second,
		KeepaliveTime: 2 * time.Second, KeepaliveTimeout: 6 * time.Second, InsecureTransport: true, InsecureDiscovery: true, EmbeddedMembers: 1}
	tg, clis, release, err := conn.OpenLoad(ctx, cfg, nil, io.Discard, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	if len(clis) != 1 {
		t.Fatalf("%d clients", len(clis))
	}
	return tg
}

// testProber probes tg with the tiny profile at rate for dur.
func testProber(t *testing.T, tg *conn.Session, prefix string, rate float64, dur time.Duration, keep *Keeper) *Prober {
	t.Helper()
	p, err := TinyProfile()
	if err != nil {
		t.Fatal(err)
	}
	p.Rate, p.Duration = rate, profiles.Duration(dur)
	return &Prober{Target: tg, Clients: []*clientv3.Client{tg.Client}, Profile: p, ID: Identity{Prefix: prefix, Instance: "test"}, LeaseTTL: time.Minute,
		NewRun: func(*conn.Session) *results.Run {
			return &results.Run{Version: results.Version, Command: "serve", StartedAt: time.Now().UTC(), Valid: true, Flags: map[string]string{}, Target: tg.Info}
		},
		P99: profiles.DefaultP99, P99Source: profiles.DefaultP99Source, CommandTimeout: 5 * time.Second, DialTimeout: 5 * time.Second, Keep: keep}
}

func keysUnder(t *testing.T, cli *clientv3.Client, prefix string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sample is the value of the series line (name and labels exactly as exposed).
func sample(text, series string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// putsServed reads how many Put calls the member has served, from its own
// /metrics: what the cluster saw, whatever the generator thinks it sent.
func putsServed(t *testing.T, c *cluster.Cluster) float64 {
	t.Helper()
	_, text := get(t, c.Endpoints()[0]+"/metrics")
	v, ok := sample(text, `grpc_server_handled_total{grpc_code="OK",grpc_method="Put",grpc_service="etcdserverpb.KV",grpc_type="unary"}`)
	if !ok {
		return 0 // no Put served yet
	}
	return v
}

// walSyncs reads how many WAL fsyncs the member has done.
func walSyncs(t *testing.T, c *cluster.Cluster) float64 {
	t.Helper()
	_, text := get(t, c.Endpoints()[0]+"/metrics")
	v, _ := sample(text, "etcd_disk_wal_fsync_duration_seconds_count")
	return v
}

// TestServeLive runs the canary against a real etcd for three ticks: /metrics,
// / and /healthz while it runs, the load the member served within what was
// configured, no key left under the prefix and none outside it touched, and
// only the newest run files kept.
func TestServeLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and probes it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	tg := connect(t, ctx, c.Endpoints())
	if _, err := tg.Client.Put(ctx, "/outside", "keep"); err != nil {
		t.Fatal(err)
	}
	const prefix = "/etcdperf/serve-test/"
	dir := t.TempDir()
	const rate, dur, probes = 20.0, 2 * time.Second, 3
	pr := testProber(t, tg, prefix, rate, dur, &Keeper{Dir: dir, N: 2})
	if err := pr.Validate(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	cn := &Canary{Exporter: NewExporter(BuildInfo{Version: "test"}, ""), Page: &Page{Target: strings.Join(c.Endpoints(), ",")},
		Schedule: Schedule{Every: 5 * time.Second, Probes: probes}}
	putsBefore, syncsBefore := putsServed(t, c), walSyncs(t, c)
	var during string
	var runs []*results.Run
	n := 0
	probe := func(ctx context.Context) Result {
		if n++; n == 2 { // the server is up and one probe is recorded
			var code int
			code, during = get(t, base+"/metrics")
			if code != 200 {
				t.Errorf("/metrics: %d", code)
			}
			if code, body := get(t, base+"/healthz"); code != 200 {
				t.Errorf("/healthz: %d %s", code, body)
			}
			if code, body := get(t, base+"/"); code != 200 || !strings.Contains(body, "<svg") || !strings.Contains(body, "bottleneck") {
				t.Errorf("/: %d\n%s", code, body)
			}
		}
		r := pr.Probe(ctx)
		if r.Run != nil {
			runs = append(runs, r.Run)
		}
		return r
	}
	if err := cn.Run(ctx, l, probe); err != nil {
		t.Fatal(err)
	}
	putsDone, syncs := putsServed(t, c)-putsBefore, walSyncs(t, c)-syncsBefore

	for _, want := range []string{`etcdperf_cluster_has_leader 1`, `etcdperf_probes_total{result="error"} 0`, `etcdperf_build_info{goversion="",revision="",version="test"} 1`} {
		if !strings.Contains(during, want+"\n") {
			t.Errorf("/metrics after one probe lacks %q:\n%s", want, grepLines(during, "etcdperf_"))
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		// Prometheus' own linter of exposition (names, units, HELP).
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(during)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	if v, ok := sample(during, `etcdperf_verdict_class{class="disk"}`); !ok || v == ClassUnknown {
		t.Errorf("disk class %v (present %v): the member's WAL fsync histogram grades it", v, ok)
	}
	if v, _ := sample(during, `etcdperf_probe_latency_seconds_count{op="write"}`); v < 1 {
		t.Errorf("no put latency after a probe:\n%s", grepLines(during, MetricLatency))
	}
	// Never more load than configured: each probe's requests are at most rate ×
	// duration, and the member served no more puts than that over all probes.
	limit := rate * dur.Seconds()
	for i, run := range runs {
		var reqs int64
		for _, op := range run.Ops {
			reqs += op.Requests
		}
		if float64(reqs) > limit || reqs == 0 {
			t.Errorf("probe %d sent %d requests; configured %g", i, reqs, limit)
		}
	}
	// One put a probe; the writes of the load are Txns.
	if len(runs) != probes || putsDone != probes {
		t.Errorf("%d probes; the member served %g puts, want one a probe", len(runs), putsDone)
	}
	// The writes (Txns whose compare fails) go through the WAL: about one fsync
	// each at this rate, fewer when etcd batches entries.
	var writes int64
	for _, run := range runs {
		for _, op := range run.Ops {
			if op.Op == OpWrite {
				writes += op.Requests
			}
		}
	}
	if syncs < float64(writes)/2 {
		t.Errorf("%g WAL fsyncs for %d writes: the writes did not go through the WAL", syncs, writes)
	}
	t.Logf("%d probes, member served %g puts; %d writes, %g WAL fsyncs", len(runs), putsDone, writes, syncs)
	if n := keysUnder(t, tg.Client, prefix); n != 1 {
		t.Errorf("%d keys under %s while the canary runs, want its one", n, prefix)
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, tg.Client, prefix); n != 0 {
		t.Errorf("%d keys left under %s after Close", n, prefix)
	}
	if n := keysUnder(t, tg.Client, "/outside"); n != 1 {
		t.Errorf("the key outside the prefix is gone")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "serve-*.json"))
	if len(files) != 2 {
		t.Errorf("run files %v, want the newest 2", files)
	}
}

// TestServeSafety: a key of someone else's in the canary's directory stops
// the load (a skip, not a crash) and survives; the key a killed run of the
// same canary left is its own, taken over and then deleted; a key put there mid-probe
// survives too; cancelling (SIGTERM) mid-probe stops it, and Close leaves no
// key of the canary's.
func TestServeSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and probes it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	tg := connect(t, ctx, c.Endpoints())

	const prefix = "/etcdperf/serve-safety/"
	pr := testProber(t, tg, prefix, 10, time.Second, nil)
	theirs := pr.ID.Dir() + "theirs"
	if _, err := tg.Client.Put(ctx, theirs, "x"); err != nil {
		t.Fatal(err)
	}
	e := NewExporter(BuildInfo{}, "")
	r := pr.Probe(ctx)
	e.Record(r)
	if r.Skipped != SkipForeign || r.ForeignN != 1 || len(r.Foreign) != 1 || r.Foreign[0] != theirs || r.Run != nil {
		t.Errorf("probe beside a foreign key: skipped %q, foreign %v (%d), ran %v, err %v", r.Skipped, r.Foreign, r.ForeignN, r.Run != nil, r.Err)
	}
	text := expose(t, e)
	for _, want := range []string{MetricForeignKeys + " 1", MetricSkipped + `{reason="foreign_keys"} 1`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(text, "etcdperf_"))
		}
	}
	if _, err := tg.Client.Delete(ctx, theirs); err != nil { // its owner takes it away
		t.Fatal(err)
	}

	// What a SIGKILLed run of the same instance leaves: its key, with the
	// marker, bound to the lease of its last probe.
	old, err := tg.Client.Grant(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Client.Put(ctx, pr.ID.Key(), pr.ID.Marker()+"2026-01-01T00:00:00Z", clientv3.WithLease(old.ID)); err != nil {
		t.Fatal(err)
	}
	if r := pr.Probe(ctx); !r.Ran() || r.ForeignN != 0 || r.Revisions != 1 {
		t.Errorf("probe beside its own leftover: ran %v, foreign %d, revisions %d, err %v", r.Ran(), r.ForeignN, r.Revisions, r.Err)
	}
	if _, err := tg.Client.Revoke(ctx, old.ID); err != nil { // the old lease expires
		t.Fatal(err)
	}
	if n := keysUnder(t, tg.Client, prefix); n != 1 {
		t.Errorf("%d keys after the leftover's lease ended, want the canary's key, now on its own lease", n)
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, tg.Client, prefix); n != 0 {
		t.Errorf("%d keys after Close, want none", n)
	}

	pr = testProber(t, tg, prefix, 20, time.Minute, nil) // a probe far longer than the test waits
	pctx, stop := context.WithCancel(ctx)
	done := make(chan Result, 1)
	go func() { done <- pr.Probe(pctx) }()
	for keysUnder(t, tg.Client, prefix) == 0 { // the probe's put is done
		select {
		case r := <-done:
			t.Fatalf("the probe ended before writing: %+v", r.Err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, err := tg.Client.Put(ctx, theirs, "mid-probe"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	stop()
	select {
	case r := <-done:
		if r.Run == nil || !r.Run.Interrupted {
			t.Errorf("cancelled probe: run %+v", r.Run)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the probe did not stop after its context was cancelled")
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := tg.Client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != theirs {
		t.Errorf("after the probe and Close: %v, want only %s (put mid-probe)", resp.Kvs, theirs)
	}
}

// TestServeNoLeader: member by member, a healthy cluster has three members up
// and one leader; with one member stopped, that member reads up 0 and the
// cluster is still probed; with two stopped, the survivor knows no leader:
// the probe sends no load and the leader series read 0.
func TestServeNoLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{Members: 3, Processes: true, TickMs: 10, ElectionMs: 100})
	tg := connect(t, ctx, c.Endpoints())
	pr := testProber(t, tg, "/etcdperf/serve-noleader/", 10, time.Second, nil)
	pr.CommandTimeout = 2 * time.Second
	e := NewExporter(BuildInfo{}, "three")
	r := pr.Probe(ctx)
	if !r.Ran() || !r.HasLeader {
		t.Fatalf("healthy cluster: ran %v, leader %v, err %v", r.Ran(), r.HasLeader, r.Err)
	}
	if up, leaders := memberCounts(r.Members); up != 3 || leaders != 1 {
		t.Errorf("healthy cluster: %d members up, %d leaders; want 3 and 1: %+v", up, leaders, r.Members)
	}
	stopped := c.Members()[1]
	stopped.Stop()
	r = pr.Probe(ctx)
	e.Record(r)
	text := expose(t, e)
	t.Logf("/metrics with member %s stopped:\n%s", stopped.Name, grepLines(text, "etcdperf_member_"))
	if up, _ := memberCounts(r.Members); up != 2 || !r.Ran() {
		t.Errorf("one member stopped: %d up, ran %v (err %v); want 2 and a probe", up, r.Ran(), r.Err)
	}
	if !strings.Contains(text, fmt.Sprintf(`%s{cluster="three",member=%q} 0`, MetricMemberUp, stopped.Name)+"\n") {
		t.Errorf("no up 0 for the stopped member %s", stopped.Name)
	}
	c.Members()[2].Stop()
	for i := 0; i < 20; i++ { // the survivor notices within a few election timeouts
		if r = pr.Probe(ctx); r.Skipped == SkipNoLeader {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.Skipped != SkipNoLeader || r.Run != nil {
		t.Fatalf("probe of a cluster without a leader: skipped %q, run %v, err %v", r.Skipped, r.Run != nil, r.Err)
	}
	e.Record(r)
	if v := value(t, e.hasLeader.WithLabelValues()); v != 0 {
		t.Errorf("%s = %g, want 0", MetricHasLeader, v)
	}
	if v := value(t, e.skipped.WithLabelValues(SkipNoLeader)); v != 1 {
		t.Errorf("skipped{no_leader} = %g, want 1", v)
	}
	if up, leaders := memberCounts(r.Members); up != 1 || leaders != 0 || slices.ContainsFunc(r.Members, func(m MemberState) bool { return m.HasLeader }) {
		t.Errorf("two members stopped: %d up, %d leaders: %+v; want the survivor alone, without a leader", up, leaders, r.Members)
	}
}

// memberCounts counts the members up and those that lead.
func memberCounts(ms []MemberState) (up, leaders int) {
	for _, m := range ms {
		if m.Up {
			up++
		}
		if m.IsLeader {
			leaders++
		}
	}
	return up, leaders
}
