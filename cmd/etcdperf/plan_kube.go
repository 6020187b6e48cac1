package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// Defaults of plan --kubernetes.
const (
	// defaultMaxNodes is Kubernetes' supported maximum ("Considerations for large
	// clusters": 5,000 nodes): a knee at it reads "at least".
	defaultMaxNodes = 5000
	// defaultKubeWarmup keeps each step's start (new watchers, first leases) out of its window.
	defaultKubeWarmup = 2 * time.Second
)

// kubeFlags are plan's --kubernetes flags.
type kubeFlags struct {
	cluster  string
	assume   string
	model    string
	maxNodes int
}

func (k *kubeFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&k.cluster, "kubernetes", "", "size etcd for a Kubernetes cluster: nodes=N[,pods=P][,churn=R pods/s][,apiservers=A]; the knee search scales the nodes (and pods and churn with them)")
	f.StringVar(&k.assume, "kube-assume", "", "--kubernetes: override the model's assumptions, e.g. pod_bytes=8KiB,lists_per_apiserver_per_min=5 (the table is printed)")
	f.StringVar(&k.model, "kube-model", "", "--kubernetes: YAML file of assumption: value overrides (applied before --kube-assume)")
	f.IntVar(&k.maxNodes, "max-nodes", defaultMaxNodes, "--kubernetes: the largest cluster to try (Kubernetes supports 5,000 nodes)")
}

// kubeAssumptions is the model's table with the file's and the flag's overrides.
func (k *kubeFlags) assumptions() (plan.Assumptions, error) {
	as := plan.DefaultAssumptions()
	if k.model != "" {
		b, err := os.ReadFile(k.model)
		if err != nil {
			return nil, fmt.Errorf("--kube-model: %w", err)
		}
		if err := as.ParseFile(b); err != nil {
			return nil, fmt.Errorf("--kube-model %s: %w", k.model, err)
		}
	}
	if err := as.ParseOverrides(k.assume); err != nil {
		return nil, fmt.Errorf("--kube-assume: %w", err)
	}
	return as, nil
}

func (a *app) runKubePlan(cmd *cobra.Command, pf *planFlags) error {
	if pf.profile != "" {
		return usageErr(errors.New("--kubernetes and --profile exclude each other: the model makes the profile"))
	}
	c, err := plan.ParseKubeCluster(pf.kube.cluster)
	if err != nil {
		return usageErr(err)
	}
	as, err := pf.kube.assumptions()
	if err != nil {
		return usageErr(err)
	}
	if pf.compact != 0 {
		if err := as.Set(plan.CompactionS, pf.compact.Seconds()); err != nil {
			return usageErr(fmt.Errorf("--compact-interval: %w", err))
		}
	}
	if pf.slo == "" {
		pf.slo = "p99=" + profiles.DefaultP99.String()
	}
	slo, err := plan.ParseSLO(pf.slo)
	switch {
	case err != nil:
		return usageErr(err)
	case pf.kube.maxNodes < c.Nodes:
		return usageErr(fmt.Errorf("--max-nodes %d is under the %d nodes asked for", pf.kube.maxNodes, c.Nodes))
	case pf.stepDuration <= 0 || pf.warmup < 0:
		return usageErr(errors.New("--step-duration must be positive and --warmup not negative"))
	case pf.errorBudget < 0 || pf.errorBudget >= 1 || pf.bisections < 0 || pf.prefix == "":
		return usageErr(errors.New("--error-budget must be in [0, 1), --bisections not negative, --prefix not empty"))
	case pf.report != "":
		return usageErr(errors.New("--report is not supported with --kubernetes; the run file holds the knee's step"))
	}
	warmup := defaultKubeWarmup
	if pf.warmupSet {
		warmup = pf.warmup
	}
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
		ks := plan.KubeProfile(tr, as, pf.stepDuration, warmup)
		if err := profiles.Validate(ks.Profile); err != nil {
			return false, usageErr(fmt.Errorf("the model at %d nodes: %w", nodes, err))
		}
		fmt.Fprintf(a.stderr, "etcdperf: plan step %d: %d nodes, %d pods: %.0f req/s for %s (%d objects filled)\n",
			len(order)+1, tr.Nodes, tr.Pods, ks.Profile.Rate, pf.stepDuration, ks.FillObjects)
		lr, err := a.runProfile(ctx, cmd, "plan", t, clis, ks.Profile, pf.prefix, pf.force)
		if err != nil {
			return false, err
		}
		if lr.Err != nil {
			return false, fmt.Errorf("step at %d nodes: %w", nodes, lr.Err)
		}
		if t.Cluster != nil {
			// Steps at a 5m compaction interval never compact; the embedded etcd is
			// ours, so its history is dropped between steps and does not fill its quota.
			if err := compactNow(ctx, t.Client); err != nil {
				return false, err
			}
		}
		s := plan.JudgeKube(tr.Nodes, tr.Pods, lr.Run, lr.Report, slo, pf.errorBudget)
		steps[nodes] = s
		order = append(order, s)
		return s.OK, nil
	}
	good, bad, err := plan.Search(c.Nodes, pf.kube.maxNodes, pf.bisections, plan.BisectResolution, step)
	if err != nil {
		return err
	}
	res := plan.NewKubeResult(c, as, slo, order, steps[good], steps[bad], pf.kube.maxNodes)
	keep := order[0]
	if g := steps[good]; g != nil {
		keep = g
	}
	run := keep.Run
	run.Steps = plan.StepRuns(res.RateSteps())
	run.Diagnosis = res.Diagnosis()
	return a.finish(run, res.Verdict.Status, func(path string) (report.Output, error) {
		return report.KubePlan{KubeResult: res, RunFile: path}, nil
	})
}

// compactNow compacts cli's cluster to its current revision, physically.
func compactNow(ctx context.Context, cli *clientv3.Client) error {
	resp, err := cli.Get(ctx, "compact_rev_key", clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("compact the embedded etcd between steps: %w", err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compact the embedded etcd between steps: %w", err)
	}
	return nil
}
