package report

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/results"
)

// Span is one phase of a drill, shaded on its timeline.
type Span struct {
	Name       string
	Start, End time.Time
}

// phaseShades alternate behind the phases: translucent tints of the palette, so
// the grid shows through.
var phaseShades = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0x22},
	color.NRGBA{0xE6, 0x9F, 0x00, 0x2a},
	color.NRGBA{0x00, 0x9E, 0x73, 0x22},
	color.NRGBA{0xCC, 0x79, 0xA7, 0x2a},
	color.NRGBA{0x56, 0xB4, 0xE9, 0x22},
}

// DrillTimelineFigure plots the background load of a drill per second (response
// time p50/p99/max, successful requests and errors) with the drill's phases
// shaded and named, on one time axis from the first phase's start.
func DrillTimelineFigure(title string, run *results.Run, spans []Span) (Figure, error) {
	if run == nil || len(spans) == 0 {
		return Figure{}, fmt.Errorf("plot drill timeline: no load or no phases")
	}
	t0 := spans[0].Start
	sec := func(t time.Time) float64 { return t.Sub(t0).Seconds() }
	xmax := sec(spans[len(spans)-1].End)
	lat := newPlot(title, "", "response time (ms)")
	logY(lat)
	thr := newPlot("Requests per second", "seconds from the start of the drill", "requests/s")
	thr.Y.Min = 0
	type series struct {
		op                       string
		c                        color.Color
		p50, p99, pmax, ok, errs plotter.XYs
	}
	var all []series
	ymin, ymax, tmax := math.Inf(1), 0.0, 1.0
	for i, op := range run.Ops {
		s := series{op: op.Op, c: seriesColor(i)}
		for _, iv := range op.Intervals {
			x := sec(iv.Start) + 0.5
			s.ok = append(s.ok, plotter.XY{X: x, Y: float64(iv.Requests - iv.Errors)})
			s.errs = append(s.errs, plotter.XY{X: x, Y: float64(iv.Errors)})
			tmax = math.Max(tmax, float64(iv.Requests))
			h, err := iv.Response.Decode()
			if err != nil {
				return Figure{}, fmt.Errorf("op %s interval at %s: %w", op.Op, iv.Start.Format(time.RFC3339), err)
			}
			if h.TotalCount() == 0 {
				continue
			}
			v := h.ValueAtPercentilesSlice([]float64{50, 99})
			s.p50 = append(s.p50, plotter.XY{X: x, Y: float64(v[0]) / 1000})
			s.p99 = append(s.p99, plotter.XY{X: x, Y: float64(v[1]) / 1000})
			s.pmax = append(s.pmax, plotter.XY{X: x, Y: float64(h.Max()) / 1000})
			ymin, ymax = math.Min(ymin, float64(v[0])/1000), math.Max(ymax, float64(h.Max())/1000)
		}
		if len(s.p50) > 0 {
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return Figure{}, fmt.Errorf("plot drill timeline: the load recorded no latency")
	}
	// The bands go first, so that the lines are drawn over them.
	ylo, yhi := ymin/2, ymax*2
	if err := shadePhases(lat, spans, sec, ylo, yhi, true); err != nil {
		return Figure{}, err
	}
	if err := shadePhases(thr, spans, sec, 0, tmax*1.15, false); err != nil {
		return Figure{}, err
	}
	for _, s := range all {
		for _, l := range []struct {
			name   string
			xys    plotter.XYs
			width  float64
			dashes []vg.Length
		}{{" max", s.pmax, 1, dotted}, {" p99", s.p99, 2, nil}, {" p50", s.p50, 1, dashed}} {
			if err := addLine(lat, s.op+l.name, l.xys, s.c, vg.Points(l.width), l.dashes); err != nil {
				return Figure{}, err
			}
		}
		if err := addLine(thr, s.op+" ok", s.ok, s.c, vg.Points(2), nil); err != nil {
			return Figure{}, err
		}
		if err := addLine(thr, s.op+" errors", s.errs, thresholdColor, vg.Points(1.5), dashed); err != nil {
			return Figure{}, err
		}
	}
	for _, p := range []*plot.Plot{lat, thr} {
		p.X.Min, p.X.Max = 0, xmax
	}
	lat.Y.Min, lat.Y.Max = ylo, yhi
	thr.Y.Max = tmax * 1.15
	rows := [][]*plot.Plot{{lat}, {thr}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	drawAll := func(dc draw.Canvas) {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		cs := plot.Align(rows, tiles, dc)
		for i := range rows {
			rows[i][0].Draw(cs[i][0])
		}
	}
	return Figure{Name: "drill-timeline", Title: title, Width: 9 * vg.Inch, Height: 6 * vg.Inch, draw: drawAll}, nil
}

// shadePhases adds a tinted band for each phase, from y0 to y1, and, when named,
// the phase's name at the top of its band.
func shadePhases(p *plot.Plot, spans []Span, sec func(time.Time) float64, y0, y1 float64, named bool) error {
	var bands []plot.Plotter
	var labels plotter.XYLabels
	for i, s := range spans {
		x0, x1 := sec(s.Start), sec(s.End)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		if err != nil {
			return fmt.Errorf("plot phase %s: %w", s.Name, err)
		}
		poly.Color = phaseShades[i%len(phaseShades)]
		poly.LineStyle.Width = 0
		bands = append(bands, poly)
		// Staggered, so that the names of short neighbouring phases do not overlap.
		labels.XYs = append(labels.XYs, plotter.XY{X: x0, Y: y1 / math.Pow(1.8, float64(1+i%3))})
		labels.Labels = append(labels.Labels, " "+s.Name)
	}
	if named {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("plot phase labels: %w", err)
		}
		bands = append(bands, l)
	}
	p.Add(bands...)
	return nil
}

// WriteDrill writes a drill's JSON (drill.json) and its timeline plot
// (drill-timeline.png and .svg) to dir.
func WriteDrill(dir string, v any, run *results.Run, spans []Span, title string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report dir: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "drill.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write drill.json: %w", err)
	}
	f, err := DrillTimelineFigure(title, run, spans)
	if err != nil {
		return err
	}
	for _, format := range []string{"png", "svg"} {
		if err := writeFigure(filepath.Join(dir, f.Name+"."+format), f, format); err != nil {
			return err
		}
	}
	return nil
}

func writeFigure(path string, f Figure, format string) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", path, cerr)
		}
	}()
	return f.Render(out, format)
}
