package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// defaultStepDuration: a few steps of 10 s each find the knee of most clusters in
// a couple of minutes.
const defaultStepDuration = 10 * time.Second

// planFlags are plan's flags: the rate plan's, datascale's and --kubernetes's.
type planFlags struct {
	plan.Config
	force  bool
	report string

	datascaleOn bool
	datascale   plan.DatascaleConfig

	kube kubeFlags
}

func newPlanCmd(a *app) *cobra.Command {
	pf := &planFlags{}
	cmd := &cobra.Command{
		Use:   "plan --profile NAME --slo p99=25ms",
		Short: "Find the highest load of a profile the cluster sustains within a latency SLO, and what runs out first",
		Long:  plan.Usage,
		Example: `  etcdperf plan --endpoints 10.0.0.1:2379 --profile kubernetes --slo p99=25ms --expected-rps 500
  etcdperf plan --profile write-heavy --slo p99=10ms,p50=2ms --max-rate 4000 --report plan-report/
  etcdperf plan --datascale --keys 100000 --val-size 1KiB
  etcdperf plan --kubernetes nodes=200
  etcdperf plan --kubernetes nodes=1000,pods=40000,churn=20,apiservers=3 --kube-assume pod_bytes=8KiB -w json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pf.WarmupSet = cmd.Flags().Changed("warmup")
			if pf.datascaleOn {
				pf.datascale.Prefix = pf.Prefix
				return a.runDatascale(cmd, pf)
			}
			if pf.kube.Cluster != "" {
				return a.runKubePlan(cmd, pf)
			}
			return a.runPlan(cmd, pf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&pf.Profile, "profile", "", "profile name or YAML file whose shape is ramped (etcdperf profiles list)")
	f.StringVar(&pf.SLO, "slo", "", "latency objective of every paced op, e.g. p99=25ms or p50=5ms,p99=25ms (p50, p90, p99, p999)")
	f.Float64Var(&pf.ExpectedRPS, "expected-rps", 0, "the load you expect, requests/s: the headroom is reported over it and the exit code judges it")
	f.Float64Var(&pf.MaxRate, "max-rate", plan.DefaultMaxRate, "highest rate to offer, requests/s")
	f.Float64Var(&pf.StartRate, "start-rate", 0, "first rate offered (default: the profile's rate, at most --max-rate)")
	f.DurationVar(&pf.StepDuration, "step-duration", defaultStepDuration, "measured window of each step")
	f.DurationVar(&pf.Warmup, "warmup", 0, "load before each step's window (default: the profile's)")
	f.Float64Var(&pf.ErrorBudget, "error-budget", 0.001, "fraction of requests that may fail in a step")
	f.IntVar(&pf.Bisections, "bisections", plan.DefaultBisections, "bisection steps between the last good and the first broken rate")
	f.StringVar(&pf.Prefix, "prefix", "/etcdperf/plan/", "key prefix plan writes under and deletes after each step")
	f.BoolVar(&pf.force, "force", false, "run even when the prefix holds keys; they are deleted")
	f.StringVar(&pf.report, "report", "", "folder to write report.txt, report.html and the curve plot into")
	f.BoolVar(&pf.datascaleOn, "datascale", false, "measure db size and memory per key instead of ramping a rate")
	f.Uint64Var(&pf.datascale.Keys, "keys", 10000, "--datascale: keys to fill")
	f.StringVar(&pf.datascale.ValSize, "val-size", "1KiB", "--datascale: value size (bytes, or with KiB/MiB)")
	f.IntVar(&pf.datascale.KeySize, "key-size", 64, "--datascale: key bytes after the prefix")
	f.DurationVar(&pf.Compact, "compact-interval", 0, "compact the cluster's history every interval during each step, as kube-apiserver does (default: the profile's compact_interval; with --kubernetes, the model's compaction_interval_s)")
	pf.kube.register(cmd)
	return cmd
}

func (a *app) runPlan(cmd *cobra.Command, pf *planFlags) error {
	p, slo, err := pf.Validate()
	if err != nil {
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

	n := 0
	step := func(rate float64) (*plan.RateStep, error) {
		q := *p
		q.Rate = rate
		n++
		fmt.Fprintf(a.stderr, "etcdperf: plan step %d: %.0f req/s for %s\n", n, rate, q.Duration)
		lr, err := a.runProfile(ctx, cmd, "plan", t, clis, &q, pf.Prefix, pf.force)
		if err != nil {
			return nil, err
		}
		if lr.Err != nil {
			err := fmt.Errorf("step at %.0f req/s: %w", rate, lr.Err)
			if len(lr.Run.Ops) == 0 {
				return nil, err
			}
			// It measured before it failed (a member lost, the cleanup after it):
			// the step is judged and kept, and the search stops with it. Unless
			// interrupted, that is the cluster's answer: the plan fails (exit 1).
			s := plan.Judge(lr.Run, lr.Analysis, slo, pf.ErrorBudget)
			s.OfferedRPS = rate
			if ctx.Err() == nil {
				err = stepFailed{err}
			}
			return &s, err
		}
		s := plan.Judge(lr.Run, lr.Analysis, slo, pf.ErrorBudget)
		s.OfferedRPS = rate
		return &s, nil
	}
	steps, good, bad, stopped := pf.Ramp().Run(step)
	if stopped != nil && len(steps) == 0 {
		return stopped
	}
	res := plan.NewResult(slo, pf.ExpectedRPS, pf.MaxRate, steps, good, bad)
	if stopped != nil {
		res.Stop(stopped)
	}
	prof := p.Summary()
	prof.DurationS = pf.StepDuration.Seconds()
	run := plan.RunFile(steps, good, res.Diagnosis())
	if err := run.SetSection(plan.Record{Result: res, Profile: prof}); err != nil {
		return err
	}
	return stoppedExit(a.stderr, stopped, a.finish(run, res.Verdict.Status, func(path string) (report.Output, error) {
		out := report.Plan{Result: res, Profile: prof, RunFile: path}
		if pf.report != "" {
			if err := writeReport(pf.report, run); err != nil {
				return nil, err
			}
			out.Report = pf.report
		}
		return out, nil
	}))
}

// stepFailed is a step that measured and then failed (a member died, the
// cluster became unreachable mid-load): the cluster's failure, which the plan's
// verdict fails with, not a bad invocation.
type stepFailed struct{ error }

func (e stepFailed) Unwrap() error { return e.error }

// stoppedExit is the exit of a plan whose search stopped early with stopped
// (nil: it finished) once finish printed the steps that did and wrote the run
// file: the verdict's (exit 1) when a step failed after it measured, whose
// error stderr names; else the stop's own error (exit 2, or 130 when
// interrupted); unless finish itself failed to write or print.
func stoppedExit(stderr io.Writer, stopped, finished error) error {
	var failed stepFailed
	switch {
	case stopped == nil || (finished != nil && cli.Code(finished) == ExitError):
		return finished
	case errors.As(stopped, &failed):
		fmt.Fprintf(stderr, "etcdperf: plan: the search stopped: %v\n", stopped)
		return finished
	}
	return stopped
}

// finish is the tail of the commands that judge: it writes the run file, prints
// the output made with its path, and exits by the verdict's status. A run file
// that could not be written is reported after the output.
func (a *app) finish(run *results.Run, status finding.Status, output func(runFile string) (report.Output, error)) error {
	path, werr := a.writeRun(run)
	o, err := output(path)
	if err != nil {
		return err
	}
	if err := report.Print(a.stdout, a.output, o); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return verdictExit(status)
}
