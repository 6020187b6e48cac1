package plan

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/profiles"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.6f, want %.6f", what, got, want)
	}
}

// TestKubeByHand checks the model against a hand computation for two clusters.
func TestKubeByHand(t *testing.T) {
	// 100 nodes, defaults: 3,000 pods, churn 3,000/6,000 = 0.5 pods/s, 3 apiservers.
	// updates: 100/10 node leases + 100/300 node status + 0.5×10 pod writes = 15.3333/s
	//   of (10×350 + 0.3333×10240 + 5×4096)/15.3333 = 1786.52 B
	// events 0.5×6 = 3/s; each apiserver 1/s, 60 per lease → 0.05 grants/s
	// lists 3/60 = 0.05/s of 3,000 pods, 6 pages
	// stored: 100×(10240+350) + 3000×4096 = 13,347,000 B over 3,200 objects;
	//   events 3×3600 = 10,800 × 1 KiB → live 24,406,200 B
	// writes 27,393.33 + 0.5×4096 + 3×1024 = 32,513.33 B/s; history 2×300 s → 19,508,000 B
	// db 43,914,200 B: 439,142 B per node, 2 GiB at 4,890 nodes.
	t.Run("100 nodes", func(t *testing.T) {
		tr := Kube(KubeCluster{Nodes: 100}, DefaultAssumptions())
		if tr.Pods != 3000 || tr.APIServers != 3 || tr.Objects != 3200 || tr.ListObjects != 3000 || tr.ListPages != 6 || tr.NodesAtQuota != 4890 {
			t.Errorf("pods %d apiservers %d objects %d list %d/%d pages, quota at %d nodes", tr.Pods, tr.APIServers, tr.Objects, tr.ListObjects, tr.ListPages, tr.NodesAtQuota)
		}
		near(t, "churn", tr.Churn, 0.5)
		near(t, "updates/s", tr.UpdatesPerS, 15+1.0/3)
		near(t, "update bytes", tr.UpdateBytes, (3500+10240.0/3+20480)/(15+1.0/3))
		near(t, "creates/s", tr.CreatesPerS, 0.5)
		near(t, "deletes/s", tr.DeletesPerS, 0.5)
		near(t, "events/s", tr.EventsPerS, 3)
		near(t, "events per lease", tr.EventsPerLease, 60)
		near(t, "grants/s", tr.LeaseGrantsPerS, 0.05)
		near(t, "lists/s", tr.ListsPerS, 0.05)
		near(t, "watch events/s", tr.WatchEventsPerS, 3*(15+1.0/3+4))
		near(t, "requests/s", tr.RequestsPerS, 15+1.0/3+4+0.1)
		near(t, "object bytes", tr.ObjectBytes, 13347000.0/3200)
		near(t, "events stored", tr.EventsStored, 10800)
		near(t, "live bytes", tr.LiveBytes, 24406200)
		near(t, "write bytes/s", tr.WriteBytesPerS, 3500+10240.0/3+20480+2048+3072)
		near(t, "history bytes", tr.HistoryBytes, 600*(3500+10240.0/3+20480+2048+3072))
		near(t, "db bytes", tr.DBBytes, 24406200+600*(3500+10240.0/3+20480+2048+3072))
	})
	// 1,000 nodes, 20,000 pods, churn 8/s, 2 apiservers.
	// updates: 100 + 3.3333 + 80 = 183.3333/s of (35,000 + 34,133.33 + 327,680)/183.3333 = 2164.44 B
	// events 48/s; each apiserver 24/s would put 1,440 on a lease in 60 s: capped at
	//   1,000 → 0.048 grants/s; lists 2/60/s of 20,000 pods, 40 pages
	// stored 1000×10,590 + 20,000×4096 = 92,510,000 B over 22,000 objects;
	//   events 48×3600 = 172,800 → live 269,457,200 B
	// writes 396,813.33 + 8×4096 + 48×1024 = 478,733.33 B/s; history 287,240,000 B
	// db 556,697,200 B: 2 GiB at 3,857 nodes.
	t.Run("1000 nodes", func(t *testing.T) {
		tr := Kube(KubeCluster{Nodes: 1000, Pods: 20000, Churn: 8, APIServers: 2}, DefaultAssumptions())
		if tr.Objects != 22000 || tr.ListPages != 40 || tr.NodesAtQuota != 3857 {
			t.Errorf("objects %d pages %d, quota at %d nodes", tr.Objects, tr.ListPages, tr.NodesAtQuota)
		}
		near(t, "updates/s", tr.UpdatesPerS, 183+1.0/3)
		near(t, "update bytes", tr.UpdateBytes, (35000+34133+1.0/3+327680)/(183+1.0/3))
		near(t, "events/s", tr.EventsPerS, 48)
		near(t, "events per lease", tr.EventsPerLease, 1000)
		near(t, "grants/s", tr.LeaseGrantsPerS, 0.048)
		near(t, "lists/s", tr.ListsPerS, 2.0/60)
		near(t, "watch events/s", tr.WatchEventsPerS, 2*(183+1.0/3+16+48))
		near(t, "requests/s", tr.RequestsPerS, 183+1.0/3+16+48+0.048+2.0/60)
		near(t, "live bytes", tr.LiveBytes, 269457200)
		near(t, "write bytes/s", tr.WriteBytesPerS, 396813+1.0/3+32768+49152)
		near(t, "db bytes", tr.DBBytes, 269457200+600*(396813+1.0/3+32768+49152))
	})
}

func TestKubeOverrides(t *testing.T) {
	as := DefaultAssumptions()
	if err := as.ParseOverrides("pod_bytes=8KiB, event_ttl_s=2h,lists_per_apiserver_per_min=0.5"); err != nil {
		t.Fatal(err)
	}
	if as.Get(PodBytes) != 8192 || as.Get(EventTTLS) != 7200 || as.Get(ListsPerMin) != 0.5 {
		t.Errorf("overrides: %g %g %g", as.Get(PodBytes), as.Get(EventTTLS), as.Get(ListsPerMin))
	}
	for _, a := range as {
		if (a.Key == PodBytes) != a.Overridden && a.Key != EventTTLS && a.Key != ListsPerMin {
			t.Errorf("%s overridden = %v", a.Key, a.Overridden)
		}
	}
	for _, bad := range []string{"pod_bytes", "nope=1", "pod_bytes=-1", "pod_bytes=x"} {
		if err := DefaultAssumptions().ParseOverrides(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestAssumptionsSourced: every number says where it comes from, and those that
// are etcdperf's own estimates say so.
func TestAssumptionsSourced(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range DefaultAssumptions() {
		if a.Source == "" || a.Unit == "" || a.Value <= 0 || seen[a.Key] {
			t.Errorf("%+v", a)
		}
		seen[a.Key] = true
		if a.Assumed != strings.HasPrefix(a.Source, "assumption") {
			t.Errorf("%s: assumed %v but source %q", a.Key, a.Assumed, a.Source)
		}
	}
}

func TestParseKubeCluster(t *testing.T) {
	c, err := ParseKubeCluster("nodes=200,pods=5000,churn=2.5,apiservers=2")
	if err != nil || c != (KubeCluster{Nodes: 200, Pods: 5000, Churn: 2.5, APIServers: 2}) {
		t.Errorf("%+v, %v", c, err)
	}
	for _, bad := range []string{"", "pods=10", "nodes=0", "nodes=x", "nodes=1,nodes=2", "nodes=1,zones=3", "nodes=1,churn=-1", "nodes"} {
		if _, err := ParseKubeCluster(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	s := KubeCluster{Nodes: 100, Pods: 4000, Churn: 2}.Scaled(300)
	if s.Nodes != 300 || s.Pods != 12000 || s.Churn != 6 {
		t.Errorf("scaled %+v", s)
	}
}

func FuzzParseKubeCluster(f *testing.F) {
	f.Add("nodes=200,pods=6000,churn=2,apiservers=3")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseKubeCluster(s)
		if err == nil && c.Nodes < 1 {
			t.Errorf("%q: %+v without nodes", s, c)
		}
	})
}

// TestKubeProfile: the step's profile is a valid profile whose paced rates are the model's.
func TestKubeProfile(t *testing.T) {
	as := DefaultAssumptions()
	for _, nodes := range []int{100, 5000} {
		tr := Kube(KubeCluster{Nodes: nodes}, as)
		s := KubeProfile(tr, as, 10*time.Second, 2*time.Second)
		if err := profiles.Validate(s.Profile); err != nil {
			t.Fatalf("%d nodes: %v", nodes, err)
		}
		p := s.Profile
		rates := map[string]float64{}
		for _, op := range p.Ops {
			rates[op.Op] = op.Ratio * p.Rate
		}
		near(t, "txn rate", rates[profiles.OpTxn], tr.UpdatesPerS)
		near(t, "create rate", rates[profiles.OpTxnCreate], tr.CreatesPerS)
		near(t, "lease calls", rates[profiles.OpLease], tr.EventsPerS+tr.LeaseGrantsPerS)
		near(t, "list rate", rates[profiles.OpList], tr.ListsPerS*s.ListScale)
		if s.FillObjects != min(tr.Objects, 30000) || p.Keys.Space != uint64(s.FillObjects) {
			t.Errorf("%d nodes: fill %d of %d objects", nodes, s.FillObjects, tr.Objects)
		}
	}
}

func TestSearch(t *testing.T) {
	for _, tc := range []struct {
		start, limit, knee int
		good, bad          int
		steps              []int
	}{
		{200, 5000, 1000, 1000, 1100, []int{200, 400, 800, 1600, 1200, 1000, 1100}},
		{200, 5000, 9999, 5000, 0, []int{200, 400, 800, 1600, 3200, 5000}},
		{200, 5000, 60, 57, 63, []int{200, 100, 50, 75, 63, 57}},
		{200, 5000, 0, 0, 1, []int{200, 100, 50, 25, 12, 6, 3, 1}},
	} {
		var steps []int
		good, bad, err := Search(tc.start, tc.limit, 3, 0.05, func(n int) (bool, error) {
			steps = append(steps, n)
			return n <= tc.knee, nil
		})
		if err != nil || good != tc.good || bad != tc.bad || !equal(steps, tc.steps) {
			t.Errorf("knee %d: good %d bad %d steps %v, want %d %d %v", tc.knee, good, bad, steps, tc.good, tc.bad, tc.steps)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestKubernetesProfileIsTheModel keeps the built-in kubernetes profile equal to
// the model at 500 nodes (within the rounding of its YAML).
func TestKubernetesProfileIsTheModel(t *testing.T) {
	e, err := profiles.Load("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	got := e.Profile
	as := DefaultAssumptions()
	want := KubeProfile(Kube(KubeCluster{Nodes: 500}, as), as, 30*time.Second, 5*time.Second).Profile
	close := func(what string, g, w float64) {
		if math.Abs(g-w) > 2e-3*math.Max(math.Abs(w), 1e-3) {
			t.Errorf("%s = %g in the profile, %g by the model", what, g, w)
		}
	}
	close("rate", got.Rate, want.Rate)
	close("value size", float64(got.Values.Size), float64(want.Values.Size))
	if got.Keys != want.Keys || got.Clients != want.Clients || got.Connections != want.Connections || got.CompactInterval != want.CompactInterval {
		t.Errorf("profile %+v %d %d %s, model %+v %d %d %s", got.Keys, got.Clients, got.Connections, got.CompactInterval, want.Keys, want.Clients, want.Connections, want.CompactInterval)
	}
	if len(got.Ops) != len(want.Ops) {
		t.Fatalf("ops %d, model %d", len(got.Ops), len(want.Ops))
	}
	for i, w := range want.Ops {
		g := got.Ops[i]
		close(w.Op+" ratio", g.Ratio, w.Ratio)
		g.Ratio, w.Ratio = 0, 0
		if g != w {
			t.Errorf("op %d: profile %+v, model %+v", i, g, w)
		}
	}
}

func TestKubeModelFile(t *testing.T) {
	as := DefaultAssumptions()
	if err := as.ParseFile([]byte("pod_bytes: 8KiB\nevent_ttl_s: 2h\napiservers: 5\n")); err != nil {
		t.Fatal(err)
	}
	if as.Get(PodBytes) != 8192 || as.Get(EventTTLS) != 7200 || Kube(KubeCluster{Nodes: 10}, as).APIServers != 5 {
		t.Errorf("file overrides: %g %g", as.Get(PodBytes), as.Get(EventTTLS))
	}
	for _, bad := range []string{"pod_bytes: [1]", "nope: 1", "pod_bytes: x", "- 1"} {
		if err := DefaultAssumptions().ParseFile([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
