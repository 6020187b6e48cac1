// Command etcdperf benchmarks an etcd cluster, probes the disk under its data dir,
// and says which resource is the bottleneck. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/etcdperf/etcdperf/cluster"
)

func main() {
	cluster.MaybeRunEtcd()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the one exit point: every command returns its error here, where it is
// mapped to an exit code and printed as one line.
func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		// First signal: stop measuring, write partial results, clean up keys.
		// Second signal: the user wants out now.
		if _, ok := <-sigs; !ok {
			return
		}
		cancel()
		if _, ok := <-sigs; ok {
			stderr.WriteString("etcdperf: aborted\n")
			os.Exit(ExitInterrupted)
		}
	}()
	a := newApp(stdin, stdout, stderr)
	return a.execute(ctx, args)
}
