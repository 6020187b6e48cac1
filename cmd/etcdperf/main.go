// Command etcdperf benchmarks an etcd cluster, probes the disk under its data dir,
// and says which resource is the bottleneck. See README.md.
package main

import (
	"os"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/internal/cli"
)

func main() {
	cluster.MaybeRunEtcd()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the one exit point: every command returns its error here, where it is
// mapped to an exit code and printed as one line.
func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	ctx, stop := cli.SignalContext(stderr)
	defer stop()
	return newApp(stdin, stdout, stderr).execute(ctx, args)
}
