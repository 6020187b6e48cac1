package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

// threeMembers starts a 3-member cluster of separate processes and a client to it.
func threeMembers(t *testing.T) (*cluster.Cluster, *clientv3.Client) {
	t.Helper()
	c := clustertest.Start(t, cluster.Config{Members: 3, Processes: true})
	cli := clustertest.Client(t, c)
	return c, cli
}

// leader is the member that leads.
func leader(t *testing.T, c *cluster.Cluster, cli *clientv3.Client) *cluster.Member {
	t.Helper()
	for _, m := range c.Members() {
		st, err := cli.Status(context.Background(), m.ClientURL)
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no leader")
	return nil
}

// checkIntervals fails when an op's per-second intervals leave out a second, or
// their counts do not add up to the op's.
func checkIntervals(t *testing.T, run *results.Run) {
	t.Helper()
	for _, op := range run.Ops {
		if len(op.Intervals) == 0 {
			t.Errorf("%s: no intervals", op.Op)
			continue
		}
		var reqs, errs int64
		for i, iv := range op.Intervals {
			reqs += iv.Requests
			errs += iv.Errors
			if i > 0 && !iv.Start.Equal(op.Intervals[i-1].Start.Add(time.Second)) {
				t.Errorf("%s: interval %d starts at %v, after %v: a second is missing", op.Op, i, iv.Start, op.Intervals[i-1].Start)
			}
		}
		var byCode int64
		for _, n := range op.ErrorsByCode {
			byCode += n
		}
		if reqs != op.Requests || errs != op.Errors || byCode != op.Errors {
			t.Errorf("%s: %d requests and %d errors (%d by code), the intervals hold %d and %d", op.Op, op.Requests, op.Errors, byCode, reqs, errs)
		}
	}
}

// TestMemberKilledMidRun kills the leader of a 3-member cluster 2 s into a put,
// a range and a watch run. The run goes on; every second is in the run file,
// errors counted per second and per code; the diagnosis bench prints reports
// the leader change.
func TestMemberKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs")
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"put", []string{"bench", "put", "--key-space-size", "100"}},
		{"range", []string{"bench", "range", "--keys", "100", "--range-width", "5"}},
		{"watch", []string{"bench", "watch", "--watchers", "30", "--streams", "3", "--watched-keys", "3", "--conns", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cli := threeMembers(t)
			runs := t.TempDir()
			s := startBin(t, t.TempDir(), append(tc.args, "--endpoints", strings.Join(c.Endpoints(), ","),
				"--rate", "200", "--clients", "20", "--duration", "6s", "--results-dir", runs, "-w", "json")...)
			s.waitFor(t, "keys under /etcdperf/", func() bool { return prefixKeys(t, cli, "/etcdperf/") > 0 })
			time.Sleep(2 * time.Second)
			l := leader(t, c, cli)
			if err := l.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if !s.wait(60 * time.Second) {
				t.Fatal("still running 60 s after the kill")
			}
			// The leader change fails the verdict (exit 1), and the lost requests may make the run invalid (3).
			if s.code != ExitFail && s.code != ExitInvalid && s.code != ExitOK {
				t.Fatalf("exit %d: %s", s.code, s.stderr.String())
			}
			var out struct {
				RunFile  string `json:"run_file"`
				Findings []struct {
					Severity string `json:"severity"`
					Summary  string `json:"summary"`
					Evidence []struct {
						Signal string `json:"signal"`
					} `json:"evidence"`
				} `json:"findings"`
			}
			if err := json.Unmarshal(s.stdout.Bytes(), &out); err != nil {
				t.Fatalf("stdout %v: %s", err, s.stdout.String())
			}
			run, err := results.ReadFile(out.RunFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range run.Ops {
				t.Logf("%s: %d requests, %d errors %v, %d intervals, p99 %.1f ms, max %.1f ms",
					op.Op, op.Requests, op.Errors, op.ErrorsByCode, len(op.Intervals), op.Latency.P99, op.Latency.Max)
			}
			if run.Interrupted || run.Error != "" || run.DurationS < 5.5 {
				t.Errorf("the run did not go on: interrupted %v, error %q, %.1fs", run.Interrupted, run.Error, run.DurationS)
			}
			checkIntervals(t, run)
			if n := prefixKeys(t, cli, "/etcdperf/"); n != 0 {
				t.Errorf("%d keys left under /etcdperf/", n)
			}

			found := false
			for _, f := range out.Findings {
				if f.Severity == "ok" || f.Severity == "unknown" {
					continue
				}
				for _, e := range f.Evidence {
					found = found || strings.Contains(e.Signal, "leader changes")
				}
				t.Logf("finding: %s: %s", f.Severity, f.Summary)
			}
			if !found {
				t.Errorf("no leader-change finding: %s", s.stdout.String())
			}
		})
	}
}

// TestClusterGone kills every member mid-run: the run ends within about the dial
// timeout with one line that says so, writes the partial run file, and exits 2.
func TestClusterGone(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	c, cli := threeMembers(t)
	runs := t.TempDir()
	const dial = 2 * time.Second
	s := startBin(t, t.TempDir(), "bench", "put", "--endpoints", strings.Join(c.Endpoints(), ","), "--dial-timeout", dial.String(),
		"--rate", "200", "--duration", "1m", "--results-dir", runs)
	s.waitFor(t, "keys under /etcdperf/", func() bool { return prefixKeys(t, cli, "/etcdperf/") > 0 })
	time.Sleep(time.Second)
	killed := time.Now()
	for _, m := range c.Members() {
		if err := m.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	if !s.wait(60 * time.Second) {
		t.Fatal("still running 60 s after the cluster went away")
	}
	took := time.Since(killed)
	t.Logf("exit %d %v after the kill: %s", s.code, took, s.stderr.String())
	assertCleanError(t, result{stdout: s.stdout.String(), stderr: s.stderr.String(), code: s.code})
	if took > dial+3*time.Second {
		t.Errorf("took %v to give up with a %v dial timeout", took, dial)
	}
	entries, err := os.ReadDir(runs)
	if err != nil || len(entries) != 1 {
		t.Fatalf("results dir: %v %v", entries, err)
	}
	run, err := results.ReadFile(filepath.Join(runs, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if run.Valid || !strings.Contains(run.Error, "lost the cluster") || len(run.Ops) != 1 || run.Ops[0].Requests == 0 {
		t.Errorf("partial run file: valid %v, error %q, ops %+v", run.Valid, run.Error, run.Ops)
	}
	if !strings.Contains(s.stderr.String(), "lost the cluster") {
		t.Errorf("stderr %q does not say the cluster went away", s.stderr.String())
	}
	checkIntervals(t, run)
	// The seconds in which every request hung, up to the stop, are there too.
	if n := len(run.Ops[0].Intervals); float64(n) < run.DurationS {
		t.Errorf("%d intervals for a %.1fs window", n, run.DurationS)
	}
}
