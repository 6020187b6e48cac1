package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/bench"
)

// workerFlags let N copies of bench or check drive one load together (bench.Share).
type workerFlags struct{ bench.Share }

func (w *workerFlags) register(fs *pflag.FlagSet) {
	fs.Var((*bench.TimeValue)(&w.StartAt), "start-at", "wall-clock time to start the load, RFC 3339 or unix seconds (workers of one run share it)")
	fs.IntVar(&w.Index, "worker-index", 0, "this worker's index, 0 .. --workers-1")
	fs.IntVar(&w.Workers, "workers", 1, "workers driving this load together; each takes 1/N of --rate and --total")
}

// apply checks the flags and gives the worker its own key prefix.
func (w *workerFlags) apply(prefix *string) error {
	if err := w.Check(time.Now()); err != nil {
		return err
	}
	*prefix = w.Prefix(*prefix)
	return nil
}

// start takes this worker's share of *rate and *total (bench.Share.Take) and
// says on stderr when the load will start.
func (w *workerFlags) start(stderr io.Writer, rate *float64, total *uint64, flags map[string]string) error {
	if err := w.Take(rate, total, flags, time.Now()); err != nil {
		return usageErr(err)
	}
	if d := time.Until(w.StartAt); !w.StartAt.IsZero() && d > 0 {
		fmt.Fprintf(stderr, "etcdperf: worker %d of %d: starting at %s (in %s), after the setup\n", w.Index, w.Workers, bench.FormatTime(w.StartAt), d.Round(time.Millisecond))
	}
	return nil
}
