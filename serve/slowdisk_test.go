package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/promtest"
	"github.com/etcdperf/etcdperf/k8s"
)

// slowDiskIOPS is the write IOPS the disk's writers are throttled to: each
// WAL fsync then takes tens of milliseconds (the scenario matrix saw a p99 of
// about 98 ms at 100 IOPS under heavier load), over the 20 ms fail threshold.
const slowDiskIOPS = 20

// tick is one recorded probe: the disk class series after it, and /metrics.
type tick struct {
	disk    float64
	metrics string
	err     error
}

// TestSlowDiskCanary is the canary against a member on a loop device whose
// writes are throttled (a cgroup write IOPS limit, as the scenario matrix's disk rows):
// the disk verdict series turns to fail within two ticks after the throttle is
// applied and back to ok within two ticks after it is lifted, and a real
// Prometheus scraping serve with the rules k8s canary ships fires the disk alert.
func TestSlowDiskCanary(t *testing.T) {
	if testing.Short() {
		t.Skip("throttles a member's disk and runs Prometheus")
	}
	faults.RequireRoot(t)
	loop := faults.NewLoopExt4(t, 512<<20)
	cg := faults.NewCgroup(t, "blkio", "blkio.throttle.write_iops_device")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := clustertest.Start(t, cluster.Config{Dir: filepath.Join(loop.Mount, "etcd"), Processes: true})
	member := c.Members()[0]
	tg := connect(t, ctx, c.Endpoints())

	const every = 6 * time.Second
	pr := testProber(t, tg, "/etcdperf/serve-slowdisk/", 10, 2*time.Second, nil)
	// The canary's light fsync probe writes to the member's disk: the throttle
	// slows it too (this process joins the group), as a slow disk slows every
	// writer. It is the independent measurement the analyzer needs to blame the
	// disk rather than a busy host's CPU for slow WAL fsyncs.
	pr.DiskDir = filepath.Join(loop.Mount, "probe")
	if err := os.Mkdir(pr.DiskDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := pr.Validate(every); err != nil {
		t.Fatal(err)
	}
	rules, err := k8s.CanaryRulesFile(k8s.Canary{Name: "etcdperf-canary", Image: "etcdperf", Args: []string{"--endpoints=x"},
		Every: every, CPU: "1", Memory: "1Gi", P99: 100 * time.Millisecond, Cluster: "slow", MinFor: every})
	if err != nil {
		t.Fatal(err)
	}
	rulesPath := filepath.Join(t.TempDir(), "canary-rules.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cn := &Canary{Exporter: NewExporter(BuildInfo{Version: "test"}, "slow"), Page: &Page{}, Schedule: Schedule{Every: every}}
	srv := &http.Server{Handler: cn.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	base := "http://" + l.Addr().String()
	promURL := promtest.Start(t, promtest.Options{Target: strings.TrimPrefix(member.ClientURL, "http://"),
		Jobs: map[string]string{"etcdperf-canary": l.Addr().String()}, RuleFiles: []string{rulesPath}})
	pc, err := api.NewClient(api.Config{Address: promURL})
	if err != nil {
		t.Fatal(err)
	}
	prom := v1.NewAPI(pc)

	ticks := make(chan tick)
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(pctx, cn.Schedule, pr.Probe, func(r Result) {
			cn.Record(r)
			_, text := get(t, base+"/metrics")
			v, _ := sample(text, `etcdperf_verdict_class{class="disk",cluster="slow"}`)
			select {
			case ticks <- tick{disk: v, metrics: text, err: r.Err}:
			case <-pctx.Done():
			}
		})
	}()
	defer func() { stop(); <-done }()
	next := func(phase string, i int) tick {
		t.Helper()
		select {
		case tk := <-ticks:
			t.Logf("%s, tick %d: disk class %g (err %v)", phase, i, tk.disk, tk.err)
			return tk
		case <-ctx.Done():
			t.Fatalf("%s: no tick before the test's deadline", phase)
		}
		return tick{}
	}
	// within waits up to two ticks for the disk class to read want.
	within := func(phase string, want float64) tick {
		t.Helper()
		var tk tick
		for i := 1; i <= 2; i++ {
			if tk = next(phase, i); tk.disk == want {
				return tk
			}
		}
		t.Errorf("%s: disk class %g two ticks on, want %g:\n%s", phase, tk.disk, want, excerpt(tk.metrics))
		return tk
	}

	next("baseline", 1)
	if err := cg.Set("blkio.throttle.write_iops_device", fmt.Sprintf("%s %d", loop.MajMin, slowDiskIOPS)); err != nil {
		t.Skipf("cannot throttle the loop device: %v", err)
	}
	for _, pid := range []int{member.Pid(), os.Getpid()} {
		if err := cg.Add(pid); err != nil {
			t.Fatal(err)
		}
	}
	tk := within("throttled", ClassFail)
	t.Logf("/metrics while the disk is throttled:\n%s", excerpt(tk.metrics))
	// The disk alert fires in Prometheus: fail held for two periods (MinFor shortens the mixin's 10m).
	var fired *v1.Alert
	for i := 1; fired == nil && i <= 6; i++ {
		next("throttled, waiting for the alert", i)
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := prom.Alerts(actx)
		acancel()
		if err != nil {
			t.Fatalf("alerts: %v", err)
		}
		for _, a := range res.Alerts {
			if string(a.Labels["alertname"]) == k8s.AlertDiskFail && a.State == v1.AlertStateFiring {
				fired = &a
			}
		}
	}
	if fired == nil {
		t.Errorf("%s did not fire in Prometheus within six ticks of a failing disk", k8s.AlertDiskFail)
	} else {
		t.Logf("alert firing: %s %v since %s: %s", fired.Labels["alertname"], fired.Labels, fired.ActiveAt.UTC().Format(time.RFC3339), fired.Annotations["summary"])
	}

	for _, pid := range []int{member.Pid(), os.Getpid()} {
		if err := cg.Remove(pid); err != nil {
			t.Fatal(err)
		}
	}
	within("throttle lifted", ClassOK)
}

// excerpt is the canary's own series of /metrics, without the latency
// histogram of ranges.
func excerpt(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "etcdperf_") && !strings.Contains(l, `op="range"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
