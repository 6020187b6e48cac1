// Command fidelity prints make compare's fidelity table: lean against grpc
// (clientv3's client), judged by a Mann-Whitney test on the per-run p50 and
// p99, the gap with its confidence interval (see internal/fidelity).
//
//	fidelity < runs
//
// Each line of the input is "op transport pair p50ms p99ms".
package main

import (
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/internal/fidelity"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "fidelity: unexpected argument %q (it reads the runs on stdin)\n", os.Args[1])
		os.Exit(2)
	}
	runs, err := fidelity.Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(2)
	}
	fidelity.Write(os.Stdout, fidelity.Judge(runs))
}
