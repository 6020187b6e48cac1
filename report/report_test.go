package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	// The live scrape test starts etcd members as re-executions of this test binary.
	cluster.MaybeRunEtcd()
	os.Exit(m.Run())
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestReportGolden(t *testing.T) {
	r, err := NewDocument(fixtureRun(t), fixtureDiagnosis())
	if err != nil {
		t.Fatal(err)
	}
	r.Plots = []string{"plots/spectrum.png", "plots/spectrum.svg"}
	for format, file := range map[string]string{"text": "report.txt.golden", "markdown": "report.md.golden", "json": "report.json.golden"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.Write(&buf, format); err != nil {
				t.Fatal(err)
			}
			golden(t, file, buf.Bytes())
		})
	}
}

// TestFixtureFiles keeps testdata/run-fixture.json and diagnosis-fixture.json (the
// fixture as files, for the command's end-to-end tests) in step with the fixture:
// they are rewritten under -update, and must render as the fixture does.
func TestFixtureFiles(t *testing.T) {
	runPath, diagPath := filepath.Join("testdata", "run-fixture.json"), filepath.Join("testdata", "diagnosis-fixture.json")
	if *update {
		if err := results.WriteFile(runPath, fixtureRun(t)); err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(fixtureDiagnosis(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(diagPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, err := results.ReadFile(runPath)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(diagPath)
	if err != nil {
		t.Fatal(err)
	}
	var diag finding.Diagnosis
	if err := json.Unmarshal(b, &diag); err != nil {
		t.Fatal(err)
	}
	var fromFiles, fromFixture bytes.Buffer
	for buf, in := range map[*bytes.Buffer]struct {
		run  *results.Run
		diag *finding.Diagnosis
	}{&fromFiles: {run, &diag}, &fromFixture: {fixtureRun(t), fixtureDiagnosis()}} {
		r, err := NewDocument(in.run, in.diag)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(buf); err != nil {
			t.Fatal(err)
		}
	}
	if fromFiles.String() != fromFixture.String() {
		t.Error("testdata fixture files are stale: run go test ./report -run TestFixtureFiles -update")
	}
}

func TestReportWithoutDiagnosis(t *testing.T) {
	r, err := NewDocument(sampleRun(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range ReportFormats {
		var buf bytes.Buffer
		if err := r.Write(&buf, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := buf.String()
		if !strings.Contains(out, "put") {
			t.Errorf("%s: the op is missing:\n%s", format, out)
		}
		for _, absent := range []string{"Verdict", "Findings", "budget", "Hardware"} {
			if strings.Contains(out, absent) {
				t.Errorf("%s: %q shown without a diagnosis", format, absent)
			}
		}
	}
	if err := r.Write(io.Discard, "pdf"); err == nil || !strings.Contains(err.Error(), "unknown report format") {
		t.Errorf("unknown format: err = %v", err)
	}
}

func TestDiagnosisDecodesAnalyzerJSON(t *testing.T) {
	// The shape of `etcdperf analyze -w json` (package analyze's Result).
	in := `{"verdict":{"status":"fail","bottleneck":"disk","ranked":["disk"],"summary":"s"},
	"findings":[{"class":"disk","severity":"fail","summary":"slow","evidence":[{"signal":"wal","member":"m0","observed":"98 ms","threshold":"< 10 ms","source":"etcd FAQ","severity":"fail"}],"advice":"a"}],
	"budget":{"op":"put","client_p50_ms":1.5,"client_p99_ms":null,"parts":[{"component":"wal fsync","p50_ms":0.5,"p99_ms":null,"source":"x"}],"note":"n"},
	"hardware":{"host_tier":"small","workload_tier":"small","workload":{"rps":150},"summary":"ok","source":"hw"},
	"notes":["n1"]}`
	var d finding.Diagnosis
	dec := json.NewDecoder(strings.NewReader(in))
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Verdict.Bottleneck != "disk" || d.Findings[0].Evidence[0].Member != "m0" || *d.Budget.ClientP50Ms != 1.5 ||
		d.Budget.Parts[0].P99Ms != nil || d.Hardware.HostTier != "small" || d.Notes[0] != "n1" {
		t.Errorf("decoded %+v", d)
	}
}

func TestFigures(t *testing.T) {
	figs, err := Figures(fixtureRun(t), fixtureDiagnosis())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "spectrum,timeline,disk,curve" {
		t.Fatalf("figures %s", got)
	}
	for _, f := range figs {
		t.Run(f.Name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.Render(&buf, "png"); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			wantW, wantH := int(f.Width/vg.Inch*PlotDPI+0.5), int(f.Height/vg.Inch*PlotDPI+0.5)
			if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
				t.Errorf("png %dx%d, want %dx%d", b.Dx(), b.Dy(), wantW, wantH)
			}
			if n := distinctColors(img); n < 8 {
				t.Errorf("png has %d distinct colours: blank?", n)
			}
			buf.Reset()
			if err := f.Render(&buf, "svg"); err != nil {
				t.Fatal(err)
			}
			svg := buf.String()
			if !strings.Contains(svg, "<svg") || !strings.Contains(svg, "</svg>") || strings.Count(svg, "<path") < 10 {
				t.Errorf("svg is not a drawing (%d bytes)", len(svg))
			}
			if !strings.Contains(svg, fmt.Sprintf(`width="%gpt"`, f.Width.Points())) {
				t.Errorf("svg width is not %vpt: %.200s", f.Width.Points(), svg)
			}
			if err := f.Render(io.Discard, "gif"); err == nil {
				t.Error("gif: want an error")
			}
		})
	}
}

func TestFiguresEmptyRun(t *testing.T) {
	figs, err := Figures(&results.Run{Version: results.Version, Command: "bench put"}, nil)
	if err != nil || len(figs) != 0 {
		t.Errorf("empty run: %d figures, err %v", len(figs), err)
	}
	disk := &results.Run{Version: results.Version, Command: "disk", Disk: fixtureDisk(t)}
	figs, err = Figures(disk, nil)
	if err != nil || len(figs) != 1 || figs[0].Name != "disk" {
		t.Errorf("disk run: %d figures, err %v", len(figs), err)
	}
	if _, err := Figures(&results.Run{Ops: []results.Op{{Op: "put", ResponseHist: "!!"}}}, nil); err == nil {
		t.Error("corrupt histogram: want an error")
	}
}

func TestWriteReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	if err := WriteReport(dir, fixtureRun(t), fixtureDiagnosis()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReportTextFile, ReportHTMLFile, "plots/spectrum.png", "plots/spectrum.svg", "plots/timeline.png", "plots/disk.svg", "plots/curve.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(dir, ReportTextFile))
	if !strings.Contains(string(txt), "  plots/timeline.png\n") {
		t.Errorf("report.txt does not list the plots relative to itself:\n%s", txt)
	}
	page, _ := os.ReadFile(filepath.Join(dir, ReportHTMLFile))
	checkSelfContained(t, string(page))
}

// checkSelfContained fails when the page would fetch anything: it must open offline.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{`src="http`, `href="http`, "<link", "<script", "url(http", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("html refers outside itself: %q", bad)
		}
	}
	if n := strings.Count(page, `src="data:image/png;base64,`); n != 4 {
		t.Errorf("html embeds %d plots, want 4", n)
	}
}

func TestWritePlotsUnwritable(t *testing.T) {
	// A path under a regular file cannot be a folder, for root too.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewDocument(fixtureRun(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = r.WritePlots(filepath.Join(file, "plots"))
	if err == nil || !strings.Contains(err.Error(), "plots folder") {
		t.Errorf("err = %v", err)
	}
	if err := WriteReport(filepath.Join(file, "report"), fixtureRun(t), nil); err == nil {
		t.Error("WriteReport into an unwritable folder: want an error")
	}
}

func TestServerSeriesFixture(t *testing.T) {
	series := analyze.IntervalQuantiles(fixtureScrapes(t), 0.99, metrics.WALFsync, metrics.BackendCommit)
	if len(series) != 2 || series[0].Metric != metrics.WALFsync || series[1].Metric != metrics.BackendCommit {
		t.Fatalf("series %+v", series)
	}
	wal := series[0].Points
	if len(wal) != 6 {
		t.Fatalf("%d WAL points, want 6 (7 good scrapes)", len(wal))
	}
	for i, pt := range wal {
		p := struct {
			To    time.Time
			P99Ms float64
		}{pt.To, pt.Value * 1000}
		stall := p.To.Equal(fixtureStart.Add(16*time.Second + 250*time.Millisecond))
		if stall && (p.P99Ms < 64 || p.P99Ms > 128) {
			t.Errorf("stall interval p99 %.1f ms, want in the 64-128 ms bucket", p.P99Ms)
		}
		if !stall && (p.P99Ms <= 1 || p.P99Ms > 4) {
			t.Errorf("interval %d p99 %.2f ms, want 1-4 ms", i, p.P99Ms)
		}
	}
}

func TestServerSeriesLiveEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	c := clustertest.Start(t, cluster.Config{})
	ep := c.Endpoints()[0]
	scrape := func() results.Scrape {
		resp, err := http.Get(ep + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return results.Scrape{Member: "m0", Time: time.Now().UTC().Format(time.RFC3339Nano), Text: string(b)}
	}
	before := scrape()
	for i := range 20 {
		// The gRPC gateway's put writes through the WAL like any client's.
		body := strings.NewReader(`{"key":"L2V0Y2RwZXJmL2s=","value":"` + strings.Repeat("A", i+4) + `"}`)
		resp, err := http.Post(ep+"/v3/kv/put", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	after := scrape()
	series := analyze.IntervalQuantiles([]results.Scrape{before, after}, 0.99, metrics.WALFsync, metrics.BackendCommit)
	if len(series) == 0 || series[0].Metric != metrics.WALFsync {
		t.Fatalf("no WAL fsync series from a live etcd: %+v", series)
	}
	if p := series[0].Points[0].Value * 1000; p <= 0 || p > 8192 {
		t.Errorf("live WAL fsync p99 %.3f ms out of etcd's bucket range", p)
	}
}

func TestFindKnee(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []finding.CurvePoint
		want int
	}{
		{"hockey stick", []finding.CurvePoint{{ThroughputRPS: 100, P99Ms: 1}, {ThroughputRPS: 200, P99Ms: 1.1}, {ThroughputRPS: 400, P99Ms: 1.3}, {ThroughputRPS: 800, P99Ms: 2}, {ThroughputRPS: 900, P99Ms: 9}, {ThroughputRPS: 950, P99Ms: 40}}, 3},
		{"straight line has none", []finding.CurvePoint{{ThroughputRPS: 100, P99Ms: 1}, {ThroughputRPS: 200, P99Ms: 2}, {ThroughputRPS: 300, P99Ms: 3}, {ThroughputRPS: 400, P99Ms: 4}}, -1},
		{"too few points", []finding.CurvePoint{{ThroughputRPS: 100, P99Ms: 1}, {ThroughputRPS: 200, P99Ms: 50}}, -1},
		{"flat latency has none", []finding.CurvePoint{{ThroughputRPS: 100, P99Ms: 1}, {ThroughputRPS: 200, P99Ms: 1}, {ThroughputRPS: 300, P99Ms: 1}}, -1},
		{"fold back past saturation", []finding.CurvePoint{{ThroughputRPS: 100, P99Ms: 1}, {ThroughputRPS: 500, P99Ms: 1.2}, {ThroughputRPS: 1000, P99Ms: 2}, {ThroughputRPS: 900, P99Ms: 30}, {ThroughputRPS: 700, P99Ms: 80}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FindKnee(tc.pts); got != tc.want {
				t.Errorf("knee %d, want %d", got, tc.want)
			}
		})
	}
}

// distinctColors counts the colours of img, to tell a drawing from a blank page.
func distinctColors(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}
