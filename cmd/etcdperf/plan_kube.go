package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/measure"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Defaults of plan --kubernetes.
const (
	// defaultMaxNodes is Kubernetes' supported maximum ("Considerations for large
	// clusters": 5,000 nodes): a knee at it reads "at least".
	defaultMaxNodes = 5000
	// defaultKubeWarmup keeps each step's start (new watchers, first leases) out of its window.
	defaultKubeWarmup = 2 * time.Second
	// listP99Bound bounds the p99 of a whole LIST: SIG Scalability's API call latency
	// SLO for cluster-scoped LISTs is 30 s at the 99th percentile; the SLO of
	// --slo applies to its pages' single requests.
	listP99Bound = 30 * time.Second
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

// kubePlanJSON is plan --kubernetes's -w json object: plan's fields with steps
// in nodes, and the answer in the user's units.
type kubePlanJSON struct {
	Verdict    finding.Verdict   `json:"verdict"`
	Findings   []finding.Finding `json:"findings"`
	Knee       *plan.Knee        `json:"knee"`
	SLO        []plan.Target     `json:"slo"`
	Steps      []*kubeStepJSON   `json:"steps"`
	Kubernetes kubeJSON          `json:"kubernetes"`
	RunFile    string            `json:"run_file"`
}

// kubeStepJSON is one cluster size the search tried.
type kubeStepJSON struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	plan.RateStep
	// Lists is the whole LISTs the step ran, ListP99Ms their p99 response time.
	Lists     int64   `json:"lists"`
	ListP99Ms float64 `json:"list_p99_ms"`
}

// kubeJSON is the answer: the largest cluster that held, what runs out first,
// and the model with every number it used.
type kubeJSON struct {
	NodesAtKnee int     `json:"nodes_at_knee"`
	PodsAtKnee  int     `json:"pods_at_knee"`
	ChurnAtKnee float64 `json:"churn_at_knee"`
	// LatencyKneeNodes is the largest size whose step held the SLO; NodesAtQuota
	// where the model's db size reaches the quota. NodesAtKnee is the smaller.
	LatencyKneeNodes int              `json:"latency_knee_nodes"`
	NodesAtQuota     int              `json:"nodes_at_quota"`
	ReachedMaxNodes  bool             `json:"reached_max_nodes"`
	RunsOutFirst     string           `json:"runs_out_first"`
	Requested        plan.KubeCluster `json:"requested"`
	Model            kubeModelJSON    `json:"model"`
}

type kubeModelJSON struct {
	Assumptions plan.Assumptions `json:"assumptions"`
	// Requested and AtKnee are the model's traffic at the requested size and at the knee.
	Requested plan.KubeTraffic  `json:"requested"`
	AtKnee    *plan.KubeTraffic `json:"at_knee"`
	// ListP99Ms is the bound of a whole LIST (SIG Scalability, cluster-scoped LIST).
	ListP99Ms float64 `json:"list_p99_ms"`
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

// judgeKubeStep is judgeStep with the LIST judged against its own bound: a
// whole LIST of thousands of objects is many requests, and the SLO applies to
// single-object calls (and to every page).
func judgeKubeStep(lr measure.Measured, slo []plan.Target, budget float64) (s plan.RateStep, lists int64, listMs float64) {
	run := *lr.Run
	run.Ops = append([]results.Op(nil), lr.Run.Ops...)
	var offered float64
	for i := range run.Ops {
		offered += run.Ops[i].TargetRPS
		if run.Ops[i].Op == "list" {
			lists, listMs = run.Ops[i].Requests, run.Ops[i].Latency.P99
			run.Ops[i].TargetRPS = 0
		}
	}
	s = plan.Judge(&run, lr.Report, slo, budget)
	s.OfferedRPS = offered
	if bound := float64(listP99Bound.Milliseconds()); listMs > bound {
		s.OK = false
		msg := fmt.Sprintf("list p99 %s > %s", fmtMs(listMs), fmtMs(bound))
		s.Broke = strings.TrimPrefix(s.Broke+"; "+msg, "; ")
	}
	return s, lists, listMs
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
	if err := checkWritableDir(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, requested.APIServers)
	if err != nil {
		return err
	}
	defer release()

	steps := map[int]*kubeStepJSON{}
	var order []*kubeStepJSON
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
		s, lists, listMs := judgeKubeStep(lr, slo, pf.errorBudget)
		s.Run = lr.Run
		ksj := &kubeStepJSON{Nodes: tr.Nodes, Pods: tr.Pods, RateStep: s, Lists: lists, ListP99Ms: listMs}
		steps[nodes] = ksj
		order = append(order, ksj)
		return s.OK, nil
	}
	good, bad, err := plan.Search(c.Nodes, pf.kube.maxNodes, pf.bisections, plan.BisectResolution, step)
	if err != nil {
		return err
	}
	out := kubeResult(c, as, requested, slo, order, steps[good], steps[bad], pf.kube.maxNodes)
	keep := order[0]
	if g := steps[good]; g != nil {
		keep = g
	}
	run := keep.Run
	rs := make([]*plan.RateStep, len(order))
	for i, o := range order {
		rs[i] = &o.RateStep
	}
	run.Steps = plan.StepRuns(rs)
	run.Diagnosis = &finding.Diagnosis{Verdict: &out.Verdict, Findings: out.Findings}
	path, werr := a.writeRun(run)
	out.RunFile = path
	if err := a.printKubePlan(out); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return verdictExit(out.Verdict.Status)
}

// kubeResult is the answer in nodes: the smaller of the latency knee and the
// model's quota limit, what runs out first, and the verdict on the requested size.
func kubeResult(c plan.KubeCluster, as plan.Assumptions, requested plan.KubeTraffic, slo []plan.Target, order []*kubeStepJSON, good, bad *kubeStepJSON, maxNodes int) kubePlanJSON {
	out := kubePlanJSON{SLO: slo, Steps: order, Findings: []finding.Finding{}}
	k := kubeJSON{Requested: c, NodesAtQuota: requested.NodesAtQuota, ReachedMaxNodes: good != nil && bad == nil,
		Model: kubeModelJSON{Assumptions: as, Requested: requested, ListP99Ms: float64(listP99Bound.Milliseconds())}}
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	diag := bad
	if diag == nil {
		diag = good
	}
	if diag != nil && diag.Report.Findings != nil {
		out.Findings = diag.Report.Findings
	}
	var latency string
	if bad != nil {
		k.RunsOutFirst = bad.RanOut()
		v.Ranked = bad.Report.Verdict.Ranked
		latency = fmt.Sprintf("at %d nodes it broke: %s; bottleneck %s — %s", bad.Nodes, bad.Broke, k.RunsOutFirst, bad.Report.Verdict.Summary)
	}
	if good != nil {
		k.LatencyKneeNodes = good.Nodes
		out.Knee = &plan.Knee{ThroughputRPS: good.ThroughputRPS, OfferedRPS: good.OfferedRPS, P99Ms: good.P99Ms, ReachedMaxRate: bad == nil}
	}
	k.NodesAtKnee = k.LatencyKneeNodes
	quotaFirst := good != nil && k.NodesAtQuota < k.NodesAtKnee
	if quotaFirst {
		k.NodesAtKnee, k.RunsOutFirst = k.NodesAtQuota, "quota"
	}
	if k.NodesAtKnee > 0 {
		at := plan.Kube(c.Scaled(k.NodesAtKnee), as)
		k.PodsAtKnee, k.ChurnAtKnee, k.Model.AtKnee = at.Pods, at.Churn, &at
	}
	if k.RunsOutFirst == "" {
		k.RunsOutFirst = finding.BottleneckNone
	}
	v.Bottleneck = k.RunsOutFirst
	sloText := sloString(slo)
	var parts []string
	switch {
	case good == nil:
		v.Status = finding.StatusFail
		parts = append(parts, fmt.Sprintf("fail: even %d nodes broke the SLO (%s): %s", order[len(order)-1].Nodes, sloText, order[len(order)-1].Broke))
	default:
		at := "about"
		if k.ReachedMaxNodes && !quotaFirst {
			at = "at least"
		}
		if k.NodesAtKnee < c.Nodes {
			v.Status = finding.StatusFail
		}
		parts = append(parts, fmt.Sprintf("%s: this etcd serves a cluster of %s %d nodes / %d pods at churn %.3g pods/s within %s (%d apiservers);",
			v.Status, at, k.NodesAtKnee, k.PodsAtKnee, k.ChurnAtKnee, sloText, requested.APIServers))
	}
	switch {
	case quotaFirst:
		parts = append(parts, fmt.Sprintf("what runs out first is the quota: the model's db (live objects and events plus two compaction intervals of history, %.0f MiB at %d nodes) reaches %.0f MiB at %d nodes, before the latency knee (%s)",
			requested.DBBytes/(1<<20), c.Nodes, as.Get(plan.QuotaBytes)/(1<<20), k.NodesAtQuota, kneeText(k, bad)))
	case bad != nil:
		parts = append(parts, "what runs out first: "+latency)
	case good != nil:
		parts = append(parts, fmt.Sprintf("nothing ran out up to --max-nodes %d (Kubernetes' supported maximum is 5,000); the model's db reaches the quota at %d nodes", maxNodes, k.NodesAtQuota))
	}
	v.Summary = strings.Join(parts, " ")
	out.Verdict, out.Kubernetes = v, k
	return out
}

func kneeText(k kubeJSON, bad *kubeStepJSON) string {
	if bad == nil {
		return fmt.Sprintf("≥ %d nodes", k.LatencyKneeNodes)
	}
	return fmt.Sprintf("%d nodes; at %d: %s", k.LatencyKneeNodes, bad.Nodes, bad.Broke)
}

func sloString(slo []plan.Target) string {
	var s []string
	for _, t := range slo {
		s = append(s, t.Name+" ≤ "+fmtMs(t.MaxMs))
	}
	return strings.Join(s, ", ")
}

func (a *app) printKubePlan(out kubePlanJSON) error {
	if a.output == "json" {
		return a.printJSON(out)
	}
	w, k := a.stdout, out.Kubernetes
	r := k.Model.Requested
	fmt.Fprintf(w, "plan --kubernetes: %d nodes, %d pods, churn %.3g pods/s, %d apiservers; SLO %s (a whole LIST: p99 ≤ %s)\n",
		r.Nodes, r.Pods, r.Churn, r.APIServers, sloString(out.SLO), fmtMs(k.Model.ListP99Ms))
	fmt.Fprintln(w, "model:")
	tw := a.table()
	for _, as := range k.Model.Assumptions {
		mark := ""
		if as.Overridden {
			mark = " (overridden)"
		}
		fmt.Fprintf(tw, "  %s\t%g %s%s\t%s\n", as.Key, as.Value, as.Unit, mark, as.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "traffic at %d nodes: %.1f updates/s, %.2g creates/s, %.2g deletes/s, %.3g events/s on %.2g lease grants/s, %.2g LISTs/s of %d pods (%d pages), %.0f watch events/s; %d objects of %.0f B, db ≈ %.0f MiB (quota at %d nodes)\n",
		r.Nodes, r.UpdatesPerS, r.CreatesPerS, r.DeletesPerS, r.EventsPerS, r.LeaseGrantsPerS, r.ListsPerS, r.ListObjects, r.ListPages, r.WatchEventsPerS, r.Objects, r.ObjectBytes, r.DBBytes/(1<<20), r.NodesAtQuota)
	tw = a.table()
	fmt.Fprintln(tw, "  STEP\tNODES\tPODS\tOFFERED\tTHROUGHPUT\tP99\tLIST P99 (LISTS)\tRESULT")
	for i, s := range out.Steps {
		res := "ok"
		if !s.OK {
			res = "BROKE: " + s.Broke
		}
		list := "-"
		if s.Lists > 0 {
			list = fmt.Sprintf("%s (%d)", fmtMs(s.ListP99Ms), s.Lists)
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\n", i+1, s.Nodes, s.Pods, s.OfferedRPS, s.ThroughputRPS, fmtMs(s.P99Ms), list, res)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "answer: %d nodes, %d pods (runs out first: %s)\n", k.NodesAtKnee, k.PodsAtKnee, k.RunsOutFirst)
	fmt.Fprintf(w, "%s  bottleneck: %s\n%s\n", strings.ToUpper(out.Verdict.Status), out.Verdict.Bottleneck, out.Verdict.Summary)
	for _, f := range out.Findings {
		if f.Severity == finding.Fail || f.Severity == finding.Warn {
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
		}
	}
	fmt.Fprintf(w, "run file: %s\n", out.RunFile)
	return nil
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
