// Package fidelity judges whether the lean transport measures what clientv3's
// does: make compare's paired runs of each (scripts/compare-benchmark.sh), a
// Mann-Whitney test on the per-run p50 and p99, and the gap with its
// confidence interval.
package fidelity

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/stats"
)

// Alpha is the test's significance level, and 1 − Alpha the interval's least
// confidence: etcdperf's own choice, the conventional 5%.
const Alpha = 0.05

// Run is one run's percentiles, in ms.
type Run struct {
	Op, Transport string
	Pair          int
	P50, P99      float64
}

// Parse reads lines "op transport pair p50ms p99ms".
func Parse(r io.Reader) ([]Run, error) {
	var runs []Run
	err := scanLines(r, "op transport pair p50 p99", func(name, transport string, pair int, v []float64) {
		runs = append(runs, Run{Op: name, Transport: transport, Pair: pair, P50: v[0], P99: v[1]})
	})
	return runs, err
}

// scanLines reads the lines "name transport pair v..." that make compare's
// scripts write, with as many values as want names after the pair, and hands
// each to add.
func scanLines(r io.Reader, want string, add func(name, transport string, pair int, v []float64)) error {
	n := len(strings.Fields(want))
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != n {
			return fmt.Errorf("line %d: %d fields, want %s", line, len(f), want)
		}
		pair, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("line %d: pair: %w", line, err)
		}
		v := make([]float64, n-3)
		for i, s := range f[3:] {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		}
		add(f[0], f[1], pair, v)
	}
	return sc.Err()
}

// Row is the verdict on one op's percentile.
type Row struct {
	Op, Quantile   string
	Lean, GRPC     float64 // medians over the runs, ms
	Gap, Lo, Hi    float64 // lean's shift from grpc (Hodges-Lehmann) and its interval, as fractions of grpc's median
	Level          float64 // the interval's confidence
	P              float64 // two-sided Mann-Whitney
	Lower, Pairs   int     // pairs in which lean's value was lower
	Differs, Known bool    // Known: the samples can reach Alpha at all
}

// Judge is a row per op (in the order of first appearance) and percentile.
func Judge(runs []Run) []Row {
	var ops []string
	vals := map[string]map[string][2][]float64{} // op → transport → p50s, p99s
	byPair := map[string]map[int][2][2]float64{} // op → pair → lean/grpc → p50, p99
	for _, r := range runs {
		if vals[r.Op] == nil {
			ops = append(ops, r.Op)
			vals[r.Op] = map[string][2][]float64{}
			byPair[r.Op] = map[int][2][2]float64{}
		}
		v := vals[r.Op][r.Transport]
		v[0], v[1] = append(v[0], r.P50), append(v[1], r.P99)
		vals[r.Op][r.Transport] = v
		p := byPair[r.Op][r.Pair]
		if r.Transport == "lean" {
			p[0] = [2]float64{r.P50, r.P99}
		} else {
			p[1] = [2]float64{r.P50, r.P99}
		}
		byPair[r.Op][r.Pair] = p
	}
	var rows []Row
	for _, op := range ops {
		for qi, q := range []string{"p50", "p99"} {
			lean, grpc := vals[op]["lean"][qi], vals[op]["grpc"][qi]
			if len(lean) == 0 || len(grpc) == 0 {
				continue
			}
			row := Row{Op: op, Quantile: q, Lean: stats.Median(lean), GRPC: stats.Median(grpc)}
			row.P, _ = stats.MannWhitney(grpc, lean)
			row.Known = stats.MinExactP(len(lean), len(grpc)) < Alpha
			row.Differs = row.Known && row.P < Alpha
			lo, hi, level, _ := stats.ShiftCI(grpc, lean, Alpha)
			row.Gap, row.Lo, row.Hi, row.Level = stats.Shift(grpc, lean)/row.GRPC, lo/row.GRPC, hi/row.GRPC, level
			for _, p := range byPair[op] {
				if p[0][qi] != 0 && p[1][qi] != 0 {
					row.Pairs++
					if p[0][qi] < p[1][qi] {
						row.Lower++
					}
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// Write prints rows as make compare's fidelity table.
func Write(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-6s %-4s %9s %9s %9s %-20s %7s %6s %6s  %s\n", "op", "", "lean ms", "grpc ms", "lean-grpc", "interval", "level", "p", "lower", "verdict")
	for _, r := range rows {
		verdict := verdictWord(r.Known, r.Differs)
		fmt.Fprintf(w, "%-6s %-4s %9.3f %9.3f %+8.1f%% %-20s %6.1f%% %6.3f %3d/%-2d  %s\n", r.Op, r.Quantile, r.Lean, r.GRPC,
			100*r.Gap, fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*r.Lo, 100*r.Hi), 100*r.Level, r.P, r.Lower, r.Pairs, verdict)
	}
	fmt.Fprintf(w, "lean-grpc: the Hodges-Lehmann shift of lean's per-run values from grpc's, over grpc's median; interval: its distribution-free\n"+
		"confidence interval (Moses), at the level shown; p: two-sided Mann-Whitney on the per-run values; lower: pairs in which lean\n"+
		"was lower; DIFFERS when p < %.2f\n", Alpha)
}

// verdictWord is a table row's verdict: DIFFERS where the test found a
// difference, "too few pairs to tell" where it could not reach its level.
func verdictWord(known, differs bool) string {
	switch {
	case !known:
		return "too few pairs to tell"
	case differs:
		return "DIFFERS"
	}
	return "no difference found"
}
