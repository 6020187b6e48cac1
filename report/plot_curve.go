package report

import (
	"fmt"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/finding"
)

// kneeMargin is how far (in units of the normalised axes) a point must sit below
// the chord from the first to the last point to count as a knee; a curve that
// never bends that much has none.
const kneeMargin = 0.1

// FindKnee returns the index of the knee of a latency-versus-throughput curve, or
// -1 when it has none. Both axes are normalised to [0, 1] over the points; the knee
// is the point furthest below the diagonal (largest throughput minus latency),
// Kneedle's rule for an increasing convex curve: the step that buys the most
// throughput for the least latency before latency takes off. Points are taken in
// load-step order, so a curve that folds back (throughput falling past saturation)
// is handled.
func FindKnee(points []finding.CurvePoint) int {
	if len(points) < 3 {
		return -1
	}
	minX, maxX := points[0].ThroughputRPS, points[0].ThroughputRPS
	minY, maxY := points[0].P99Ms, points[0].P99Ms
	for _, p := range points {
		minX, maxX = min(minX, p.ThroughputRPS), max(maxX, p.ThroughputRPS)
		minY, maxY = min(minY, p.P99Ms), max(maxY, p.P99Ms)
	}
	if maxX == minX || maxY == minY {
		return -1
	}
	best, bestD := -1, kneeMargin
	for i, p := range points {
		d := (p.ThroughputRPS-minX)/(maxX-minX) - (p.P99Ms-minY)/(maxY-minY)
		if d > bestD {
			best, bestD = i, d
		}
	}
	return best
}

// curveFigure plots p99 against throughput, one point per load step, with the knee
// ringed and the SLO drawn when known.
func curveFigure(c *finding.Curve) (Figure, error) {
	title := "Latency versus throughput"
	if c.Op != "" {
		title += " (" + c.Op + ")"
	}
	p := newPlot(title, "throughput (requests/s)", "p99 response time (ms)")
	p.Y.Min = 0
	xys := make(plotter.XYs, len(c.Points))
	for i, pt := range c.Points {
		xys[i] = plotter.XY{X: pt.ThroughputRPS, Y: pt.P99Ms}
	}
	lp, sp, err := plotter.NewLinePoints(xys)
	if err != nil {
		return Figure{}, fmt.Errorf("plot curve: %w", err)
	}
	lp.Color, lp.Width = seriesColor(0), vg.Points(2)
	sp.Color, sp.Shape = seriesColor(0), draw.CircleGlyph{}
	p.Add(lp, sp)
	p.Legend.Add("p99 per load step", lp, sp)
	if c.SLOMs > 0 {
		minX, maxX := xys[0].X, xys[0].X
		for _, xy := range xys {
			minX, maxX = min(minX, xy.X), max(maxX, xy.X)
		}
		if err := hline(p, fmt.Sprintf("SLO: p99 %s ms", ms(c.SLOMs)), c.SLOMs, minX, maxX); err != nil {
			return Figure{}, err
		}
	}
	if c.Knee >= 0 && c.Knee < len(c.Points) {
		k := xys[c.Knee]
		ks, err := plotter.NewScatter(plotter.XYs{k})
		if err != nil {
			return Figure{}, fmt.Errorf("plot curve knee: %w", err)
		}
		ks.Shape, ks.Radius, ks.Color = draw.RingGlyph{}, vg.Points(8), thresholdColor
		p.Add(ks)
		p.Legend.Add(fmt.Sprintf("knee: %s req/s at p99 %s ms", rps(k.X), ms(k.Y)), ks)
	}
	return Figure{Name: "curve", Title: title, Width: 9 * vg.Inch, Height: 4.5 * vg.Inch, draw: p.Draw}, nil
}
