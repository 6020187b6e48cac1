package measure

import (
	"context"
	"net/http"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// TestMeasureEmbedded drives one short paced put load against a real embedded
// etcd and checks what every command relies on: scrapes that bracket the run,
// the analysis stored in the run, the round trip, the host facts.
func TestMeasureEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and drives load")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{})
	cli := clustertest.Client(t, c)
	tg := &ClusterConn{Client: cli, HTTP: http.DefaultClient, Cluster: c,
		Info:        results.ClusterInfo{Endpoints: c.Endpoints(), Embedded: true, Members: []results.Member{{Name: "m0", ClientURLs: c.Endpoints()}}},
		MetricsURLs: []string{c.Endpoints()[0] + "/metrics"}}
	if _, err := cli.Get(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if !tg.Connected() {
		t.Error("not connected to a running etcd")
	}
	if rtt := StatusRTTMs(ctx, tg); rtt <= 0 || rtt > 1000 {
		t.Errorf("status round trip %v ms", rtt)
	}
	e, err := profiles.Load("check-perf-s")
	if err != nil {
		t.Fatal(err)
	}
	p := *e.Profile
	p.Rate, p.Clients, p.Connections, p.Duration, p.Warmup = 100, 4, 1, profiles.Duration(time.Second), 0
	w, cfg, err := profiles.Build(&p, []*clientv3.Client{cli}, "/etcdperf/measure-test/")
	if err != nil {
		t.Fatal(err)
	}
	cfg.KV = cli
	run := &results.Run{Version: results.Version, Command: "test", Target: tg.Info, Flags: map[string]string{}}
	m := Measure(ctx, tg, cfg, w, run, analyze.Options{}, Config{ScrapeEvery: time.Hour, DialTimeout: 5 * time.Second})
	if m.Err != nil {
		t.Fatal(m.Err)
	}
	if m.Run != run || len(run.Ops) == 0 || run.Ops[0].Requests == 0 {
		t.Fatalf("ops %+v", run.Ops)
	}
	phases := map[string]int{}
	for _, s := range run.Scrapes {
		if s.Error == "" {
			phases[s.Phase]++
		}
	}
	if phases[results.PhaseBefore] != 1 || phases[results.PhaseAfter] != 1 {
		t.Errorf("scrapes by phase %v: want one before and one after", phases)
	}
	if run.Host == nil || run.Host.DataDir != c.Dir() {
		t.Errorf("host facts %+v: want the embedded data dir %s", run.Host, c.Dir())
	}
	// The round trips the verdict used are kept in the run; a PING takes no
	// longer than a whole Status call over the same loopback.
	if n := run.Network; n == nil || n.Endpoint != c.Endpoints()[0] || n.StatusRTTMs <= 0 || n.PingRTTMs <= 0 || n.PingRTTMs > n.StatusRTTMs*10 {
		t.Errorf("round trips kept %+v", run.Network)
	}
	if run.Diagnosis == nil || run.Diagnosis.Verdict == nil || run.Diagnosis.Verdict.Status != m.Analysis.Verdict.Status || m.Analysis.Budget == nil {
		t.Errorf("diagnosis %+v, report verdict %+v", run.Diagnosis, m.Analysis.Verdict)
	}
}

func TestDataDir(t *testing.T) {
	if d := (&ClusterConn{}).DataDir(); d != "" {
		t.Errorf("remote target data dir %q", d)
	}
}

func TestReadMemberLimitsRemote(t *testing.T) {
	// A member on another host is left alone: its port here may be anyone's.
	run := &results.Run{Target: results.ClusterInfo{Members: []results.Member{{Name: "m0", ClientURLs: []string{"http://10.0.0.1:2379"}}}}}
	ReadMemberLimits(&ClusterConn{}, run)
	if m := run.Target.Members[0]; m.Pid != 0 {
		t.Errorf("remote member read: %+v", m)
	}
}

// TestReadRounds pairs reads on every endpoint of a real 3-member cluster for a
// second: each endpoint gets its own histogram of rounds, 10 a second on
// average, none of them near a second on a healthy loopback.
func TestReadRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 etcd members")
	}
	c := clustertest.Start(t, cluster.Config{Members: 3})
	cli := clustertest.Client(t, c)
	tg := &ClusterConn{Client: cli, Info: results.ClusterInfo{Endpoints: c.Endpoints()}}
	r := startRounds(context.Background(), tg, "/etcdperf/measure-test/"+readRoundKey)
	time.Sleep(time.Second)
	r.stop()
	run := &results.Run{}
	if err := r.fill(run); err != nil {
		t.Fatal(err)
	}
	if len(run.EndpointLoads) != 3 {
		t.Fatalf("endpoint loads %+v, want one per endpoint", run.EndpointLoads)
	}
	for _, e := range run.EndpointLoads {
		if e.ReadRounds < 4 || e.ReadRounds > 20 || e.ReadRoundMs == nil || e.ReadRoundMs.Max > 500 || e.ReadRoundHist == "" {
			t.Errorf("%s: %d rounds (%d unanswered), %+v; want about 10 under 500 ms", e.Endpoint, e.ReadRounds, e.ReadRoundsUnanswered, e.ReadRoundMs)
		}
	}
	if one := startRounds(context.Background(), &ClusterConn{Client: cli, Info: results.ClusterInfo{Endpoints: c.Endpoints()[:1]}}, readRoundKey); one != nil {
		t.Error("rounds on one endpoint: there is no round between members to time")
	}
}
