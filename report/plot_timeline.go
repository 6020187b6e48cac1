package report

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// timelineFigure stacks, on one time axis (seconds from the start of the measured
// window): response-time percentiles per second, throughput per second, and the
// members' WAL fsync and backend commit p99 per scrape interval, so that a latency
// spike lines up with the server-side stall that caused it.
func timelineFigure(run *results.Run) (Figure, bool, error) {
	t0 := time.Time{}
	for _, op := range run.Ops {
		for _, iv := range op.Intervals {
			if t0.IsZero() || iv.Start.Before(t0) {
				t0 = iv.Start
			}
		}
	}
	server := analyze.IntervalQuantiles(run.Scrapes, 0.99, metrics.WALFsync, metrics.BackendCommit)
	if t0.IsZero() {
		if len(server) == 0 {
			return Figure{}, false, nil
		}
		t0 = run.StartedAt
	}
	sec := func(t time.Time) float64 { return t.Sub(t0).Seconds() }

	lat := newPlot("Response time per second: "+run.Command, "", "latency (ms)")
	logY(lat)
	thr := newPlot("Throughput per second", "", "requests/s")
	thr.Y.Min = 0
	panels := []*plot.Plot{}
	var xmin, xmax float64
	hasX := false
	extend := func(x float64) {
		if !hasX || x < xmin {
			xmin = x
		}
		if !hasX || x > xmax {
			xmax = x
		}
		hasX = true
	}

	for i, op := range run.Ops {
		if len(op.Intervals) == 0 {
			continue
		}
		var p50, p99, pmax, ok, errs plotter.XYs
		anyErr := false
		for _, iv := range op.Intervals {
			// A point stands for its whole second, so it sits in the middle of it.
			x := sec(iv.Start) + 0.5
			extend(sec(iv.Start))
			extend(sec(iv.Start) + 1)
			// Per second of the time the interval covers: a partial first or last
			// second is not drawn as a drop in throughput.
			ok = append(ok, plotter.XY{X: x, Y: iv.Rate()})
			errs = append(errs, plotter.XY{X: x, Y: float64(iv.Errors) / iv.Covered()})
			anyErr = anyErr || iv.Errors > 0
			h, err := iv.Response.Decode()
			if err != nil {
				return Figure{}, false, fmt.Errorf("op %s interval at %s: %w", op.Op, iv.Start.Format(time.RFC3339), err)
			}
			if h.TotalCount() == 0 {
				continue
			}
			v := h.ValueAtPercentilesSlice([]float64{50, 99})
			p50 = append(p50, plotter.XY{X: x, Y: float64(v[0]) / 1000})
			p99 = append(p99, plotter.XY{X: x, Y: float64(v[1]) / 1000})
			pmax = append(pmax, plotter.XY{X: x, Y: float64(h.Max()) / 1000})
		}
		c := seriesColor(i)
		if len(p50) > 0 {
			for _, l := range []struct {
				name   string
				xys    plotter.XYs
				width  float64
				dashes []vg.Length
			}{{" max", pmax, 1, dotted}, {" p99", p99, 2, nil}, {" p50", p50, 1, dashed}} {
				if err := addLine(lat, op.Op+l.name, l.xys, c, vg.Points(l.width), l.dashes); err != nil {
					return Figure{}, false, err
				}
			}
		}
		if err := addLine(thr, op.Op+" ok", ok, c, vg.Points(2), nil); err != nil {
			return Figure{}, false, err
		}
		if anyErr {
			if err := addLine(thr, op.Op+" errors", errs, thresholdColor, vg.Points(1.5), dashed); err != nil {
				return Figure{}, false, err
			}
		}
	}
	if hasX {
		panels = append(panels, lat, thr)
	}

	if len(server) > 0 {
		srv := newPlot("Server side, per scrape interval", "", "p99 (ms)")
		logY(srv)
		members := map[string]int{}
		for _, s := range server {
			if _, ok := members[s.Member]; !ok {
				members[s.Member] = len(members)
			}
			var xys plotter.XYs
			for _, pt := range s.Points {
				// The p99 holds for the whole interval between two scrapes: draw it as a step.
				ms := pt.Value * 1000
				xys = append(xys, plotter.XY{X: sec(pt.From), Y: ms}, plotter.XY{X: sec(pt.To), Y: ms})
				extend(sec(pt.From))
				extend(sec(pt.To))
			}
			name, dashes := s.Member+" WAL fsync", []vg.Length(nil)
			if s.Metric == metrics.BackendCommit {
				name, dashes = s.Member+" backend commit", dashed
			}
			if err := addLine(srv, name, xys, seriesColor(members[s.Member]+len(run.Ops)), vg.Points(2), dashes); err != nil {
				return Figure{}, false, err
			}
		}
		if err := hline(srv, "10 ms: WAL fsync guideline", 10, xmin, xmax); err != nil {
			return Figure{}, false, err
		}
		if err := addLine(srv, "25 ms: backend commit guideline", plotter.XYs{{X: xmin, Y: 25}, {X: xmax, Y: 25}}, thresholdColor, vg.Points(1), dotted); err != nil {
			return Figure{}, false, err
		}
		panels = append(panels, srv)
	}
	if len(panels) == 0 {
		return Figure{}, false, nil
	}
	for _, p := range panels {
		p.X.Min, p.X.Max = xmin, xmax
	}
	panels[len(panels)-1].X.Label.Text = "seconds from the start of the measured window"

	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	drawAll := func(dc draw.Canvas) {
		// The padding between panels is not drawn by any plot; paint it like their background.
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		// Align gives every panel the same data-area width, so the time axes line up.
		cs := plot.Align(rows, tiles, dc)
		for i := range rows {
			rows[i][0].Draw(cs[i][0])
		}
	}
	title := "Timeline: " + run.Command
	return Figure{Name: "timeline", Title: title, Width: 9 * vg.Inch, Height: vg.Length(2.6*float64(len(panels))) * vg.Inch, draw: drawAll}, true, nil
}
