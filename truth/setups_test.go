package truth

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/metrics"
	"github.com/etcdperf/etcdperf/results"
	"github.com/etcdperf/etcdperf/units"
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
	text, err := analyze.Fetch(context.Background(), nil, url+"/metrics")
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

// walWarn is the WAL fsync p99 (ms) the 10–16 ms row's disk is calibrated to:
// over etcd's 10 ms, inside its 8–16 ms histogram bucket. The calibration is of
// the fault (how slow the disk is), not of a threshold.
var walWarn = [2]float64{10, 16}

// remoteSlowSync starts a remote member on a disk that holds every flush for a
// delay, first calibrated with etcdperf's own probe (the etcd pattern: WAL and
// backend commits at once, as a member writes) until its fsync p99 lands in
// walWarn: a machine's speed changes the delay, not the latency the row makes.
func remoteSlowSync() func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		loop, slow := faults.NewSlowSyncLoop(e.t, 1<<30, 1200*time.Microsecond)
		if err := calibrate(e, loop.Mount, slow); err != nil {
			e.unmade = err.Error()
			return nil, ""
		}
		e.dataDir = loop.Mount
		if _, err := e.startRemote(nil); err != nil {
			e.t.Fatal(err)
		}
		return e.endpoints(), ""
	}
}

// calibrate tries up to five delays, each scaled by how far the last probe's
// p99 was from the middle of walWarn. When none lands, the host's CPU pressure
// over the probes is the run's, so that a busy host means another attempt.
func calibrate(e *runEnv, dir string, slow *faults.SlowSync) error {
	var seen []string
	psi := hardware.StartCPUPressure(os.DirFS("/"))
	defer func() {
		if share, ok := psi.Share(); ok {
			e.pressure = share
		}
	}()
	for range 5 {
		out, err := exec.Command(e.h.bin, "disk", "--dir", dir, "--pattern", "etcd", "--duration", "3s", "-w", "json", "--results-dir", e.t.TempDir()).Output()
		var probe struct {
			Fdatasync struct {
				P99 float64 `json:"p99"`
			} `json:"fdatasync_ms"`
		}
		if jerr := json.Unmarshal(out, &probe); jerr != nil || probe.Fdatasync.P99 <= 0 {
			return fmt.Errorf("etcdperf disk on the slow disk: %v %v: %s", err, jerr, out)
		}
		p99 := probe.Fdatasync.P99
		seen = append(seen, fmt.Sprintf("%s → p99 %.1f ms", slow.Delay(), p99))
		if p99 >= walWarn[0] && p99 < walWarn[1] {
			e.t.Logf("slow disk calibrated: %s", strings.Join(seen, ", "))
			return nil
		}
		next := time.Duration(float64(slow.Delay()) * (walWarn[0] + walWarn[1]) / 2 / p99)
		if next < 100*time.Microsecond {
			break // the machine's own tail, not the delay: a busy host
		}
		slow.Set(next)
	}
	return fmt.Errorf("no fsync delay landed the probe's p99 in %v ms: %s", walWarn, strings.Join(seen, ", "))
}

// walLanded checks that the run's member really had a WAL fsync p99 in the
// bucket (lo, hi] seconds: a slow-sync disk that a busy host pushed further is
// a fault of another size, and its verdict says nothing about this row.
func walLanded(lo, hi float64) func(*results.Run) error {
	return func(run *results.Run) error {
		var before, after *analyze.Snapshot
		for _, sc := range run.Scrapes {
			if sc.Error != "" {
				continue
			}
			snap, err := analyze.Parse(sc.Text)
			if err != nil {
				return err
			}
			switch {
			case sc.Phase == results.PhaseBefore:
				before = snap
			case sc.Phase == results.PhaseAfter && after == nil:
				after = snap
			}
		}
		h, ok := analyze.Between(before, after).HistDelta(metrics.WALFsync, nil)
		if !ok {
			return fmt.Errorf("no %s over the run", metrics.WALFsync)
		}
		q, ok := h.Quantile(0.99)
		if !ok || q.Lo != lo || q.Hi != hi {
			return fmt.Errorf("the member's WAL fsync p99 was %s, not in (%s, %s]", q, units.Duration(lo), units.Duration(hi))
		}
		return nil
	}
}
