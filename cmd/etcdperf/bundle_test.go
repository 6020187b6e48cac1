package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/bundle"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

// TestBundleCmd bundles a 3-member cluster with one member stopped, then reads
// the bundle with report and analyze: the bundle is written and its verdict
// fails (exit 1), report leads with that verdict, analyze reproduces it.
func TestBundleCmd(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{Members: 3, TickMs: 20, ElectionMs: 200})
	c.Members()[1].Stop()
	dir := t.TempDir()
	out := filepath.Join(dir, "incident.tar.gz")
	r := runBinIn(t, dir, "bundle", "--endpoints", strings.Join(c.Endpoints(), ","), "--interval", "1s", "--reads", "5", "--keys", "-o", out)
	t.Logf("bundle:\n%s%s", r.stdout, r.stderr)
	if r.code != ExitFail {
		t.Fatalf("bundle: exit %d, want %d (a member down fails the verdict)\nstdout: %s\nstderr: %s", r.code, ExitFail, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stdout, "DOWN") || !strings.Contains(r.stdout, "is down: ") || !strings.Contains(r.stdout, "did not answer") {
		t.Errorf("bundle output names no member down:\n%s", r.stdout)
	}

	rep := runBinIn(t, dir, "report", out)
	t.Logf("report:\n%s", rep.stdout)
	if rep.code != 0 {
		t.Fatalf("report: exit %d: %s", rep.code, rep.stderr)
	}
	lines := strings.Split(rep.stdout, "\n")
	if len(lines) < 3 || lines[2] != "VERDICT" || !strings.HasPrefix(strings.TrimSpace(lines[3]), "FAIL") || strings.Contains(rep.stdout, "grades the same inputs apart") {
		t.Errorf("report does not lead with the verdict:\n%s", rep.stdout)
	}
	an := runBinIn(t, dir, "analyze", out)
	if an.code != ExitFail {
		t.Errorf("analyze: exit %d, want %d: %s", an.code, ExitFail, an.stderr)
	}
	verdict := strings.SplitN(an.stdout, "\n", 2)[0]
	if !strings.Contains(r.stdout, verdict) {
		t.Errorf("analyze's verdict %q is not bundle's:\n%s", verdict, r.stdout)
	}

	if html := runBinIn(t, dir, "report", out, "--format", "html"); html.code != 0 || !strings.Contains(html.stdout, "did not answer") {
		t.Errorf("report --format html: exit %d: %s", html.code, html.stderr)
	}
}

// TestBundleNeedsEndpoints: with no --endpoints bundle refuses in one line, exit 2.
func TestBundleNeedsEndpoints(t *testing.T) {
	assertCleanError(t, runBin(t, nil, "bundle", "--interval", "1s"))
	assertCleanError(t, runBin(t, nil, "bundle", "--endpoints", "127.0.0.1:1", "--keys=all"))
}

// TestBundleOffline bundles the data dirs of a 3-member cluster whose members
// stopped one after the other: the bundle names a dir to restore from, and
// report and analyze read it.
func TestBundleOffline(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{Dir: t.TempDir(), Members: 3, TickMs: 20, ElectionMs: 200})
	cli := clustertest.Client(t, c)
	ms := c.Members()
	if err := ms[2].StopGracefully(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), "/offline/k", "v"); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:2] {
		if err := m.StopGracefully(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "offline.tar.gz")
	r := runBinIn(t, dir, "bundle", "--data-dir", ms[0].DataDir, "--data-dir", ms[1].DataDir, "--data-dir", ms[2].DataDir, "-o", out)
	t.Logf("bundle:\n%s%s", r.stdout, r.stderr)
	if r.code != 0 || !strings.Contains(r.stdout, "restore from: ") {
		t.Fatalf("bundle --data-dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := runBinIn(t, dir, "report", out)
	t.Logf("report:\n%s", rep.stdout)
	if rep.code != 0 || !strings.Contains(rep.stdout, "restore from: ") {
		t.Errorf("report: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
	if an := runBinIn(t, dir, "analyze", out); an.code != 0 {
		t.Errorf("analyze: exit %d\n%s%s", an.code, an.stdout, an.stderr)
	}
	assertCleanError(t, runBinIn(t, dir, "bundle", "--data-dir", ms[0].DataDir, "--interval", "5s"))
	assertCleanError(t, runBinIn(t, dir, "bundle", "--data-dir", dir))
}

// TestBundleProbe: --probe runs check's tiny load and keeps its run file in
// the archive; its keys are gone afterwards.
func TestBundleProbe(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{})
	dir := t.TempDir()
	out := filepath.Join(dir, "probe.tar.gz")
	r := runBinIn(t, dir, "bundle", "--endpoints", c.Endpoints()[0], "--interval", "1s", "--reads", "2", "--probe", "-o", out)
	if r.code != 0 || !strings.Contains(r.stdout, "probe (check") {
		t.Fatalf("bundle --probe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.Probe == nil || len(b.Probe.Ops) == 0 || b.Probe.Command != "check" {
		t.Errorf("probe run: %+v", b.Probe)
	}
	left, err := clustertest.Client(t, c).Get(t.Context(), "/etcdperf/bundle-probe/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || left.Count != 0 {
		t.Errorf("keys left under the probe's prefix: %v %v", left, err)
	}
}
