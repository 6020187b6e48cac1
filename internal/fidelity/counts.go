package fidelity

import (
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/internal/stats"
)

// Count is one run's figure of a scenario that is counted, not timed: the
// puts a member served in a phase of make compare's restart scenario, or the
// run's errors.
type Count struct {
	Figure, Transport string
	Pair              int
	N                 float64
}

// ParseCounts reads lines "figure transport pair count".
func ParseCounts(r io.Reader) ([]Count, error) {
	var cs []Count
	err := scanLines(r, "figure transport pair count", func(name, transport string, pair int, v []float64) {
		cs = append(cs, Count{Figure: name, Transport: transport, Pair: pair, N: v[0]})
	})
	return cs, err
}

// CountRow is the verdict on one figure: as Row, but the gap and its
// interval are in the figure's own unit, as a count's median may be 0 (no
// errors, a member down).
type CountRow struct {
	Figure         string
	Lean, GRPC     float64 // medians over the runs
	Gap, Lo, Hi    float64 // lean's shift from grpc (Hodges-Lehmann) and its interval
	Level, P       float64
	Lower, Pairs   int
	Differs, Known bool // Known: the samples can reach Alpha at all
}

// JudgeCounts is a row per figure, in the order of first appearance.
func JudgeCounts(cs []Count) []CountRow {
	var figs []string
	vals := map[string]map[string][]float64{} // figure → transport → counts
	byPair := map[string]map[int][2]float64{} // figure → pair → lean, grpc
	seen := map[string]map[int][2]bool{}      // figure → pair → lean, grpc present
	for _, c := range cs {
		if vals[c.Figure] == nil {
			figs = append(figs, c.Figure)
			vals[c.Figure] = map[string][]float64{}
			byPair[c.Figure] = map[int][2]float64{}
			seen[c.Figure] = map[int][2]bool{}
		}
		vals[c.Figure][c.Transport] = append(vals[c.Figure][c.Transport], c.N)
		p, s := byPair[c.Figure][c.Pair], seen[c.Figure][c.Pair]
		i := 1
		if c.Transport == "lean" {
			i = 0
		}
		p[i], s[i] = c.N, true
		byPair[c.Figure][c.Pair], seen[c.Figure][c.Pair] = p, s
	}
	var rows []CountRow
	for _, f := range figs {
		lean, grpc := vals[f]["lean"], vals[f]["grpc"]
		if len(lean) == 0 || len(grpc) == 0 {
			continue
		}
		r := CountRow{Figure: f, Lean: stats.Median(lean), GRPC: stats.Median(grpc)}
		r.P, _ = stats.MannWhitney(grpc, lean)
		r.Known = stats.MinExactP(len(lean), len(grpc)) < Alpha
		r.Differs = r.Known && r.P < Alpha
		r.Lo, r.Hi, r.Level, _ = stats.ShiftCI(grpc, lean, Alpha)
		r.Gap = stats.Shift(grpc, lean)
		for pair, p := range byPair[f] {
			if s := seen[f][pair]; s[0] && s[1] {
				r.Pairs++
				if p[0] < p[1] {
					r.Lower++
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// WriteCounts prints rows as make compare's table of counts.
func WriteCounts(w io.Writer, rows []CountRow) {
	fmt.Fprintf(w, "%-24s %9s %9s %9s %-22s %7s %6s %6s  %s\n", "figure", "lean", "grpc", "lean-grpc", "interval", "level", "p", "lower", "verdict")
	for _, r := range rows {
		verdict := verdictWord(r.Known, r.Differs)
		fmt.Fprintf(w, "%-24s %9.1f %9.1f %+9.0f %-22s %6.1f%% %6.3f %3d/%-2d  %s\n", r.Figure, r.Lean, r.GRPC, r.Gap,
			fmt.Sprintf("[%+.0f, %+.0f]", r.Lo, r.Hi), 100*r.Level, r.P, r.Lower, r.Pairs, verdict)
	}
	fmt.Fprintf(w, "lean, grpc: medians over the runs; lean-grpc: the Hodges-Lehmann shift of lean's per-run counts from grpc's, in the same unit;\n"+
		"interval: its distribution-free confidence interval (Moses); p: two-sided Mann-Whitney; lower: pairs in which lean counted\n"+
		"fewer; DIFFERS when p < %.2f\n", Alpha)
}
