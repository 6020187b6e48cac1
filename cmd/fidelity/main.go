// Command fidelity prints make compare's fidelity tables: lean against grpc
// (clientv3's client), judged by a Mann-Whitney test on the per-run values,
// the gap with its confidence interval (see internal/fidelity).
//
//	fidelity < runs          lines "op transport pair p50ms p99ms"
//	fidelity counts < runs   lines "figure transport pair count"
package main

import (
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/internal/fidelity"
)

func main() {
	counts := len(os.Args) == 2 && os.Args[1] == "counts"
	if len(os.Args) > 1 && !counts {
		fmt.Fprintf(os.Stderr, "fidelity: unexpected argument %q (it reads the runs on stdin; the one argument it takes is counts)\n", os.Args[1])
		os.Exit(2)
	}
	if counts {
		cs, err := fidelity.ParseCounts(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fidelity:", err)
			os.Exit(2)
		}
		fidelity.WriteCounts(os.Stdout, fidelity.JudgeCounts(cs))
		return
	}
	runs, err := fidelity.Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(2)
	}
	fidelity.Write(os.Stdout, fidelity.Judge(runs))
}
