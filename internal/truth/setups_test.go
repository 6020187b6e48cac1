package truth

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/units"
)

// remoteMember starts one member in a network namespace of its own with env
// added to its environment.
func remoteMember(env []string) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if _, err := e.startRemote(env); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// remoteThrottle limits a remote member's write IOPS on the loop device.
func remoteThrottle(iops int) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		cg := faults.NewCgroup(e.t, "blkio", "blkio.throttle.write_iops_device")
		r, err := e.startRemote(nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := cg.Set("blkio.throttle.write_iops_device", fmt.Sprintf("%s %d", e.loop.MajMin, iops)); err != nil {
			return nil, err.Error()
		}
		if err := cg.Add(r.pid()); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// remoteMemory starts a remote member with GOMEMLIMIT at limit (what a container
// runtime's memory limit becomes for a Go server) and grows its working set with
// 32 KiB puts, which the raft log keeps in memory, until its RSS is 85% of the
// limit: over the memory rule's fail level, under the limit itself.
func remoteMemory(limit int64) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		r, err := e.startRemote([]string{fmt.Sprintf("GOMEMLIMIT=%dB", limit)})
		if err != nil {
			e.t.Fatal(err)
		}
		val := strings.Repeat("m", 32<<10)
		ctx := context.Background()
		rss := 0.0
		for i := 0; i < 9000; i += 40 { // 40 × 32 KiB: under the 1.5 MiB request limit
			var ops []clientv3.Op
			for j := i; j < i+40; j++ {
				ops = append(ops, clientv3.OpPut(fmt.Sprintf("/preload/%06d", j), val))
			}
			if _, err := e.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
				e.t.Fatal(err)
			}
			if rss = memberRSS(e, r.url); rss >= 0.85*float64(limit) {
				break
			}
		}
		e.t.Logf("remote member RSS %.0f MiB after the preload; GOMEMLIMIT %.0f MiB", rss/(1<<20), float64(limit)/(1<<20))
		return e.endpoints(), ""
	}
}

// memberRSS is the member's process_resident_memory_bytes.
func memberRSS(e *runEnv, url string) float64 {
	rss, ok := memberSnapshot(e, url).Value("process_resident_memory_bytes", nil)
	if !ok {
		e.t.Fatal("no process_resident_memory_bytes")
	}
	return rss
}

// remoteQuotaProm limits a remote member to cores of CPU time and starts a
// Prometheus that scrapes it and a node_exporter on its host (its namespace):
// the run is graded with analyze --prometheus.
func remoteQuotaProm(cores float64) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		cg := faults.NewCgroup(e.t, "cpu", "cpu.cfs_quota_us")
		r, err := e.startRemote(nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := cg.Set("cpu.cfs_period_us", "100000"); err != nil {
			return nil, err.Error()
		}
		if err := cg.Set("cpu.cfs_quota_us", fmt.Sprint(int(cores*100_000))); err != nil {
			return nil, err.Error()
		}
		if err := cg.Add(r.pid()); err != nil {
			e.t.Fatal(err)
		}
		if e.prom, err = r.prometheus(e); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// stall starts n members and stops the first one for span, after a delay
// counted from the start of etcdperf (warm-up and connection included).
func stall(n int, after, span time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		faults.Stall(e.t, e.c.Members()[0].Pid(), after, span)
		return e.endpoints(), ""
	}
}

// leaderChange starts n members and moves the leadership to a follower after a delay.
func leaderChange(n int, after time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		faults.MoveLeader(e.t, e.c.Endpoints(), after)
		return e.endpoints(), ""
	}
}

// remoteSlowSync starts a remote member whose WAL (--wal-dir) is on a disk
// that holds every flush for delay, and sizes the fault on the device itself:
// etcdperf disk (the wal pattern) measures that disk's fdatasync first, and its
// p50 must be the delay and no more than slack over it, or the fault is not of
// the row's size (a miss, not a retry). The member's own WAL histogram, which
// the rule grades, plays no part in making the fault.
//
// The backend stays on a fast disk: with both on one slow disk, WAL fsyncs wait
// behind the backend's commits too, and the WAL's p99 was a few times the
// delay. Alone on a slow disk without a journal (see NewSlowSyncLoop), 266 of
// 267 WAL fsyncs of a 10 ms delay fell in (8 ms, 16 ms].
func remoteSlowSync(delay, slack time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		loop, _ := faults.NewSlowSyncLoop(e.t, 1<<30, delay)
		p50, p99, err := e.probeDisk(loop.Mount)
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Logf("slow disk, fsync delay %s: etcdperf disk --pattern wal: fdatasync p50 %s, p99 %s", delay, units.Duration(p50), units.Duration(p99))
		if d := time.Duration(p50 * float64(time.Second)); d < delay || d > delay+slack {
			e.unmade = fmt.Sprintf("the slow disk's fdatasync p50 is %s, not its %s delay (+%s at most): the fault is not of the row's size", units.Duration(p50), delay, slack)
			return nil, ""
		}
		if _, err := e.startRemote(nil, "--wal-dir="+filepath.Join(loop.Mount, "wal")); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// probeDisk measures dir's fdatasync with etcdperf disk, the wal pattern, for
// 3 s: its p50 and p99 in seconds.
func (e *runEnv) probeDisk(dir string) (p50, p99 float64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.h.bin, "disk", "--dir", dir, "--pattern", "wal", "--duration", "3s", "--results-dir", e.t.TempDir(), "-w", "json").Output()
	// Exit 1 is the disk graded fail (a p99 over 10 ms): measured all the same.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		return 0, 0, fmt.Errorf("etcdperf disk --dir %s: %w", dir, err)
	}
	var d struct {
		Fdatasync struct{ P50, P99 float64 } `json:"fdatasync_ms"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return 0, 0, fmt.Errorf("etcdperf disk -w json: %w", err)
	}
	return d.Fdatasync.P50 / 1000, d.Fdatasync.P99 / 1000, nil
}

// memberSnapshot is one scrape of the member's /metrics.
func memberSnapshot(e *runEnv, url string) *analyze.Snapshot {
	text, err := analyze.Fetch(context.Background(), nil, url+"/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := analyze.Parse(text)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// stallMember starts n members and stops one (the first, the leader or a
// follower) for span, after a delay counted from the start of etcdperf.
func stallMember(n int, where string, after, span time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		faults.Stall(e.t, m.Pid(), after, span)
		return e.endpoints(), ""
	}
}

// clientHold puts a hold proxy (the link held for hold once every period)
// between etcdperf and the leader; /metrics are scraped direct.
func clientHold(n int, every, hold time.Duration) func(*runEnv) ([]string, string) {
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
		proxy := faults.HoldProxy(e.t, hostOf(m.ClientURL), every, hold)
		var metrics []string
		for _, ep := range e.c.Endpoints() {
			metrics = append(metrics, ep+"/metrics")
		}
		return []string{"--endpoints", "http://" + proxy, "--metrics-urls", strings.Join(metrics, ",")}, ""
	}
}

// contention starts n members, gives one (the first or the leader) a CPU of
// its own, the host's last (as a cpuset or the kubelet's static CPU manager
// does), and starts per busy processes pinned to that CPU, outside its cgroup:
// other tenants on the member's core. The generator keeps the other CPUs (with
// every CPU hogged it could not keep its rate, and the run was invalid).
func contention(n int, where string, per int) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		m, err := e.member(where)
		if err != nil {
			e.t.Fatal(err)
		}
		cpus, err := faults.Affinity(os.Getpid())
		if err != nil {
			e.t.Fatal(err)
		}
		if len(cpus) < 2 {
			return nil, fmt.Sprintf("a CPU of the member's own needs 2 CPUs; this process may run on %v", cpus)
		}
		core := cpus[len(cpus)-1:]
		if err := faults.Pin(m.Pid(), core); err != nil {
			e.t.Fatal(err)
		}
		faults.Hogs(e.t, core, per, "")
		return e.endpoints(), ""
	}
}

// decoyAdvertised starts a member that advertises a loopback client URL it does
// not listen on, where a decoy listens instead: a busy process under a CFS quota
// of 0.10 cores, started before the member. Graded as the member, the decoy's
// quota and CPU would read a saturated CPU; the member itself is idle enough.
// Its /metrics are named on the command line (the advertised URL leads to the
// decoy).
func decoyAdvertised(e *runEnv) ([]string, string) {
	cg := faults.NewCgroup(e.t, "cpu", "cpu.cfs_quota_us")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	pids := faults.Hogs(e.t, []int{-1}, 1, addr)
	if err := cg.Set("cpu.cfs_period_us", "100000"); err != nil {
		return nil, err.Error()
	}
	if err := cg.Set("cpu.cfs_quota_us", "10000"); err != nil {
		return nil, err.Error()
	}
	if err := cg.Add(pids[0]); err != nil {
		e.t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // process start times are in clock ticks: one second apart at least
	if err := e.start(1, "--advertise-client-urls=http://"+addr); err != nil {
		e.t.Fatal(err)
	}
	return append(e.endpoints(), "--metrics-urls", e.c.Endpoints()[0]+"/metrics"), ""
}

// defragUnderLoad starts n members, grows the db with keys of 1 KiB (a
// defragmentation rewrites every one of them) and defragments the first member after a
// delay counted from the start of etcdperf.
func defragUnderLoad(n, keys int, after time.Duration) func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		if err := e.start(n); err != nil {
			e.t.Fatal(err)
		}
		ctx := context.Background()
		val := strings.Repeat("d", 1024)
		t0 := time.Now()
		for i := 0; i < keys; i += 128 { // etcd's default --max-txn-ops
			var ops []clientv3.Op
			for j := i; j < i+128 && j < keys; j++ {
				ops = append(ops, clientv3.OpPut(fmt.Sprintf("/preload/%08d", j), val))
			}
			if _, err := e.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
				e.t.Fatal(err)
			}
		}
		e.t.Logf("preloaded %d keys of 1 KiB in %s", keys, time.Since(t0).Round(time.Millisecond))
		faults.Defrag(e.t, e.c.Endpoints()[0], after)
		return e.endpoints(), ""
	}
}
