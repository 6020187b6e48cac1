package main

import (
	"encoding/json"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/chromiumtest"
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
	br := chromiumtest.New(t, 1200, 2000)
	r := runBin(t, nil, "report", fixture(t, "run-fixture.json"), "--analysis", fixture(t, "diagnosis-fixture.json"), "--format", "html")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	img := br.Screenshot(t, r.stdout)
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 2000 {
		t.Errorf("screenshot %dx%d, want 1200x2000", b.Dx(), b.Dy())
	}
	colours := chromiumtest.Colours(img)
	if len(colours) < 500 {
		t.Errorf("screenshot has %d distinct colours: a blank or unstyled page", len(colours))
	}
	for name, c := range map[string][3]uint8{"fail pill red #c2261d": {0xc2, 0x26, 0x1d}, "plot line blue #0072b2": {0x00, 0x72, 0xb2}} {
		if !colours[c] {
			t.Errorf("no %s in the screenshot", name)
		}
	}
}

// TestReportHTMLTablesFitInChromium lays the HTML report out in headless
// Chromium at a 1200 px window and checks that every table (the findings'
// evidence with its long observed values among them) ends within the page's
// column and the viewport: a table wider than the page hides its last columns.
func TestReportHTMLTablesFitInChromium(t *testing.T) {
	br := chromiumtest.New(t, 1200, 2000)
	dir := t.TempDir()
	// The fixture's diagnosis, with a finding whose evidence carries every
	// rule's own signal, threshold and source: the long texts of real runs.
	b, err := os.ReadFile(fixture(t, "diagnosis-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d finding.Diagnosis
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	long := finding.Finding{Class: finding.ClassCPU, Severity: finding.Fail, Summary: "every rule's texts"}
	for _, rule := range analyze.Rules {
		long.Evidence = append(long.Evidence, finding.Evidence{Signal: rule.Signal, Member: "m0", Severity: finding.Fail,
			Observed: "some task waited for a CPU 88% of the run (" + rule.Signal + ")", Threshold: rule.Threshold, Source: rule.Source})
	}
	d.Findings = append(d.Findings, long)
	diag := filepath.Join(dir, "diagnosis.json")
	if b, err = json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(diag, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, nil, "report", fixture(t, "run-fixture.json"), "--analysis", diag, "--format", "html")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The page measures itself once laid out and leaves the figures in the DOM.
	const measure = `<script>
const main = document.querySelector("main").getBoundingClientRect().right;
const out = [];
for (const t of document.querySelectorAll("table")) {
  out.push({head: t.rows[0].innerText, right: t.getBoundingClientRect().right});
}
document.body.setAttribute("data-fit", JSON.stringify({window: window.innerWidth, viewport: document.documentElement.clientWidth, main: main, tables: out}));
</script>`
	dom := br.DOM(t, strings.Replace(r.stdout, "</body>", measure+"</body>", 1))
	m := regexp.MustCompile(`data-fit="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page did not measure itself:\n%.2000s", dom)
	}
	var fit struct {
		Window, Viewport, Main float64
		Tables                 []struct {
			Head  string
			Right float64
		}
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Window != 1200 || len(fit.Tables) == 0 {
		t.Fatalf("window %g px, %d tables: not the page this test lays out", fit.Window, len(fit.Tables))
	}
	findings := false
	for _, tb := range fit.Tables {
		findings = findings || strings.Contains(tb.Head, "observed")
		if tb.Right > fit.Main || tb.Right > fit.Viewport {
			t.Errorf("table %q ends at %.0f px, past the page (%.0f px) or the viewport (%.0f px)", strings.ReplaceAll(tb.Head, "\t", " "), tb.Right, fit.Main, fit.Viewport)
		}
	}
	if !findings {
		t.Error("no findings table (signal, observed, ...) in the page")
	}
}
