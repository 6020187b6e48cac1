package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// defaultBenchDuration bounds a run given neither --total nor --duration.
const defaultBenchDuration = 10 * time.Second

// benchFlags are the flags every bench workload shares.
type benchFlags struct {
	clients  int
	conns    int
	rate     float64
	total    uint64
	duration time.Duration
	warmup   time.Duration
	prefix   string
	force    bool
	report   string
	keySize  int
	valSize  int
	compact  time.Duration
	worker   workerFlags
}

func newBenchCmd(a *app) *cobra.Command {
	bf := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Drive " + profiles.CommandNames() + " load against etcd and measure it",
		Long:  bench.Usage,
	}
	f := cmd.PersistentFlags()
	f.IntVar(&bf.clients, "clients", 10, "concurrent clients")
	f.IntVar(&bf.conns, "conns", 1, "gRPC connections the clients spread over")
	f.Float64Var(&bf.rate, "rate", 0, "requests per second, open loop (0: closed loop, as fast as the clients go)")
	f.Uint64Var(&bf.total, "total", 0, "measured requests, warm-up excluded (default: bounded by --duration)")
	f.DurationVar(&bf.duration, "duration", 0, "measured window (default 10s unless --total is given)")
	f.DurationVar(&bf.warmup, "warmup", 0, "load before the measured window, not recorded")
	f.StringVar(&bf.prefix, "prefix", bench.DefaultPrefix, "key prefix bench writes under and deletes afterwards")
	f.BoolVar(&bf.force, "force", false, "run even when the prefix holds keys; they are deleted after the run")
	f.StringVar(&bf.report, "report", "", "also write a report with plots (text, HTML, PNG, SVG) to this folder")
	f.IntVar(&bf.keySize, "key-size", 8, "key bytes after the prefix (a zero-padded index)")
	f.IntVar(&bf.valSize, "val-size", 256, "value bytes")
	f.DurationVar(&bf.compact, "compact-interval", 0, "compact the cluster's history every interval during the load, keeping one interval of it, as kube-apiserver does every 5m (--etcd-compaction-interval); reported as the \"compact\" op. It compacts the whole keyspace (0: never)")
	bf.worker.register(f)
	for _, k := range profiles.Kinds() {
		if k.Command != nil {
			cmd.AddCommand(newBenchOpCmd(a, bf, k))
		}
	}
	return cmd
}

// newBenchOpCmd is 'bench NAME' of a workload op, all of it from the op's kind.
func newBenchOpCmd(a *app, bf *benchFlags, k *profiles.Kind) *cobra.Command {
	cmd := &cobra.Command{Use: k.Name, Short: k.Short, Long: k.Long, Example: k.Example, Args: cobra.NoArgs}
	run := k.Command(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if run.Check != nil {
			if err := run.Check(bf.base()); err != nil {
				return usageErr(err) // before connecting: etcd would refuse the requests
			}
		}
		return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
			return run.New(clis, bf.base()) // after --worker-index moved the prefix
		})
	}
	return cmd
}

// base is what of the shared flags a workload reads.
func (bf *benchFlags) base() profiles.Base {
	return profiles.Base{Prefix: bf.prefix, KeySize: bf.keySize, ValSize: bf.valSize, Rate: bf.rate, Clients: bf.clients}
}

// validate checks what flagRules cannot: they already hold every numeric flag
// to its range before any command runs.
func (bf *benchFlags) validate() error {
	if bf.prefix == "" {
		return errors.New("--prefix must not be empty: bench deletes its prefix after the run")
	}
	// Before connecting: a request etcd refuses is bad input, whatever the cluster.
	return bench.CheckRequestSize(len(bf.prefix)+bf.keySize, bf.valSize)
}

// runBench is the body of every bench subcommand: connect, run the workload,
// write the run file, print the summary, map the outcome to an exit code.
func (a *app) runBench(cmd *cobra.Command, bf *benchFlags, workload func([]*clientv3.Client) (bench.Workload, error)) error {
	if err := bf.validate(); err != nil {
		return usageErr(err)
	}
	if err := bf.worker.apply(&bf.prefix); err != nil {
		return usageErr(err)
	}
	if err := results.CheckWritable(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, bf.conns)
	if err != nil {
		return err
	}
	defer release()
	w, err := workload(clis)
	if err != nil {
		return usageErr(err)
	}
	bench.UseDirect(w, t.Direct) // before any wrapper, which would hide the workload's SetDirect
	if bf.compact > 0 {
		w = bench.WithCompaction(w, t.Client, bf.compact)
	}
	run := a.newRun(cmd, "bench "+cmd.Name(), t)
	cfg := bench.Config{
		Workers: bf.clients, Rate: bf.rate, Total: bf.total, Duration: bf.duration, Warmup: bf.warmup,
		Prefix: bf.prefix, Force: bf.force, KV: t.Client, CommandTimeout: a.conn.CommandTimeout,
	}
	if cfg.Total == 0 && cfg.Duration == 0 {
		cfg.Duration = defaultBenchDuration
	}
	// The progress bar is measure's, the one place every load-driving command shares.
	if err := bf.worker.start(a.stderr, &cfg.Rate, &cfg.Total, run.Flags); err != nil {
		return err
	}
	cfg.StartAt = bf.worker.StartAt
	m := a.measure(ctx, t, cfg, w, run, analyze.Options{})
	if m.Err != nil && len(run.Ops) == 0 {
		return m.Err // nothing was measured: the prefix was in use, the fill failed, ...
	}
	path, werr := a.writeRun(run)
	if werr == nil {
		werr = writeReport(bf.report, run)
	}
	if perr := a.printBench(run, path, &m.Analysis); perr != nil {
		return perr
	}
	switch {
	case run.Interrupted:
		return fmt.Errorf("interrupted: partial results written to %s, keys under %s deleted: %w", path, bf.prefix, context.Canceled)
	case m.Err != nil:
		return m.Err
	case werr != nil:
		return werr
	case !run.Valid && m.Analysis.Verdict.Status != finding.StatusFail:
		// A run the cluster failed (a full quota refused the writes) is the
		// cluster's answer, not a bad measurement: the verdict's fail stands.
		return withCode(ExitInvalid, fmt.Errorf("invalid run: %s", run.InvalidReason))
	}
	return verdictExit(m.Analysis.Verdict.Status)
}

// printBench prints a run's summary and, when rep is not nil, its diagnosis.
func (a *app) printBench(run *results.Run, runFile string, rep *analyze.Result) error {
	if rep != nil {
		rep.Verbose = a.verbose
	}
	return report.Print(a.stdout, a.output, report.NewBench(run, runFile, rep))
}
