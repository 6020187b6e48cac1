package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/chromiumtest"
)

// pageWithHistory is a page of three hours of probes, the last ones failing on the disk.
func pageWithHistory(t *testing.T) *Page {
	t.Helper()
	p := &Page{Target: "http://127.0.0.1:2379"}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 180 {
		status, lat := finding.StatusPass, []float64{1, 2, 3, 4}
		grades := map[finding.Class]finding.Severity{finding.ClassDisk: finding.OK}
		if i >= 150 {
			status, lat = finding.StatusFail, []float64{40, 80, 120, 300}
			grades[finding.ClassDisk] = finding.Fail
		}
		r := probeResult(t, t0.Add(time.Duration(i)*time.Minute), status, "disk", grades, lat...)
		r.Verdict.Summary = "fail: bottleneck disk — wal fsync p99 98 ms"
		for j := range r.Analysis.Findings {
			r.Analysis.Findings[j].Summary = "wal fsync p99 98 ms over 20 ms"
		}
		p.Record(r)
	}
	return p
}

func render(t *testing.T, p *Page, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func TestPage(t *testing.T) {
	if code, body := render(t, &Page{}, "/"); code != 200 || !strings.Contains(body, "no probe yet") || !strings.Contains(body, "<svg") {
		t.Errorf("empty page: %d\n%s", code, body)
	}
	p := pageWithHistory(t)
	code, body := render(t, p, "/")
	for _, want := range []string{`class="pill fail"`, "bottleneck <b>disk</b>", "wal fsync p99 98 ms over 20 ms", "<polyline", colourFailMarker, "last 180 probes"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if code != 200 {
		t.Errorf("code %d", code)
	}
	if code, _ := render(t, p, "/nope"); code != 404 {
		t.Errorf("/nope: %d", code)
	}
	// The history is bounded by its window: 7 hours on, only the last 6 remain.
	for i := range 420 {
		p.Record(Result{End: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute), Skipped: SkipNoLeader})
	}
	if n := len(p.history); n > int(HistoryWindow/time.Minute)+1 {
		t.Errorf("%d points kept, want at most %d", n, int(HistoryWindow/time.Minute)+1)
	}
}

// TestPlotMarks: a skipped tick and a failed probe are marks on the time axis,
// with their reason as the mark's title.
func TestPlotMarks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	svg := string(plotSVG([]Point{
		{T: t0, P50: 1, P99: 2, Status: string(finding.StatusPass)},
		{T: t0.Add(time.Minute), Status: "skipped: " + SkipUnreachable},
		{T: t0.Add(2 * time.Minute), Status: "error"},
		{T: t0.Add(3 * time.Minute), P50: 1, P99: 2, Status: string(finding.StatusPass)},
	}))
	for _, want := range []string{`class="skip"`, "<title>skipped: unreachable</title>", `class="err"`, "<title>error</title>", "<polyline"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q:\n%s", want, svg)
		}
	}
	if svg := string(plotSVG([]Point{{T: t0, Status: "skipped: " + SkipNoLeader}})); !strings.Contains(svg, `class="skip"`) || strings.Contains(svg, "<polyline") {
		t.Errorf("only a skip: %s", svg)
	}
}

// TestPageInChromium renders the status page in headless Chromium, as the
// report's HTML test does, and checks the screenshot shows it: the fail pill's
// red (CSS applied) and the p99 line's blue (the inline SVG drawn).
func TestPageInChromium(t *testing.T) {
	br := chromiumtest.New(t, 1000, 800)
	_, body := render(t, pageWithHistory(t), "/")
	img := br.Screenshot(t, body)
	seen := chromiumtest.Colours(img)
	if len(seen) < 50 {
		t.Errorf("screenshot has %d distinct colours: a blank or unstyled page", len(seen))
	}
	for name, c := range map[string][3]uint8{"fail pill red #c2261d": {0xc2, 0x26, 0x1d}, "p99 line blue #0072b2": {0x00, 0x72, 0xb2}, "p50 line green #009e73": {0x00, 0x9e, 0x73}} {
		if !seen[c] {
			t.Errorf("no %s in the screenshot", name)
		}
	}
}
