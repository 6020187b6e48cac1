package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/cluster"
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
	r := runBinIn(t, dir, "bundle", "--endpoints", strings.Join(c.Endpoints(), ","), "--interval", "1s", "--reads", "5", "-o", out)
	if r.code != ExitFail {
		t.Fatalf("bundle: exit %d, want %d (a member down fails the verdict)\nstdout: %s\nstderr: %s", r.code, ExitFail, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stdout, "DOWN") || !strings.Contains(r.stdout, "did not answer") {
		t.Errorf("bundle output names no member down:\n%s", r.stdout)
	}

	rep := runBinIn(t, dir, "report", out)
	if rep.code != 0 {
		t.Fatalf("report: exit %d: %s", rep.code, rep.stderr)
	}
	lines := strings.Split(rep.stdout, "\n")
	if len(lines) < 3 || lines[2] != "VERDICT" || !strings.HasPrefix(strings.TrimSpace(lines[3]), "FAIL") {
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
