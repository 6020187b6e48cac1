package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/bundle"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

func newAnalyzeCmd(a *app) *cobra.Command {
	var (
		dumps   []string
		pf      = &promFlags{}
		cores   float64
		memory  int64
		window  time.Duration
		clients int
		rules   bool
	)
	cmd := &cobra.Command{
		Use:   "analyze RUNFILE | BUNDLE | --metrics BEFORE --metrics AFTER",
		Short: "Name the bottleneck of a run file, or of two saved /metrics dumps of a member",
		Long:  analyze.Usage,
		Example: `  etcdperf analyze results/bench-put-20260102T030405Z.json
  etcdperf analyze --metrics before.txt --metrics after.txt --cores 4 --memory 8589934592 -w json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rules {
				return report.Print(a.stdout, a.output, report.Rules(analyze.Rules))
			}
			opts := analyze.Options{Cores: cores, MemoryBytes: memory, WindowSeconds: window.Seconds(), Clients: clients}
			var rep analyze.Result
			var err error
			switch {
			case pf.set() && len(dumps) == 0:
				pf.stdin = a.stdin
				rep, err = analyzePrometheus(cmd.Context(), pf, args, opts)
			case len(args) == 1 && len(dumps) == 0 && bundle.Is(args[0]):
				rep, err = analyzeBundle(args[0])
			case len(args) == 1 && len(dumps) == 0:
				return a.analyzeRunFile(args[0], opts)
			case len(args) == 0 && len(dumps) == 2:
				rep, err = analyze.DumpFiles(dumps[0], dumps[1], opts)
			default:
				return usageErr(fmt.Errorf("give a RUNFILE or --metrics twice (before, after), not both"))
			}
			if err != nil {
				return err
			}
			rep.Verbose = a.verbose
			if err := report.Print(a.stdout, a.output, report.Analysis(rep)); err != nil {
				return err
			}
			return verdictExit(rep.Verdict.Status)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&dumps, "metrics", nil, "a saved /metrics dump of one member; give it twice: before, then after")
	pf.register(f)
	f.Float64Var(&cores, "cores", 0, "CPUs of the member (default: the run's host facts when the members ran on that host)")
	f.Int64Var(&memory, "memory", 0, "memory of the member in bytes, its cgroup limit if it has one (default: as --cores)")
	f.DurationVar(&window, "window", 0, "time between the two --metrics dumps (default: the files' modification times)")
	f.BoolVar(&rules, "rules", false, "print the rule table (signal, threshold, source) as Markdown and exit")
	f.IntVar(&clients, "clients", 0, "number of clients, for the workload's hardware tier (default: the run's --clients)")
	return cmd
}

// analyzeRunFile grades a run file again. A file a judging command wrote (check,
// qualify, plan) prints that command's stored output, verdict and steps, and
// exits by its verdict; the file's own run's diagnosis follows, labelled. One
// line says where this build's rules grade the file's inputs apart from the
// verdict it stores (a file of an older etcdperf).
func (a *app) analyzeRunFile(path string, opts analyze.Options) error {
	run, err := results.Open(path, a.stdin)
	if err != nil {
		return err
	}
	rep, err := analyze.Run(run, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rep.Verbose = a.verbose
	regraded, err := report.Regraded(run)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	job, ok, err := report.JobOf(run, path, rep)
	if err != nil {
		return err
	}
	var o report.Output = report.Analysis(rep)
	status := rep.Verdict.Status
	if ok {
		job.Regraded = regraded
		o, status = job, job.Status
	} else if regraded != "" {
		rep.Notes = append(rep.Notes, regraded)
		o = report.Analysis(rep)
	}
	if err := report.Print(a.stdout, a.output, o); err != nil {
		return err
	}
	return verdictExit(status)
}

// analyzeBundle grades a bundle's scrapes and member statuses again, as bundle
// graded them when it wrote the archive.
func analyzeBundle(path string) (analyze.Result, error) {
	b, err := bundle.Open(path)
	if err != nil {
		return analyze.Result{}, err
	}
	rep, err := bundle.Judge(b)
	if err != nil {
		return analyze.Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
