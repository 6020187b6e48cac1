package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/results"
)

// TestOneProgressBar runs bench on a terminal (script(1) gives it one) and
// reads the bar's renders: one bar counts up. Before the fix bench and measure
// each started one, and the renders alternated between the live bar and a
// second one stuck at 0.
func TestOneProgressBar(t *testing.T) {
	if testing.Short() {
		t.Skip("live: starts etcd")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed (util-linux)")
	}
	ep, _ := benchEtcd(t)
	cmd := "stty cols 120 rows 40; " + binPath + " bench put --endpoints " + ep +
		" --total 200 --rate 200 --clients 4 --results-dir " + t.TempDir()
	out, err := exec.Command(script, "-qec", cmd, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var counts []int
	for _, m := range regexp.MustCompile(`\] (\d+)/200 req`).FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		counts = append(counts, n)
	}
	if len(counts) == 0 {
		t.Fatalf("no progress bar on the terminal: %q", out)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] < counts[i-1] {
			t.Fatalf("bar renders %v go back: more than one bar (%q)", counts, strings.TrimSpace(string(out)))
		}
	}
}

// TestScrapesBracketTheLoad: a range benchmark fills 3,000 keys first and deletes
// them afterwards; its load puts nothing. The server-side window must be the
// load's: no put and no delete between the "before" and "after" scrapes (before
// the fix the before scrape preceded the fill and the after one followed the
// cleanup, so the window held 3,000 puts and 3,000 deletes).
func TestScrapesBracketTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("live: starts etcd")
	}
	ep, cli := benchEtcd(t)
	r := runBin(t, nil, "bench", "range", "--endpoints", ep, "--keys", "3000", "--total", "50", "--clients", "2",
		"-w", "json", "--results-dir", t.TempDir())
	out := decodeBench(t, r)
	run, err := results.ReadFile(out.RunFile)
	if err != nil {
		t.Fatal(err)
	}
	counter := func(phase, name string) float64 {
		t.Helper()
		for _, sc := range run.Scrapes {
			if sc.Phase != phase {
				continue
			}
			s, err := analyze.Parse(sc.Text)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := s.Value(name, nil)
			if !ok {
				t.Fatalf("%s scrape lacks %s", phase, name)
			}
			return v
		}
		t.Fatalf("no %s scrape in %+v", phase, run.Scrapes)
		return 0
	}
	for _, m := range []string{"etcd_mvcc_put_total", "etcd_mvcc_delete_total"} {
		if d := counter(results.PhaseAfter, m) - counter(results.PhaseBefore, m); d != 0 {
			t.Errorf("%s grew by %g over the load window of a range-only load (the fill or the cleanup is in it)", m, d)
		}
	}
	if run.SetupS <= 0 {
		t.Errorf("setup time %g s not recorded", run.SetupS)
	}
	checkUntouched(t, cli)
}
