package truth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/analyze"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/hardware"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
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

// walBucket is the etcd histogram bucket (seconds) the 10–16 ms row's WAL fsync
// p99 must land in: over etcd's 10 ms, inside its 8–16 ms bucket. walMean is
// where the calibration steers the mean WAL fsync (each waits the delay once,
// so the mean is the typical one, which a bucketed p99 cannot steer by),
// leaving the run's p99 room above the bucket's lower bound and below its
// upper one. Both size the fault (how slow the disk is), not a threshold.
var (
	walBucket = [2]float64{0.008, 0.016}
	walMean   = [2]float64{0.0095, 0.0125}
)

// remoteSlowSync starts a remote member whose WAL (--wal-dir) is on a disk that
// holds every flush for a delay, calibrated on the member's own WAL fsync
// histogram under the row's load, the figure the row grades: a machine's speed
// changes the delay, not the latency the row makes.
//
// The backend stays on a fast disk. With WAL and backend on one slow disk, WAL
// fsyncs also wait behind the backend's commits: the WAL's p99 was a few times
// the delay (5 ms: mean 6.1 ms, p99 15.1 ms) and moved a whole bucket for a
// tenth less delay (3.4 ms: 15.1 ms; 3.0 ms: 7.8 ms); calibrated on etcdperf
// disk's p99, a CI run's landed in 4–8 ms.
// Alone on a slow disk without a journal (see NewSlowSyncLoop), 266 of 267 WAL
// fsyncs of a 10 ms delay fell in (8 ms, 16 ms].
func remoteSlowSync() func(*runEnv) ([]string, string) {
	return func(e *runEnv) ([]string, string) {
		loop, slow := faults.NewSlowSyncLoop(e.t, 1<<30, 10*time.Millisecond)
		r, err := e.startRemote(nil, "--wal-dir="+filepath.Join(loop.Mount, "wal"))
		if err != nil {
			e.t.Fatal(err)
		}
		if err := calibrate(e, r.url, slow); err != nil {
			e.unmade = err.Error()
			return nil, ""
		}
		return e.endpoints(), ""
	}
}

// calibrate tries up to six delays until the WAL fsync p99 lands in walBucket,
// each scaled by how far the last try's mean WAL fsync was from the middle of
// walMean, and a fifth lower at least after a p99 over the bucket, under 300
// puts paced as the row's load (100/s). When none lands, the host's CPU
// pressure over the tries is the run's; the row runs again either way.
func calibrate(e *runEnv, url string, slow *faults.SlowSync) error {
	var seen []string
	psi := hardware.StartCPUPressure(os.DirFS("/"))
	defer func() {
		if share, ok := psi.Share(); ok {
			e.pressure = share
		}
	}()
	ctx := context.Background()
	defer func() { _, _ = e.cli.Delete(ctx, "/calibrate/", clientv3.WithPrefix()) }()
	for try := range 6 {
		before := memberSnapshot(e, url)
		var wg sync.WaitGroup
		tick := time.NewTicker(10 * time.Millisecond)
		for i := range 300 {
			<-tick.C
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = e.cli.Put(ctx, fmt.Sprintf("/calibrate/%d/%03d", try, i), "v")
			}()
		}
		tick.Stop()
		wg.Wait()
		h, ok := analyze.Between(before, memberSnapshot(e, url)).HistDelta(metrics.WALFsync, nil)
		q, qok := h.Quantile(0.99)
		if !ok || !qok || h.Sum <= 0 {
			return fmt.Errorf("no %s while calibrating the slow disk", metrics.WALFsync)
		}
		mean := h.Sum / h.Count
		seen = append(seen, fmt.Sprintf("%s → mean %s, p99 %s", slow.Delay(), units.Duration(mean), q))
		if q.Lo == walBucket[0] && q.Hi == walBucket[1] {
			e.t.Logf("slow disk calibrated: %s", strings.Join(seen, ", "))
			return nil
		}
		next := time.Duration(float64(slow.Delay()) * (walMean[0] + walMean[1]) / 2 / mean)
		if q.Lo >= walBucket[1] {
			// A tail over the bucket with the mean in its band (a noisy host's
			// disk: 10 ms gave a mean of 12.2 ms and a p99 in 16-32 ms): the
			// mean alone would hold the delay where it is.
			next = min(next, slow.Delay()*4/5)
		}
		if next < 100*time.Microsecond {
			break // the machine's own latency, not the delay: a busy host
		}
		slow.Set(next)
	}
	return fmt.Errorf("no fsync delay landed the member's WAL fsync p99 in (%s, %s]: %s",
		units.Duration(walBucket[0]), units.Duration(walBucket[1]), strings.Join(seen, ", "))
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
