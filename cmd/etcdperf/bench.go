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

// rangeFlags shape range requests (range and mixed).
type rangeFlags struct {
	width       uint64
	limit       int64
	consistency string
	keysOnly    bool
	countOnly   bool
}

func (r *rangeFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Uint64Var(&r.width, "range-width", 1, "keys per range request: [start, start+N) from a random start; 1 is a single-key get")
	f.Int64Var(&r.limit, "limit", 0, "maximum keys a range returns (0: no limit)")
	f.StringVar(&r.consistency, "consistency", "l", "l (linearizable) or s (serializable)")
	f.BoolVar(&r.keysOnly, "keys-only", false, "return keys only")
	f.BoolVar(&r.countOnly, "count-only", false, "return the count only")
}

// watchFlags shape watchers (watch and mixed).
type watchFlags struct {
	watchers    int
	streams     int
	watchedKeys uint64
	prefix      bool
}

func (w *watchFlags) register(cmd *cobra.Command, watchers int, what string) {
	f := cmd.Flags()
	f.IntVar(&w.watchers, "watchers", watchers, "watchers in all"+what)
	f.IntVar(&w.streams, "streams", 1, "gRPC watch streams the watchers spread over (over the --conns connections)")
	f.Uint64Var(&w.watchedKeys, "watched-keys", 1, "keys the watchers spread over")
	f.BoolVar(&w.prefix, "watch-prefix", false, "every watcher watches the whole prefix, as kube-apiserver's watch cache watches a resource: each event reaches every watcher")
}

func newBenchCmd(a *app) *cobra.Command {
	bf := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Drive put, range, watch, txn, lease, list or mixed load against etcd and measure it",
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
	cmd.AddCommand(newBenchPutCmd(a, bf), newBenchRangeCmd(a, bf), newBenchWatchCmd(a, bf), newBenchMixedCmd(a, bf),
		newBenchTxnCmd(a, bf), newBenchLeaseCmd(a, bf), newBenchListCmd(a, bf))
	return cmd
}

func newBenchPutCmd(a *app, bf *benchFlags) *cobra.Command {
	var keySpace uint64
	var sequential bool
	cmd := &cobra.Command{
		Use:   "put",
		Short: "Put a value to keys under the prefix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				return bench.NewPut(clis, bench.PutConfig{Prefix: bf.prefix, KeySize: bf.keySize, ValSize: bf.valSize, KeySpace: keySpace, Sequential: sequential})
			})
		},
	}
	cmd.Flags().Uint64Var(&keySpace, "key-space-size", 1, "distinct keys written (1, as etcd's benchmark)")
	cmd.Flags().BoolVar(&sequential, "sequential-keys", false, "write keys in order; default is uniformly random")
	return cmd
}

func newBenchRangeCmd(a *app, bf *benchFlags) *cobra.Command {
	var keys uint64
	var rf rangeFlags
	cmd := &cobra.Command{
		Use:   "range",
		Short: "Fill keys under the prefix, then range over them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				return bench.NewRange(clis, bench.RangeConfig{
					Prefix: bf.prefix, KeySize: bf.keySize, ValSize: bf.valSize, Keys: keys,
					Width: rf.width, Limit: rf.limit, Consistency: rf.consistency, KeysOnly: rf.keysOnly, CountOnly: rf.countOnly,
				})
			})
		},
	}
	cmd.Flags().Uint64Var(&keys, "keys", 1000, "keys filled (not measured) before the run")
	rf.register(cmd)
	return cmd
}

func newBenchWatchCmd(a *app, bf *benchFlags) *cobra.Command {
	var wf watchFlags
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Watch keys while putting to them; latency is from each put's send to each watcher",
		Long:  bench.WatchUsage,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				return bench.NewWatch(clis, bench.WatchConfig{
					Prefix: bf.prefix, KeySize: bf.keySize, ValSize: bf.valSize,
					Watchers: wf.watchers, Streams: wf.streams, WatchedKeys: wf.watchedKeys, PrefixWatch: wf.prefix,
				})
			})
		},
	}
	wf.register(cmd, 10, "")
	return cmd
}

func newBenchMixedCmd(a *app, bf *benchFlags) *cobra.Command {
	var (
		keySpace  uint64
		readRatio float64
		rf        rangeFlags
		wf        watchFlags
		mf        mixFlags
	)
	cmd := &cobra.Command{
		Use:   "mixed",
		Short: "Read and write one key set by ratio, optionally watched; each op type reported",
		Long:  bench.MixedUsage,
		Example: `  etcdperf bench mixed --rate 500 --read-ratio 0.9
  etcdperf bench mixed --rate 300 --ratios txn=0.7,txn-create=0.1,txn-delete=0.1,list=0.01,lease=0.09 --watchers 3 --watch-prefix`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if mf.ratios != "" {
				if cmd.Flags().Changed("read-ratio") {
					return usageErr(errors.New("--read-ratio and --ratios exclude each other: give range=R in --ratios"))
				}
				p, err := mf.profile(bf, keySpace, rf, wf)
				if err != nil {
					return usageErr(err)
				}
				return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
					w, _, err := profiles.Build(p, clis, bf.prefix)
					return w, err
				})
			}
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				return bench.NewMixed(clis, bench.MixedConfig{
					Prefix: bf.prefix, KeySize: bf.keySize, ValSize: bf.valSize, KeySpace: keySpace, ReadRatio: readRatio,
					Width: rf.width, Limit: rf.limit, Consistency: rf.consistency, KeysOnly: rf.keysOnly, CountOnly: rf.countOnly,
					Watchers: wf.watchers, Streams: wf.streams, WatchedKeys: wf.watchedKeys, PrefixWatch: wf.prefix,
				})
			})
		},
	}
	cmd.Flags().Uint64Var(&keySpace, "key-space-size", 1000, "keys filled first, then read and overwritten")
	cmd.Flags().Float64Var(&readRatio, "read-ratio", 0.8, "fraction of requests that are ranges; the rest are puts")
	rf.register(cmd)
	wf.register(cmd, 0, " (0: no watch load)")
	mf.register(cmd)
	return cmd
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
		Prefix: bf.prefix, Force: bf.force, KV: t.Client,
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
	if perr := a.printBench(run, path, &m.Report); perr != nil {
		return perr
	}
	switch {
	case run.Interrupted:
		return fmt.Errorf("interrupted: partial results written to %s, keys under %s deleted: %w", path, bf.prefix, context.Canceled)
	case m.Err != nil:
		return m.Err
	case werr != nil:
		return werr
	case !run.Valid && m.Report.Verdict.Status != finding.StatusFail:
		// A run the cluster failed (a full quota refused the writes) is the
		// cluster's answer, not a bad measurement: the verdict's fail stands.
		return withCode(ExitInvalid, fmt.Errorf("invalid run: %s", run.InvalidReason))
	}
	return verdictExit(m.Report.Verdict.Status)
}

// printBench prints a run's summary and, when rep is not nil, its diagnosis.
func (a *app) printBench(run *results.Run, runFile string, rep *analyze.Report) error {
	if rep != nil {
		rep.Verbose = a.verbose
	}
	return report.Print(a.stdout, a.output, report.NewBench(run, runFile, rep))
}
