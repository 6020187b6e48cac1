package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// defaultCheckPrefix keeps check's keys apart from etcdctl check perf's
// (/etcdctl-check-perf/) and from bench's default.
const defaultCheckPrefix = "/etcdperf/check/"

type checkFlags struct {
	load      string
	profile   string
	duration  time.Duration
	warmup    time.Duration
	p99       time.Duration
	compat    bool
	warmupSet bool
	prefix    string
	force     bool
	report    string
	compact   time.Duration
	worker    workerFlags
}

func newCheckCmd(a *app) *cobra.Command {
	cf := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check a cluster's performance: etcdctl check perf's loads and rule, plus percentiles and a diagnosis",
		Long:  check.Usage,
		Example: `  etcdperf check --endpoints 10.0.0.1:2379 --load m
  etcdperf check --profile kubernetes --duration 2m -w json
  etcdperf check --load s --compat     # exit code as etcdctl check perf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.warmupSet = cmd.Flags().Changed("warmup")
			return a.runCheck(cmd, cf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cf.load, "load", "", "etcdctl check perf load: s, m, l or xl (also small, medium, large, xLarge); default s")
	f.StringVar(&cf.profile, "profile", "", "profile name or YAML file to run instead of --load")
	f.DurationVar(&cf.duration, "duration", 0, "measured window (default: the profile's; 60s for --load)")
	f.DurationVar(&cf.warmup, "warmup", 0, "load before the measured window (default: the profile's)")
	f.DurationVar(&cf.p99, "p99", 0, "p99 response-time threshold of the default verdict (default: the profile's SLO, else 100ms)")
	f.BoolVar(&cf.compat, "compat", false, "exit code follows etcdctl check perf's rule instead of etcdperf's")
	f.StringVar(&cf.prefix, "prefix", defaultCheckPrefix, "key prefix the check writes under and deletes afterwards")
	f.BoolVar(&cf.force, "force", false, "run even when the prefix holds keys; they are deleted after the run")
	f.StringVar(&cf.report, "report", "", "also write a report with plots (text, HTML, PNG, SVG) to this folder")
	f.DurationVar(&cf.compact, "compact-interval", 0, "compact the cluster's history every interval during the load, as kube-apiserver does (default: the profile's compact_interval; it compacts the whole keyspace)")
	cf.worker.register(f)
	return cmd
}

// resolveProfile loads the profile of --load or --profile and applies the overrides.
func (cf *checkFlags) resolveProfile() (*profiles.Profile, error) {
	if cf.load != "" && cf.profile != "" {
		return nil, errors.New("give --load or --profile, not both")
	}
	name := cf.profile
	if name == "" {
		var err error
		if name, err = check.LoadProfile(cf.load); err != nil {
			return nil, err
		}
	}
	e, err := profiles.Load(name)
	switch {
	case err != nil:
		return nil, err
	case cf.prefix == "": // flagRules hold the numeric flags to their ranges
		return nil, errors.New("--prefix must not be empty: check deletes its prefix after the run")
	}
	p := e.Profile
	if cf.duration > 0 {
		p.Duration = profiles.Duration(cf.duration)
	}
	if cf.warmupSet {
		p.Warmup = profiles.Duration(cf.warmup)
	}
	if cf.compact > 0 {
		p.CompactInterval = profiles.Duration(cf.compact)
	}
	return p, nil
}

func (a *app) runCheck(cmd *cobra.Command, cf *checkFlags) error {
	p, err := cf.resolveProfile()
	if err != nil {
		return usageErr(err)
	}
	if err := cf.worker.apply(&cf.prefix); err != nil {
		return usageErr(err)
	}
	if err := results.CheckWritable(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, max(p.Connections, 1))
	if err != nil {
		return err
	}
	defer release()
	if err := cf.worker.start(a.stderr, &p.Rate, nil, nil); err != nil {
		return err
	}
	a.startAt = cf.worker.StartAt
	lr, err := a.runProfile(ctx, cmd, "check", t, clis, p, cf.prefix, cf.force)
	if err != nil {
		return err
	}
	run := lr.Run
	if lr.Err != nil && len(run.Ops) == 0 {
		return lr.Err // nothing was measured: the prefix was in use, the fill failed, ...
	}
	limit, src := check.P99Limit(cf.p99, p)
	verdict, criteria := check.Default(run, lr.Analysis, limit, src)
	compat, err := check.Compat(run)
	if err != nil {
		return err
	}
	// The run file keeps check's own verdict, so a report made from it says what check said.
	run.Diagnosis = lr.Analysis.Diagnosis()
	run.Diagnosis.Verdict = &verdict
	lr.Analysis.Verbose = a.verbose
	res := check.Result{Verdict: verdict, Criteria: criteria, Compat: compat, ExitFollows: "default", Profile: p.Summary(),
		P99LimitMs: float64(limit) / float64(time.Millisecond), P99Source: src}
	if cf.compat {
		res.ExitFollows = "compat"
	}
	if err := run.SetSection(res); err != nil {
		return err
	}
	out := report.NewCheck(run, "", lr.Analysis, res)
	path, werr := a.writeRun(run)
	if werr == nil {
		werr = writeReport(cf.report, run)
	}
	out.RunFile = path
	if perr := report.Print(a.stdout, a.output, out); perr != nil {
		return perr
	}
	status := res.Status()
	switch {
	case run.Interrupted:
		return fmt.Errorf("interrupted: partial results written to %s, keys under %s deleted: %w", path, cf.prefix, context.Canceled)
	case lr.Err != nil:
		return lr.Err
	case werr != nil:
		return werr
	}
	return verdictExit(status)
}

// verdictExit maps a verdict status to the exit code; the verdict is already printed.
func verdictExit(status finding.Status) error {
	switch status {
	case finding.StatusFail:
		return withCode(ExitFail, nil)
	case finding.StatusInvalid:
		return withCode(ExitInvalid, nil)
	}
	return nil
}
