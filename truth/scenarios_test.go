package truth

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/faults"
)

// scenario is one row of the matrix: a target, a fault of known cause and size
// (none for a baseline), and the etcdperf command that measures it.
type scenario struct {
	name string
	// class is the expected bottleneck; "" for a healthy baseline.
	class finding.Class
	// mild marks the barely noticeable intensity: "none" is right there too.
	mild bool
	// args are etcdperf's arguments (the endpoints come from setup).
	args []string
	// setup starts the target and makes the fault; it returns the extra
	// arguments (endpoints) or why the machine cannot make the fault.
	setup func(e *runEnv) (extra []string, skip string)
	// fixture: record the graded member's /metrics pair (-record).
	fixture bool
}

func (s *scenario) want() string {
	if s.class == "" {
		return finding.BottleneckNone
	}
	return string(s.class)
}

// Loads. Open loops at modest rates, a closed loop at one client: a healthy
// member on these two cores keeps up with all of them with room to spare.
var (
	dur     = []string{"--duration", "5s", "--warmup", "1s"}
	putOpen = cat([]string{"bench", "put", "--rate", "100", "--clients", "16"}, dur)
)

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// scenarios is the matrix. Intensities run from barely noticeable (mild) to
// severe, sized so each grade has a wide margin to its threshold.
func scenarios() []*scenario {
	var s []*scenario
	add := func(sc *scenario) { s = append(s, sc) }

	// Healthy baselines of every workload shape: pass, bottleneck none, no warning.
	for _, b := range []struct {
		name string
		args []string
	}{
		{"put-open", cat([]string{"bench", "put", "--rate", "300", "--clients", "16"}, dur)},
		{"put-closed", cat([]string{"bench", "put", "--clients", "1"}, dur)},
		{"range-open", cat([]string{"bench", "range", "--keys", "1000", "--rate", "500", "--clients", "8"}, dur)},
		{"range-closed", cat([]string{"bench", "range", "--keys", "1000", "--clients", "1"}, dur)},
		{"watch", cat([]string{"bench", "watch", "--watchers", "10", "--rate", "100"}, dur)},
		{"mixed", cat([]string{"bench", "mixed", "--rate", "300", "--clients", "8"}, dur)},
		{"txn", cat([]string{"bench", "txn", "--rate", "200", "--clients", "8"}, dur)},
	} {
		add(&scenario{name: "baseline/embedded/" + b.name, args: b.args, fixture: b.name == "put-open"})
	}
	add(&scenario{name: "baseline/separate/put-open", args: cat([]string{"bench", "put", "--rate", "300", "--clients", "16"}, dur), setup: plain(1)})
	add(&scenario{name: "baseline/separate/range-closed", args: cat([]string{"bench", "range", "--keys", "1000", "--clients", "1"}, dur), setup: plain(1)})
	add(&scenario{name: "baseline/3m/put-open", args: cat([]string{"bench", "put", "--rate", "200", "--clients", "16"}, dur), setup: plain(3)})

	// disk: the member's writes throttled (blkio write IOPS) on the loop device.
	for _, d := range []struct {
		iops int
		mild bool
	}{{1000, true}, {200, true}, {80, false}} {
		add(&scenario{name: fmt.Sprintf("disk/1m/iops=%d", d.iops), class: finding.ClassDisk, mild: d.mild, args: putOpen,
			setup: throttle(1, "", d.iops), fixture: d.iops == 80})
		add(&scenario{name: fmt.Sprintf("disk/3m/leader/iops=%d", d.iops), class: finding.ClassDisk, mild: d.mild, args: putOpen,
			setup: throttle(3, "leader", d.iops)})
	}
	add(&scenario{name: "disk/3m/follower/iops=80", class: finding.ClassDisk, args: putOpen, setup: throttle(3, "follower", 80)})

	// cpu: the member under a CFS quota, a closed loop that wants all it can get.
	cpuLoad := cat([]string{"bench", "put", "--clients", "8"}, dur)
	for _, q := range []struct {
		cores float64
		mild  bool
	}{{0.5, true}, {0.25, false}, {0.1, false}} {
		add(&scenario{name: fmt.Sprintf("cpu/1m/quota=%.2f", q.cores), class: finding.ClassCPU, mild: q.mild, args: cpuLoad,
			setup: cpuQuota(1, "", q.cores), fixture: q.cores == 0.1})
		add(&scenario{name: fmt.Sprintf("cpu/3m/leader/quota=%.2f", q.cores), class: finding.ClassCPU, mild: q.mild, args: cpuLoad,
			setup: cpuQuota(3, "leader", q.cores)})
	}
	add(&scenario{name: "cpu/3m/follower/quota=0.10", class: finding.ClassCPU, args: cpuLoad, setup: cpuQuota(3, "follower", 0.1)})

	// memory: a limit at a multiple of the working set (under it etcd is killed, not slowed).
	memLoad := cat([]string{"bench", "put", "--val-size", "32768", "--rate", "20", "--clients", "4"}, dur)
	for _, m := range []struct {
		factor float64
		mild   bool
	}{{3, true}, {1.6, false}, {1.15, false}} {
		add(&scenario{name: fmt.Sprintf("memory/1m/limit=%.2fx", m.factor), class: finding.ClassMemory, mild: m.mild, args: memLoad,
			setup: memLimit(m.factor)})
	}

	// value size: the workload itself.
	for _, v := range []int{80_000, 300_000, 1_000_000} {
		args := cat([]string{"bench", "put", "--val-size", fmt.Sprint(v), "--rate", "20", "--clients", "4"}, dur)
		add(&scenario{name: fmt.Sprintf("value-size/1m/%dB", v), class: finding.ClassValueSize, args: args, setup: plain(1), fixture: v == 300_000})
		add(&scenario{name: fmt.Sprintf("value-size/3m/%dB", v), class: finding.ClassValueSize, args: args, setup: plain(3)})
	}

	// range size: ranges over many keys (the widest responses exceed gRPC's 4 MiB default).
	for _, k := range []int{2_000, 12_000, 40_000} {
		args := cat([]string{"bench", "range", "--keys", fmt.Sprint(k), "--range-width", fmt.Sprint(k), "--clients", "1"}, dur)
		add(&scenario{name: fmt.Sprintf("range-size/1m/%dkeys", k), class: finding.ClassRangeSize, args: args, setup: plain(1), fixture: k == 12_000})
		add(&scenario{name: fmt.Sprintf("range-size/3m/%dkeys", k), class: finding.ClassRangeSize, args: args, setup: plain(3)})
	}

	// quota: --quota-backend-bytes against ~18 MB of 60,000-byte values.
	quotaLoad := []string{"bench", "put", "--val-size", "60000", "--rate", "100", "--clients", "8", "--total", "300"}
	for _, q := range []struct {
		mib  int
		mild bool
	}{{64, true}, {16, false}, {6, false}} {
		for _, n := range []int{1, 3} {
			add(&scenario{name: fmt.Sprintf("quota/%dm/%dMiB", n, q.mib), class: finding.ClassQuota, mild: q.mild, args: quotaLoad,
				setup: withArgs(n, "--quota-backend-bytes", fmt.Sprint(q.mib<<20))})
		}
	}

	// network: a delay proxy between client and leader, each way.
	for _, d := range []struct {
		ms   int
		mild bool
	}{{1, true}, {5, false}, {25, false}} {
		for _, n := range []int{1, 3} {
			add(&scenario{name: fmt.Sprintf("network/%dm/client-delay=%dms", n, d.ms), class: finding.ClassNetwork, mild: d.mild, args: putOpen,
				setup: clientDelay(n, time.Duration(d.ms)*time.Millisecond)})
		}
	}

	// network: a delay proxy in front of a member's peer URL. On the leader every
	// write's replication pays it; on a follower the other follower keeps the
	// quorum, and etcd samples peer RTT only every 30 s: mild (may go unseen).
	for _, d := range []struct {
		ms   int
		mild bool
	}{{2, true}, {10, false}, {30, false}} {
		add(&scenario{name: fmt.Sprintf("network/3m/leader/peer-delay=%dms", d.ms), class: finding.ClassNetwork, mild: d.mild, args: putOpen,
			setup: peerDelay("leader", time.Duration(d.ms)*time.Millisecond)})
	}
	add(&scenario{name: "network/3m/follower/peer-delay=10ms", class: finding.ClassNetwork, mild: true, args: putOpen, setup: peerDelay("follower", 10*time.Millisecond)})
	return s
}

// runEnv is one scenario's target.
type runEnv struct {
	t       *testing.T
	h       *harness
	dataDir string
	c       *cluster.Cluster
	cli     *clientv3.Client
	// graded is the /metrics member name (host:port) the fixture records.
	graded string
}

func (e *runEnv) close() {
	if e.cli != nil {
		e.cli.Close()
	}
	if e.c != nil {
		e.c.Close()
	}
}

// start starts n members as processes of their own in the scenario's folder. A
// start that fails is tried again in a fresh folder, twice: on a busy machine a
// member can lose the free port it was given to another process before it binds.
func (e *runEnv) start(n int, extra ...string) error {
	var c *cluster.Cluster
	var err error
	for attempt := range 3 {
		dir := filepath.Join(e.dataDir, fmt.Sprintf("try%d", attempt))
		c, err = cluster.Start(context.Background(), cluster.Config{Dir: dir, Members: n, Processes: true, ExtraArgs: extra})
		if err == nil {
			break
		}
		e.t.Logf("start %d member(s), attempt %d: %v", n, attempt+1, err)
	}
	if err != nil {
		return err
	}
	e.c = c
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	e.cli = cli
	e.graded = hostOf(c.Members()[0].ClientURL)
	return nil
}

func hostOf(u string) string { return strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://") }

// endpoints are the arguments that point etcdperf at the started cluster.
func (e *runEnv) endpoints() []string {
	return []string{"--endpoints", strings.Join(e.c.Endpoints(), ",")}
}

// member is the leader or a follower ("" is the first member).
func (e *runEnv) member(where string) (*cluster.Member, error) {
	ms := e.c.Members()
	if where == "" {
		return ms[0], nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, m := range ms {
		st, err := e.cli.Status(ctx, m.ClientURL)
		if err != nil {
			return nil, err
		}
		if (st.Leader == st.Header.MemberId) == (where == "leader") {
			e.graded = hostOf(m.ClientURL)
			return m, nil
		}
	}
	return nil, fmt.Errorf("no %s among %d members", where, len(ms))
}

func plain(n int) func(*runEnv) ([]string, string) {
	return withArgs(n)
}

func withArgs(n int, etcdArgs ...string) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n, etcdArgs...); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// throttle limits one member's write IOPS on the loop device.
func throttle(n int, where string, iops int) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		cg := faults.NewCgroup(e.t, "blkio", "blkio.throttle.write_iops_device")
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := cg.Set("blkio.throttle.write_iops_device", fmt.Sprintf("%s %d", e.h.loop.MajMin, iops)); err != nil {
			return nil, err.Error()
		}
		if err := cg.Add(m.Pid()); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// cpuQuota limits one member to cores of CPU time.
func cpuQuota(n int, where string, cores float64) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		cg := faults.NewCgroup(e.t, "cpu", "cpu.cfs_quota_us")
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := cg.Set("cpu.cfs_period_us", "100000"); err != nil {
			return nil, err.Error()
		}
		if err := cg.Set("cpu.cfs_quota_us", fmt.Sprint(int(cores*100_000))); err != nil {
			return nil, err.Error()
		}
		if err := cg.Add(m.Pid()); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// memLimit starts a member inside a memory cgroup, grows its working set (3,000
// puts of 32 KiB: the raft log keeps them in memory), and sets the limit to
// factor times its peak RSS: near the working set, never under it.
func memLimit(factor float64) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		cg := faults.NewCgroup(e.t, "memory", "memory.limit_in_bytes")
		// A child is charged to its parent's cgroup from its first page: join for the start only.
		if err := cg.Add(os.Getpid()); err != nil {
			return nil, "cannot join a memory cgroup: " + err.Error()
		}
		err := e.start(1)
		if rerr := cg.Remove(os.Getpid()); rerr != nil {
			e.t.Fatal(rerr)
		}
		if err != nil {
			e.t.Fatal(err)
		}
		val := strings.Repeat("m", 32<<10)
		ctx := context.Background()
		for i := 0; i < 3000; i += 40 { // 40 × 32 KiB: under the 1.5 MiB request limit
			var ops []clientv3.Op
			for j := i; j < i+40; j++ {
				ops = append(ops, clientv3.OpPut(fmt.Sprintf("/preload/%06d", j), val))
			}
			if _, err := e.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
				e.t.Fatal(err)
			}
		}
		text, err := analyze.Fetch(ctx, nil, e.c.Endpoints()[0]+"/metrics")
		if err != nil {
			e.t.Fatal(err)
		}
		s, err := analyze.Parse(text)
		if err != nil {
			e.t.Fatal(err)
		}
		rss, ok := s.Value("process_resident_memory_bytes", nil)
		if !ok {
			e.t.Fatal("no process_resident_memory_bytes")
		}
		limit := int64(rss*factor) &^ 4095
		if err := cg.Set("memory.limit_in_bytes", fmt.Sprint(limit)); err != nil {
			return nil, err.Error()
		}
		e.t.Logf("member RSS %.0f MiB after the preload; limit %.0f MiB", rss/(1<<20), float64(limit)/(1<<20))
		return e.endpoints(), ""
	}
}

// clientDelay puts a delay proxy between etcdperf and the leader; /metrics are
// scraped direct (the delay is what is measured, not how the metrics travel).
func clientDelay(n int, d time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		where := ""
		if n > 1 {
			where = "leader"
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		proxy := faults.DelayProxy(e.t, hostOf(m.ClientURL), d)
		var metrics []string
		for _, ep := range e.c.Endpoints() {
			metrics = append(metrics, ep+"/metrics")
		}
		return []string{"--endpoints", "http://" + proxy, "--metrics-urls", strings.Join(metrics, ",")}, ""
	}
}

// peerDelay advertises one member's peer URL as a delay proxy in front of its
// peer port (MemberUpdate, the real API) and resets the connections the others
// had opened to it directly, so they redial through the proxy.
func peerDelay(where string, d time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if _, err := exec.LookPath("ss"); err != nil {
			return nil, "ss (iproute2) is needed to reset peer connections: " + err.Error()
		}
		if err := e.start(3); err != nil {
			e.t.Fatal(err)
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		list, err := e.cli.MemberList(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		var id uint64
		for _, mm := range list.Members {
			if mm.Name == m.Name {
				id = mm.ID
			}
		}
		pu, err := url.Parse(m.PeerURL)
		if err != nil {
			e.t.Fatal(err)
		}
		proxy := "http://" + faults.DelayProxy(e.t, pu.Host, d)
		if _, err := e.cli.MemberUpdate(ctx, id, []string{proxy}); err != nil {
			e.t.Fatalf("advertise %s's peer URL as %s: %v", m.Name, proxy, err)
		}
		// Every member must have applied the change before the connections are
		// reset, or one would redial the old, direct URL.
		if err := faults.PeerURLApplied(e.c.Endpoints(), id, proxy); err != nil {
			e.t.Fatal(err)
		}
		if out, err := exec.Command("ss", "-K", "dst", pu.Hostname(), "dport", "=", ":"+pu.Port()).CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("cannot reset the direct peer connections (ss -K): %v: %s", err, out)
		}
		// Wait until a write commits again through the redialed links.
		for i := 0; i < 50; i++ {
			if _, err := e.cli.Put(ctx, "/truth-ready", "1"); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		return e.endpoints(), ""
	}
}
