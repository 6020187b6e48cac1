// Command nullkv serves etcd's KV API and answers every request at once, storing
// nothing: the load generator's own ceiling, measured with no server in the way
// (scripts/compare-benchmark.sh runs etcdperf and etcd's benchmark against it).
//
//	nullkv [--listen 127.0.0.1:0]
//
// It prints its client URL on stdout once it listens, and stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/etcdperf/etcdperf/internal/nullkv"
)

func main() {
	fs := flag.NewFlagSet("nullkv", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "nullkv: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	s, err := nullkv.Listen(*listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nullkv:", err)
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	fmt.Println(s.URL())
	<-sigs
	s.Close()
}
