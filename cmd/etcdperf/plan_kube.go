package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// defaultMaxNodes is Kubernetes' supported maximum ("Considerations for large
// clusters": 5,000 nodes): a knee at it reads "at least".
const defaultMaxNodes = 5000

// kubeFlags are plan's --kubernetes flags.
type kubeFlags struct{ plan.KubeConfig }

func (k *kubeFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&k.Cluster, "kubernetes", "", "size etcd for a Kubernetes cluster: nodes=N[,pods=P][,churn=R pods/s][,apiservers=A]; the knee search scales the nodes (and pods and churn with them)")
	f.StringVar(&k.Assume, "kube-assume", "", "--kubernetes: override the model's assumptions, e.g. pod_bytes=8KiB,lists_per_apiserver_per_min=5 (the table is printed)")
	f.StringVar(&k.Model, "kube-model", "", "--kubernetes: YAML file of assumption: value overrides (applied before --kube-assume)")
	f.IntVar(&k.MaxNodes, "max-nodes", defaultMaxNodes, "--kubernetes: the largest cluster to try (Kubernetes supports 5,000 nodes)")
}

func (a *app) runKubePlan(cmd *cobra.Command, pf *planFlags) error {
	kp, err := pf.kube.Validate(pf.Config)
	if err != nil {
		return usageErr(err)
	}
	if pf.report != "" {
		return usageErr(errors.New("--report is not supported with --kubernetes; the run file holds the knee's step"))
	}
	c, as, slo, warmup := kp.Cluster, kp.Assumptions, kp.SLO, kp.Warmup
	requested := plan.Kube(c, as)
	if err := results.CheckWritable(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, requested.APIServers)
	if err != nil {
		return err
	}
	defer release()

	steps := map[int]*plan.KubeSize{}
	var order []*plan.KubeSize
	step := func(nodes int) (bool, error) {
		tr := plan.Kube(c.Scaled(nodes), as)
		ks := plan.KubeProfile(tr, as, pf.StepDuration, warmup)
		if err := profiles.Validate(ks.Profile); err != nil {
			return false, usageErr(fmt.Errorf("the model at %d nodes: %w", nodes, err))
		}
		fmt.Fprintf(a.stderr, "etcdperf: plan step %d: %d nodes, %d pods: %.0f req/s for %s (%d objects filled)\n",
			len(order)+1, tr.Nodes, tr.Pods, ks.Profile.Rate, pf.StepDuration, ks.FillObjects)
		lr, err := a.runProfile(ctx, cmd, "plan", t, clis, ks.Profile, pf.Prefix, pf.force)
		if err != nil {
			return false, err
		}
		if lr.Err != nil {
			err := fmt.Errorf("step at %d nodes: %w", nodes, lr.Err)
			if len(lr.Run.Ops) > 0 {
				// It measured before it failed (a member lost, the cleanup after
				// it): the step is judged and kept, and the search stops with it.
				s := plan.JudgeKube(tr.Nodes, tr.Pods, lr.Run, lr.Analysis, slo, pf.ErrorBudget)
				steps[nodes] = s
				order = append(order, s)
				if ctx.Err() == nil {
					err = stepFailed{err}
				}
			}
			return false, err
		}
		if t.Cluster != nil {
			// Steps at a 5m compaction interval never compact; the embedded etcd is
			// ours, so its history is dropped between steps and does not fill its quota.
			if err := bench.CompactNow(ctx, t.Client); err != nil {
				return false, fmt.Errorf("between steps: %w", err)
			}
		}
		s := plan.JudgeKube(tr.Nodes, tr.Pods, lr.Run, lr.Analysis, slo, pf.ErrorBudget)
		steps[nodes] = s
		order = append(order, s)
		return s.OK, nil
	}
	good, bad, stopped := plan.Search(c.Nodes, pf.kube.MaxNodes, pf.Bisections, plan.BisectResolution, step)
	if stopped != nil {
		if len(order) == 0 {
			return stopped
		}
		good, bad = plan.KubeKnee(order)
	}
	res := plan.NewKubeResult(c, as, slo, order, steps[good], steps[bad], pf.kube.MaxNodes)
	if stopped != nil {
		res.Stop(stopped)
	}
	run := res.RunFile(steps[good])
	if err := run.SetSection(res); err != nil {
		return err
	}
	return stoppedExit(a.stderr, stopped, a.finish(run, res.Verdict.Status, func(path string) (report.Output, error) {
		return report.KubePlan{KubeResult: res, RunFile: path}, nil
	}))
}
