package main

import (
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// fixture returns the absolute path of a file of the report package's test fixture:
// a synthetic, deterministic run (put and range, a stall, disk probes, real-shaped
// scrapes) and its diagnosis, kept in step by report's TestFixtureFiles.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportFormats(t *testing.T) {
	run := fixture(t, "run-fixture.json")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", run}, []string{"etcdperf report: bench mixed — VALID", "OPERATIONS", "put    response", "DISK PROBE"}},
		{[]string{"report", run, "--format", "markdown"}, []string{"# etcdperf report: bench mixed", "| op | requests |"}},
		{[]string{"report", run, "--format", "html"}, []string{"<!DOCTYPE html>", "data:image/png;base64,"}},
		{[]string{"report", run, "--analysis", fixture(t, "diagnosis-fixture.json")}, []string{"— FAIL", "FAIL — bottleneck: disk", "LATENCY BUDGET", "knee"}},
	} {
		t.Run(strings.Join(tc.args[2:], " "), func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			if r.code != ExitOK || r.stderr != "" {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("no %q in:\n%s", w, r.stdout)
				}
			}
		})
	}
	for _, args := range [][]string{{"report", run, "--format", "json"}, {"report", run, "-w", "json"}} {
		r := runBin(t, nil, args...)
		var out struct {
			Command string `json:"command"`
			Ops     []struct {
				Op string `json:"op"`
			} `json:"ops"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != ExitOK || out.Command != "bench mixed" || len(out.Ops) != 2 {
			t.Errorf("%v: exit %d, %v, %+v", args, r.code, err, out)
		}
	}
}

// A run file that stores its diagnosis reports it without --analysis.
func TestReportStoredDiagnosis(t *testing.T) {
	run, err := results.ReadFile(fixture(t, "run-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Diagnosis, err = report.ReadDiagnosis(fixture(t, "diagnosis-fixture.json")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := results.WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "html"} {
		r := runBin(t, nil, "report", path, "--format", format)
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d: %s", format, r.code, r.stderr)
		}
		for _, w := range []string{"FAIL", "bottleneck: disk", "wal fsync"} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: no %q in the report of a run file that stores its diagnosis", format, w)
			}
		}
	}
}

func TestReportPlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	r := runBin(t, nil, "report", fixture(t, "run-fixture.json"), "--plots", dir, "--analysis", fixture(t, "diagnosis-fixture.json"))
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"spectrum", "timeline", "disk", "curve"} {
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 864 || b.Dy() < 400 {
			t.Errorf("%s.png is %dx%d, want 864 wide", name, b.Dx(), b.Dy())
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil || !strings.Contains(string(svg), "<svg") {
			t.Errorf("%s.svg: %v", name, err)
		}
		if !strings.Contains(r.stdout, filepath.Join(dir, name+".png")) {
			t.Errorf("the report does not list %s.png", name)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"version":1,"ops":[{"op":"put","response_hist":"HISTF`), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := fixture(t, "run-fixture.json")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing run file", []string{"report", filepath.Join(dir, "nope.json")}, "no such file"},
		{"corrupt run file", []string{"report", corrupt}, "not a run file"},
		// A path under a regular file cannot be created, for root too.
		{"unwritable plot folder", []string{"report", run, "--plots", filepath.Join(file, "plots")}, "plots folder"},
		{"unknown format", []string{"report", run, "--format", "pdf"}, "--format"},
		{"bad analysis", []string{"report", run, "--analysis", file}, "read analysis"},
		{"no run file", []string{"report"}, "arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout on error: %.200s", r.stdout)
			}
		})
	}
}

// TestReportHTMLInChromium renders the HTML report in headless Chromium and checks
// the screenshot shows the page: the verdict's red pill (CSS applied) and the plot
// lines' blue (embedded images decoded), not a blank or broken page.
func TestReportHTMLInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	r := runBin(t, nil, "report", fixture(t, "run-fixture.json"), "--analysis", fixture(t, "diagnosis-fixture.json"), "--format", "html")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "out.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,2000", "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 2000 {
		t.Errorf("screenshot %dx%d, want 1200x2000", b.Dx(), b.Dy())
	}
	colours := countColours(img)
	if len(colours) < 500 {
		t.Errorf("screenshot has %d distinct colours: a blank or unstyled page", len(colours))
	}
	for name, c := range map[string][3]uint8{"fail pill red #c2261d": {0xc2, 0x26, 0x1d}, "plot line blue #0072b2": {0x00, 0x72, 0xb2}} {
		if !colours[c] {
			t.Errorf("no %s in the screenshot", name)
		}
	}
}

func countColours(img image.Image) map[[3]uint8]bool {
	seen := map[[3]uint8]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}] = true
		}
	}
	return seen
}
