package serve

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// HistoryWindow is how far back the status page's plot reaches; older points
// are dropped, so the history's memory is bounded by the probes in it.
const HistoryWindow = 6 * time.Hour

// Point is one probe on the status page's plot.
type Point struct {
	T        time.Time
	P50, P99 float64 // ms, response time over the probe's paced ops (the slowest op's)
	Status   string  // pass | fail | invalid | skipped reason | error
}

// Page is the status page at /: the latest verdict, its findings at warn or
// above, and the probe latency of the last HistoryWindow as an inline SVG.
type Page struct {
	Target string // what is probed, for the heading

	mu      sync.Mutex
	latest  *Result
	history []Point
}

// Record adds a probe's result to the page.
func (p *Page) Record(r Result) {
	pt := Point{T: r.End, Status: "error"}
	switch {
	case r.Skipped != "":
		pt.Status = "skipped: " + r.Skipped
	case r.Ran():
		pt.Status = string(r.Verdict.Status)
		pt.P50, pt.P99 = pacedLatency(r.Run)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latest = &r
	p.history = append(p.history, pt)
	cut := 0
	for cut < len(p.history) && r.End.Sub(p.history[cut].T) > HistoryWindow {
		cut++
	}
	p.history = append(p.history[:0], p.history[cut:]...)
}

// Restore starts the history with pts (Keeper.History), within HistoryWindow
// of the newest.
func (p *Page) Restore(pts []Point) {
	if len(pts) == 0 {
		return
	}
	last := pts[len(pts)-1].T
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pt := range pts {
		if last.Sub(pt.T) <= HistoryWindow {
			p.history = append(p.history, pt)
		}
	}
}

// pacedLatency is the p50 and p99 (ms) of the run's slowest paced op.
func pacedLatency(run *results.Run) (p50, p99 float64) {
	for _, op := range run.Ops {
		if op.TargetRPS > 0 {
			p50, p99 = max(p50, op.Latency.P50), max(p99, op.Latency.P99)
		}
	}
	return p50, p99
}

// ServeHTTP renders the page.
func (p *Page) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/" {
		http.NotFound(w, req)
		return
	}
	p.mu.Lock()
	v := p.view()
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pageTmpl.Execute(w, v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

type pageView struct {
	Target, When, Status, Pill, Bottleneck, Summary, RunFile, Error string
	Findings                                                        []finding.Finding
	Plot                                                            template.HTML
	Probes                                                          int
}

func (p *Page) view() pageView {
	v := pageView{Target: p.Target, Status: "no probe yet", Pill: "unknown", Probes: len(p.history), Plot: plotSVG(p.history)}
	r := p.latest
	if r == nil {
		return v
	}
	v.When = r.End.UTC().Format(time.RFC3339)
	v.RunFile = r.RunFile
	if r.Err != nil {
		v.Error = r.Err.Error()
	}
	switch {
	case r.Skipped != "":
		v.Status, v.Pill = "skipped: "+r.Skipped, "unknown"
	case !r.Ran():
		v.Status, v.Pill = "error", "fail"
	default:
		v.Status, v.Pill = string(r.Verdict.Status), string(r.Verdict.Status)
		v.Bottleneck, v.Summary = r.Verdict.Bottleneck, r.Verdict.Summary
		for _, f := range r.Analysis.Findings {
			if f.Severity.Bad() {
				v.Findings = append(v.Findings, f)
			}
		}
	}
	return v
}

// SVG plot geometry.
const (
	plotW, plotH     = 900, 280
	plotL, plotR     = 60, 20
	plotT, plotB     = 20, 40
	colourP99        = "#0072b2" // the report's plot blue
	colourP50        = "#009e73"
	colourFailMarker = "#c2261d"
	colourSkipMarker = "#777"
)

// plotSVG draws p50 and p99 per probe against time, fail verdicts marked red;
// a tick that sent no load (skipped: grey) or failed as a whole (error: red)
// is a mark on the time axis, so a gap in the lines has its reason.
func plotSVG(pts []Point) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="probe latency">`, plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#999"/>`, plotL, plotT, plotW-plotL-plotR, plotH-plotT-plotB)
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" fill="#555">no probe yet</text></svg>`, plotL+20, plotH/2)
		return template.HTML(b.String())
	}
	var ran []Point
	for _, pt := range pts {
		if pt.P99 > 0 {
			ran = append(ran, pt)
		}
	}
	t0, t1 := pts[0].T, pts[len(pts)-1].T
	span := max(t1.Sub(t0).Seconds(), 1)
	ymax := 0.0
	for _, pt := range ran {
		ymax = max(ymax, pt.P99)
	}
	ymax = niceCeil(ymax)
	x := func(t time.Time) float64 {
		return plotL + t.Sub(t0).Seconds()/span*float64(plotW-plotL-plotR)
	}
	y := func(ms float64) float64 { return float64(plotH-plotB) - ms/ymax*float64(plotH-plotT-plotB) }
	for i := 0; i <= 4; i++ {
		ms := ymax * float64(i) / 4
		label := units.Ms(ms)
		if i == 0 {
			label = "0"
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`,
			plotL, plotW-plotR, y(ms), y(ms), plotL-4, y(ms)+4, label)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11">%s</text><text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`,
		plotL, plotH-plotB+16, t0.UTC().Format("15:04:05"), plotW-plotR, plotH-plotB+16, t1.UTC().Format("15:04:05 MST"))
	line := func(colour string, val func(Point) float64) {
		var ps []string
		for _, pt := range ran {
			ps = append(ps, fmt.Sprintf("%.1f,%.1f", x(pt.T), y(val(pt))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`, colour, strings.Join(ps, " "))
	}
	if len(ran) > 0 {
		line(colourP50, func(pt Point) float64 { return pt.P50 })
		line(colourP99, func(pt Point) float64 { return pt.P99 })
	}
	for _, pt := range pts {
		switch {
		case pt.P99 > 0 && pt.Status == string(finding.StatusFail):
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>fail</title></circle>`, x(pt.T), y(pt.P99), colourFailMarker)
		case pt.P99 > 0:
		case strings.HasPrefix(pt.Status, "skipped"):
			fmt.Fprintf(&b, `<path class="skip" d="M%.1f %.1f l-5 9 h10 z" fill="%s"><title>%s</title></path>`, x(pt.T), y(0)-9, colourSkipMarker, template.HTMLEscapeString(pt.Status))
		default:
			fmt.Fprintf(&b, `<path class="err" d="M%.1f %.1f l8 8 m0 -8 l-8 8" stroke="%s" stroke-width="2"><title>%s</title></path>`, x(pt.T)-4, y(0)-9, colourFailMarker, template.HTMLEscapeString(pt.Status))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="%s">p99</text><text x="%d" y="%d" font-size="12" fill="%s">p50</text>`,
		plotL+10, plotT+16, colourP99, plotL+50, plotT+16, colourP50)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">response time per probe (ms); red dot: fail verdict; grey triangle: skipped; red cross: probe failed</text></svg>`, plotW/2, plotH-6)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>etcdperf serve</title>
<meta http-equiv="refresh" content="30">
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
.pill { display: inline-block; padding: .2em .8em; border-radius: 1em; color: #fff; font-weight: bold; }
.pass { background: #1a7f37; } .fail { background: #c2261d; } .invalid { background: #b35900; } .unknown { background: #777; }
.warn { color: #b35900; } .sev-fail { color: #c2261d; }
td, th { text-align: left; padding: .2em .8em .2em 0; vertical-align: top; }
</style></head><body>
<h1>etcdperf serve{{if .Target}}: {{.Target}}{{end}}</h1>
<p><span class="pill {{.Pill}}">{{.Status}}</span>{{if .Bottleneck}} bottleneck <b>{{.Bottleneck}}</b>{{end}}{{if .When}} — probe finished {{.When}}{{end}}</p>
{{if .Summary}}<p>{{.Summary}}</p>{{end}}
{{if .Error}}<p class="sev-fail">error: {{.Error}}</p>{{end}}
{{if .Findings}}<table><tr><th>class</th><th>severity</th><th>finding</th></tr>
{{range .Findings}}<tr><td>{{.Class}}</td><td class="{{if eq .Severity "fail"}}sev-fail{{else}}warn{{end}}">{{.Severity}}</td><td>{{.Summary}}</td></tr>
{{end}}</table>{{end}}
<h2>Probe latency, last {{.Probes}} probes (up to 6 h)</h2>
{{.Plot}}
<p>{{if .RunFile}}Latest run file: <code>{{.RunFile}}</code>. {{end}}Series: <a href="/metrics">/metrics</a>; health: <a href="/healthz">/healthz</a>.</p>
</body></html>
`))
