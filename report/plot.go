package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Figure is one plot of a run, ready to render as PNG or SVG.
type Figure struct {
	// Name is the file name stem: spectrum, timeline, disk or curve.
	Name  string
	Title string
	// Width and Height are the figure's size; PNGs are rendered at PlotDPI.
	Width, Height vg.Length
	draw          func(draw.Canvas)
}

// PlotDPI is the resolution of PNG plots: a 9-inch-wide figure is 864 pixels.
const PlotDPI = 96

// Figures returns the plots a run (and its diagnosis, which may be nil) supports:
// the latency spectrum and the timeline when there are ops, the fdatasync spectrum
// when there is a disk probe, the capacity curve when the diagnosis carries one.
func Figures(run *results.Run, diag *finding.Diagnosis) ([]Figure, error) {
	var out []Figure
	if f, ok, err := spectrumFigure(run); err != nil {
		return nil, err
	} else if ok {
		out = append(out, f)
	}
	if f, ok, err := timelineFigure(run); err != nil {
		return nil, err
	} else if ok {
		out = append(out, f)
	}
	if f, ok, err := diskFigure(run); err != nil {
		return nil, err
	} else if ok {
		out = append(out, f)
	}
	if diag != nil && diag.Curve != nil && len(diag.Curve.Points) >= 2 {
		f, err := curveFigure(diag.Curve)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// Render draws the figure in format (png or svg) to w.
func (f Figure) Render(w io.Writer, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(PlotDPI))}
	case "svg":
		c = vgsvg.New(f.Width, f.Height)
	default:
		return fmt.Errorf("plot %s: unknown format %q", f.Name, format)
	}
	f.draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot %s: %w", f.Name, err)
	}
	return nil
}

// palette is Okabe and Ito's colour-blind-safe set; series take colours in order.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

// thresholdColor marks guideline lines (10 ms fsync, 25 ms commit, SLO, the knee).
var thresholdColor = color.RGBA{0xD5, 0x5E, 0x00, 0xff}

func seriesColor(i int) color.Color { return palette[i%len(palette)] }

var dashed = []vg.Length{vg.Points(5), vg.Points(3)}
var dotted = []vg.Length{vg.Points(1), vg.Points(2)}

// newPlot returns a plot with the house style: title, axis labels, grid, legend top left.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = vg.Points(20)
	return p
}

// logY puts the y axis on a log scale with decade labels, rescaled to whole decades.
func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.AutoRescale = true
}

// addLine adds a named line; dashes may be nil for a solid line.
func addLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color, width vg.Length, dashes []vg.Length) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot line %s: %w", name, err)
	}
	l.Color = c
	l.Width = width
	l.Dashes = dashes
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// hline adds a horizontal guideline at y from x0 to x1.
func hline(p *plot.Plot, name string, y, x0, x1 float64) error {
	return addLine(p, name, plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}, thresholdColor, vg.Points(1.5), dashed)
}

// percentileTicks label the spectrum's x axis, where x = 1/(1-q): 2 is the median,
// 10 the 90th percentile, 100 the 99th and so on. The minimum (x = 1) is left
// unlabelled: its label would crowd the median's.
var percentileTicks = []plot.Tick{
	{Value: 1}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "99.9999%"},
}

// spectrumMaxX is the right end of a spectrum axis for histograms of up to n values:
// the decade that holds n (1/(1-q) cannot usefully exceed the count), at least 99%.
func spectrumMaxX(n int64) float64 {
	x := math.Pow(10, math.Ceil(math.Log10(float64(max(n, 1)))))
	return math.Min(math.Max(x, 100), 1e6)
}

// spectrumXY samples h's percentile spectrum at 200 points evenly spaced in
// log(1/(1-q)) from the minimum to xmax, in milliseconds.
func spectrumXY(h *hdr.Histogram, xmax float64) plotter.XYs {
	const n = 200
	xs := make([]float64, n)
	ps := make([]float64, n)
	for i := range xs {
		xs[i] = math.Pow(xmax, float64(i)/(n-1))
		ps[i] = 100 * (1 - 1/xs[i])
	}
	vals := h.ValueAtPercentilesSlice(ps)
	out := make(plotter.XYs, n)
	for i := range out {
		out[i] = plotter.XY{X: xs[i], Y: float64(vals[i]) / 1000}
	}
	return out
}

// spectrumPlot starts a spectrum plot with its percentile axis up to xmax.
func spectrumPlot(title string, xmax float64) *plot.Plot {
	p := newPlot(title, "percentile", "latency (ms)")
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, t := range percentileTicks {
		if t.Value <= xmax {
			ticks = append(ticks, t)
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 1, xmax
	logY(p)
	return p
}

// spectrumFigure is HdrHistogram's percentile distribution plot: response time
// (solid) and service time (dashed) of every op on one log-log chart, so the
// tail and the gap between the two (queueing in the generator) are both visible.
func spectrumFigure(run *results.Run) (Figure, bool, error) {
	type pair struct {
		op       string
		response *hdr.Histogram
		service  *hdr.Histogram
	}
	var pairs []pair
	var n int64
	for _, op := range run.Ops {
		r, err := op.ResponseHist.Decode()
		if err != nil {
			return Figure{}, false, fmt.Errorf("op %s: %w", op.Op, err)
		}
		s, err := op.ServiceHist.Decode()
		if err != nil {
			return Figure{}, false, fmt.Errorf("op %s: %w", op.Op, err)
		}
		if r.TotalCount() == 0 && s.TotalCount() == 0 {
			continue
		}
		pairs = append(pairs, pair{op.Op, r, s})
		n = max(n, r.TotalCount(), s.TotalCount())
	}
	if len(pairs) == 0 {
		return Figure{}, false, nil
	}
	xmax := spectrumMaxX(n)
	title := "Latency by percentile: " + run.Command
	p := spectrumPlot(title, xmax)
	for i, pr := range pairs {
		if pr.response.TotalCount() > 0 {
			if err := addLine(p, pr.op+" response", spectrumXY(pr.response, xmax), seriesColor(i), vg.Points(2), nil); err != nil {
				return Figure{}, false, err
			}
		}
		if pr.service.TotalCount() > 0 {
			if err := addLine(p, pr.op+" service", spectrumXY(pr.service, xmax), seriesColor(i), vg.Points(1.5), dashed); err != nil {
				return Figure{}, false, err
			}
		}
	}
	return Figure{Name: "spectrum", Title: title, Width: 9 * vg.Inch, Height: 4.5 * vg.Inch, draw: p.Draw}, true, nil
}

// diskFigure plots each probe's fdatasync spectrum against etcd's 10 ms p99 guideline.
func diskFigure(run *results.Run) (Figure, bool, error) {
	type line struct {
		name string
		h    *hdr.Histogram
	}
	var lines []line
	var n int64
	add := func(name string, x results.Hist) error {
		h, err := x.Decode()
		if err != nil {
			return fmt.Errorf("disk probe %s: %w", name, err)
		}
		if h.TotalCount() > 0 {
			lines = append(lines, line{name, h})
			n = max(n, h.TotalCount())
		}
		return nil
	}
	for _, d := range run.Disk {
		if err := add(d.Pattern+" fdatasync", d.SyncHist); err != nil {
			return Figure{}, false, err
		}
		if d.Backend != nil {
			if err := add(d.Pattern+"/backend fdatasync", d.Backend.SyncHist); err != nil {
				return Figure{}, false, err
			}
		}
	}
	if len(lines) == 0 {
		return Figure{}, false, nil
	}
	xmax := spectrumMaxX(n)
	title := "Disk probe: fdatasync latency by percentile"
	p := spectrumPlot(title, xmax)
	for i, l := range lines {
		if err := addLine(p, l.name, spectrumXY(l.h, xmax), seriesColor(i), vg.Points(2), nil); err != nil {
			return Figure{}, false, err
		}
	}
	if err := hline(p, "10 ms: etcd's fdatasync p99 guideline", 10, 1, xmax); err != nil {
		return Figure{}, false, err
	}
	return Figure{Name: "disk", Title: title, Width: 9 * vg.Inch, Height: 4.5 * vg.Inch, draw: p.Draw}, true, nil
}
