package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Ramp defaults: a few steps of 10 s each find the knee of most clusters in a
// couple of minutes; bisection stops when the bracket is within 5%.
const (
	defaultStepDuration = 10 * time.Second
	defaultMaxRate      = 50000
	defaultBisections   = 3
	bisectResolution    = 0.05
)

type planFlags struct {
	profile      string
	slo          string
	expected     float64
	maxRate      float64
	startRate    float64
	stepDuration time.Duration
	warmup       time.Duration
	warmupSet    bool
	errorBudget  float64
	bisections   int
	prefix       string
	force        bool
	report       string

	datascale bool
	keys      uint64
	valSize   string
	keySize   int

	compact time.Duration
	kube    kubeFlags
}

func newPlanCmd(a *app) *cobra.Command {
	pf := &planFlags{}
	cmd := &cobra.Command{
		Use:   "plan --profile NAME --slo p99=25ms",
		Short: "Find the highest load of a profile the cluster sustains within a latency SLO, and what runs out first",
		Long: `plan ramps an open-loop rate of a profile: it doubles the rate from --start-rate
until a step breaks (a p99 over the SLO, errors over --error-budget, or less than 95%
of the offered rate achieved: the cluster or the generator cannot keep up) or
--max-rate is reached, then bisects between the last good and the first broken rate.
It reports the knee (the highest throughput that held the SLO), the bottleneck the
analyzer names at the step that broke, the headroom over --expected-rps, and every
(throughput, p99) point; --report DIR writes them with a plot of the curve.

--datascale instead fills --keys keys of --val-size bytes (like etcdctl check
datascale), measures the db size (Status.DbSize) and the member's memory
(process_resident_memory_bytes) per key, and projects how many keys fit in memory
and in the backend quota.

--kubernetes nodes=N[,pods=P][,churn=R][,apiservers=A] sizes etcd for a Kubernetes
cluster instead: a model (printed, every number with its source or marked as an
assumption; --kube-assume and --kube-model override any) turns the cluster into the
traffic its apiservers send to etcd (node lease renewals and status updates as txns,
pod creates, updates and deletes, events on leases, paginated LISTs, one prefix watch
per apiserver, compaction), and the search scales the cluster: it doubles the nodes
(pods and churn with them) from N until a step breaks the SLO (default p99=100ms;
a whole LIST gets SIG Scalability's 30 s) or --max-nodes is reached, then bisects.
The answer is in nodes and pods, with what runs out first: the bottleneck at the step
that broke, or the quota when the model's db size reaches it sooner.

Exit 0 when the knee covers --expected-rps (or a knee was found; with --kubernetes,
when it covers the nodes asked for), 1 when it does not.`,
		Example: `  etcdperf plan --endpoints 10.0.0.1:2379 --profile kubernetes --slo p99=25ms --expected-rps 500
  etcdperf plan --profile write-heavy --slo p99=10ms,p50=2ms --max-rate 4000 --report plan-report/
  etcdperf plan --datascale --keys 100000 --val-size 1KiB
  etcdperf plan --kubernetes nodes=200
  etcdperf plan --kubernetes nodes=1000,pods=40000,churn=20,apiservers=3 --kube-assume pod_bytes=8KiB -w json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pf.warmupSet = cmd.Flags().Changed("warmup")
			if pf.datascale {
				return a.runDatascale(cmd, pf)
			}
			if pf.kube.cluster != "" {
				return a.runKubePlan(cmd, pf)
			}
			return a.runPlan(cmd, pf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&pf.profile, "profile", "", "profile name or YAML file whose shape is ramped (etcdperf profiles list)")
	f.StringVar(&pf.slo, "slo", "", "latency objective of every paced op, e.g. p99=25ms or p50=5ms,p99=25ms (p50, p90, p99, p999)")
	f.Float64Var(&pf.expected, "expected-rps", 0, "the load you expect, requests/s: the headroom is reported over it and the exit code judges it")
	f.Float64Var(&pf.maxRate, "max-rate", defaultMaxRate, "highest rate to offer, requests/s")
	f.Float64Var(&pf.startRate, "start-rate", 0, "first rate offered (default: the profile's rate, at most --max-rate)")
	f.DurationVar(&pf.stepDuration, "step-duration", defaultStepDuration, "measured window of each step")
	f.DurationVar(&pf.warmup, "warmup", 0, "load before each step's window (default: the profile's)")
	f.Float64Var(&pf.errorBudget, "error-budget", 0.001, "fraction of requests that may fail in a step")
	f.IntVar(&pf.bisections, "bisections", defaultBisections, "bisection steps between the last good and the first broken rate")
	f.StringVar(&pf.prefix, "prefix", "/etcdperf/plan/", "key prefix plan writes under and deletes after each step")
	f.BoolVar(&pf.force, "force", false, "run even when the prefix holds keys; they are deleted")
	f.StringVar(&pf.report, "report", "", "folder to write report.txt, report.html and the curve plot into")
	f.BoolVar(&pf.datascale, "datascale", false, "measure db size and memory per key instead of ramping a rate")
	f.Uint64Var(&pf.keys, "keys", 10000, "--datascale: keys to fill")
	f.StringVar(&pf.valSize, "val-size", "1KiB", "--datascale: value size (bytes, or with KiB/MiB)")
	f.IntVar(&pf.keySize, "key-size", 64, "--datascale: key bytes after the prefix")
	f.DurationVar(&pf.compact, "compact-interval", 0, "compact the cluster's history every interval during each step, as kube-apiserver does (default: the profile's compact_interval; with --kubernetes, the model's compaction_interval_s)")
	pf.kube.register(cmd)
	return cmd
}

// sloTarget is one percentile bound of an SLO.
type sloTarget struct {
	Name  string  `json:"percentile"` // p50, p90, p99, p999
	MaxMs float64 `json:"max_ms"`
}

// parseSLO parses "p99=25ms" or "p50=5ms,p99=25ms".
func parseSLO(s string) ([]sloTarget, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("--slo is required, e.g. --slo p99=25ms")
	}
	var out []sloTarget
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("--slo %q: want PERCENTILE=DURATION such as p99=25ms", s)
		}
		switch k {
		case "p50", "p90", "p99", "p999":
		case "p99.9":
			k = "p999"
		default:
			return nil, fmt.Errorf("--slo %q: percentile %q: want p50, p90, p99 or p999", s, k)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--slo %q: %q is not a positive duration such as 25ms", s, v)
		}
		out = append(out, sloTarget{Name: k, MaxMs: float64(d) / float64(time.Millisecond)})
	}
	return out, nil
}

// percentile reads a named percentile from a summary.
func percentile(s results.Summary, name string) float64 {
	switch name {
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p999":
		return s.P999
	}
	return s.P99
}

// planStep is one rate the ramp offered and what came of it.
type planStep struct {
	OfferedRPS    float64 `json:"offered_rps"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P99Ms         float64 `json:"p99_ms"` // worst p99 response time over the paced ops
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	Valid         bool    `json:"valid"`
	OK            bool    `json:"ok"`
	// Broke says why the step broke the SLO, the error budget or validity.
	Broke      string `json:"broke,omitempty"`
	Bottleneck string `json:"bottleneck"`

	lr measured
}

// judgeStep decides whether a step held: every SLO percentile of every paced op,
// errors within budget, and the offered rate achieved (a valid run).
func judgeStep(run *results.Run, rep analyze.Report, slo []sloTarget, budget float64) planStep {
	s := planStep{Valid: run.Valid, Bottleneck: rep.Verdict.Bottleneck}
	var broke []string
	for _, op := range run.Ops {
		if op.TargetRPS <= 0 {
			continue
		}
		s.OfferedRPS += op.TargetRPS
		s.ThroughputRPS += op.ThroughputRPS
		s.Requests += op.Requests
		s.Errors += op.Errors
		s.P99Ms = max(s.P99Ms, op.Latency.P99)
		for _, t := range slo {
			if v := percentile(op.Latency, t.Name); v > t.MaxMs {
				broke = append(broke, fmt.Sprintf("%s %s %s > %s", op.Op, t.Name, fmtMs(v), fmtMs(t.MaxMs)))
			}
		}
	}
	if s.Requests > 0 && float64(s.Errors)/float64(s.Requests) > budget {
		broke = append(broke, fmt.Sprintf("errors %d of %d requests > %g%% budget", s.Errors, s.Requests, budget*100))
	}
	if !run.Valid {
		broke = append(broke, "invalid: "+run.InvalidReason)
	}
	s.OK = len(broke) == 0
	s.Broke = strings.Join(broke, "; ")
	return s
}

func (pf *planFlags) validate() (*profiles.Profile, []sloTarget, error) {
	if pf.profile == "" {
		return nil, nil, errors.New("--profile is required (etcdperf profiles list)")
	}
	slo, err := parseSLO(pf.slo)
	if err != nil {
		return nil, nil, err
	}
	e, err := profiles.Load(pf.profile)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case pf.maxRate <= 0 || math.IsNaN(pf.maxRate):
		return nil, nil, fmt.Errorf("--max-rate must be positive, got %g", pf.maxRate)
	case pf.startRate < 0 || pf.expected < 0:
		return nil, nil, errors.New("--start-rate and --expected-rps must not be negative")
	case pf.stepDuration <= 0:
		return nil, nil, fmt.Errorf("--step-duration must be positive, got %s", pf.stepDuration)
	case pf.warmup < 0:
		return nil, nil, fmt.Errorf("--warmup must not be negative, got %s", pf.warmup)
	case pf.errorBudget < 0 || pf.errorBudget >= 1:
		return nil, nil, fmt.Errorf("--error-budget must be in [0, 1), got %g", pf.errorBudget)
	case pf.bisections < 0:
		return nil, nil, fmt.Errorf("--bisections must not be negative, got %d", pf.bisections)
	case pf.prefix == "":
		return nil, nil, errors.New("--prefix must not be empty: plan deletes its prefix after each step")
	}
	p := e.Profile
	p.Duration = profiles.Duration(pf.stepDuration)
	switch {
	case pf.compact < 0:
		return nil, nil, fmt.Errorf("--compact-interval must not be negative, got %s", pf.compact)
	case pf.compact > 0:
		p.CompactInterval = profiles.Duration(pf.compact)
	}
	if pf.warmupSet {
		p.Warmup = profiles.Duration(pf.warmup)
	}
	if pf.startRate == 0 {
		pf.startRate = min(p.Rate, pf.maxRate)
	}
	pf.startRate = min(pf.startRate, pf.maxRate)
	return p, slo, nil
}

func (a *app) runPlan(cmd *cobra.Command, pf *planFlags) error {
	p, slo, err := pf.validate()
	if err != nil {
		return usageErr(err)
	}
	if err := checkWritableDir(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, max(p.Connections, 1))
	if err != nil {
		return err
	}
	defer release()

	var steps []*planStep
	step := func(rate float64) (*planStep, error) {
		q := *p
		q.Rate = rate
		fmt.Fprintf(a.stderr, "etcdperf: plan step %d: %.0f req/s for %s\n", len(steps)+1, rate, q.Duration)
		lr, err := a.runProfile(ctx, cmd, "plan", t, clis, &q, pf.prefix, pf.force)
		if err != nil {
			return nil, err
		}
		if lr.err != nil {
			return nil, fmt.Errorf("step at %.0f req/s: %w", rate, lr.err)
		}
		s := judgeStep(lr.run, lr.report, slo, pf.errorBudget)
		s.OfferedRPS, s.lr = rate, lr
		steps = append(steps, &s)
		return &s, nil
	}
	var good, bad *planStep
	for rate := pf.startRate; ; rate = min(rate*2, pf.maxRate) {
		s, err := step(rate)
		if err != nil {
			return err
		}
		if !s.OK {
			bad = s
			break
		}
		good = s
		if rate >= pf.maxRate {
			break
		}
	}
	for i := 0; i < pf.bisections && good != nil && bad != nil && (bad.OfferedRPS-good.OfferedRPS)/good.OfferedRPS > bisectResolution; i++ {
		s, err := step(math.Round((good.OfferedRPS + bad.OfferedRPS) / 2))
		if err != nil {
			return err
		}
		if s.OK {
			good = s
		} else {
			bad = s
		}
	}
	out := planResult(p, pf, slo, steps, good, bad)
	// The run file is the knee's step (or the first step when none held).
	keep := steps[0]
	if good != nil {
		keep = good
	}
	run := keep.lr.run
	run.Diagnosis = &finding.Diagnosis{Verdict: &out.Verdict, Findings: out.Findings, Curve: out.Curve}
	path, werr := a.writeRun(run)
	out.RunFile = path
	if pf.report != "" {
		if err := writeReport(pf.report, run); err != nil {
			return err
		}
		out.Report = pf.report
	}
	if err := a.printPlan(out); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return verdictExit(out.Verdict.Status)
}

// planJSON is plan's -w json object.
type planJSON struct {
	Verdict  finding.Verdict   `json:"verdict"`
	Findings []finding.Finding `json:"findings"`
	Knee     *kneeJSON         `json:"knee"`
	// Headroom is knee / expected - 1; null without --expected-rps or a knee.
	Headroom    *float64       `json:"headroom"`
	ExpectedRPS float64        `json:"expected_rps,omitempty"`
	SLO         []sloTarget    `json:"slo"`
	Steps       []*planStep    `json:"steps"`
	Curve       *finding.Curve `json:"curve"`
	Profile     profileJSON    `json:"profile"`
	RunFile     string         `json:"run_file"`
	Report      string         `json:"report,omitempty"`
}

// kneeJSON is the highest step that held the SLO.
type kneeJSON struct {
	ThroughputRPS float64 `json:"throughput_rps"`
	OfferedRPS    float64 `json:"offered_rps"`
	P99Ms         float64 `json:"p99_ms"`
	// ReachedMaxRate is true when the ramp never broke: the knee is at least this.
	ReachedMaxRate bool `json:"reached_max_rate"`
}

func planResult(p *profiles.Profile, pf *planFlags, slo []sloTarget, steps []*planStep, good, bad *planStep) planJSON {
	out := planJSON{SLO: slo, Steps: steps, ExpectedRPS: pf.expected, Profile: profileSummary(p)}
	out.Profile.DurationS = pf.stepDuration.Seconds()
	v := finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	// The diagnosis comes from the step that broke: what ran out just past the knee.
	diag := bad
	if diag == nil {
		diag = good
	}
	out.Findings = diag.lr.report.Findings
	if out.Findings == nil {
		out.Findings = []finding.Finding{}
	}
	sorted := append([]*planStep(nil), steps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].OfferedRPS < sorted[j].OfferedRPS })
	out.Curve = &finding.Curve{Op: "all paced ops", Knee: -1}
	if len(slo) > 0 {
		for _, t := range slo {
			if t.Name == "p99" {
				out.Curve.SLOMs = t.MaxMs
			}
		}
	}
	for i, s := range sorted {
		out.Curve.Points = append(out.Curve.Points, finding.CurvePoint{ThroughputRPS: s.ThroughputRPS, P99Ms: s.P99Ms})
		if s == good {
			out.Curve.Knee = i
		}
	}
	var parts []string
	if good == nil {
		v.Status = finding.StatusFail
		parts = append(parts, fmt.Sprintf("fail: even the first step (%.0f req/s) broke: %s", steps[0].OfferedRPS, steps[0].Broke))
	} else {
		out.Knee = &kneeJSON{ThroughputRPS: good.ThroughputRPS, OfferedRPS: good.OfferedRPS, P99Ms: good.P99Ms, ReachedMaxRate: bad == nil}
		if bad == nil {
			parts = append(parts, fmt.Sprintf("knee ≥ %.0f req/s: the SLO held up to --max-rate %g (raise it to find the limit)", good.ThroughputRPS, pf.maxRate))
		} else {
			parts = append(parts, fmt.Sprintf("knee %.0f req/s (p99 %s); at %.0f req/s it broke: %s", good.ThroughputRPS, fmtMs(good.P99Ms), bad.OfferedRPS, bad.Broke))
		}
		if pf.expected > 0 {
			h := good.ThroughputRPS/pf.expected - 1
			out.Headroom = &h
			parts = append(parts, fmt.Sprintf("headroom %+.0f%% over the expected %g req/s", h*100, pf.expected))
			if h < 0 {
				v.Status = finding.StatusFail
			}
		}
		parts = append([]string{v.Status + ":"}, parts...)
	}
	if bad != nil {
		v.Bottleneck = bottleneckOf(bad)
		v.Ranked = bad.lr.report.Verdict.Ranked
		parts = append(parts, "bottleneck at the knee: "+v.Bottleneck+" — "+bad.lr.report.Verdict.Summary)
	}
	v.Summary = strings.Join(parts, " ")
	out.Verdict = v
	return out
}

// bottleneckOf names what ran out at a broken step: the analyzer's bottleneck,
// else the generator when the run was invalid with no server signal at fault.
func bottleneckOf(s *planStep) string {
	b := s.lr.report.Verdict.Bottleneck
	for _, f := range s.lr.report.Findings {
		if f.Severity == finding.Fail && !f.Class.Context() {
			return string(f.Class)
		}
	}
	if b == "" {
		b = finding.BottleneckNone
	}
	return b
}

func (a *app) printPlan(out planJSON) error {
	if a.output == "json" {
		return a.printJSON(out)
	}
	w := a.stdout
	var slo []string
	for _, t := range out.SLO {
		slo = append(slo, t.Name+"="+fmtMs(t.MaxMs))
	}
	fmt.Fprintf(w, "plan %s v%d (%s), SLO %s, %gs per step\n", out.Profile.Name, out.Profile.Version, out.Profile.Description, strings.Join(slo, ","), out.Profile.DurationS)
	tw := a.table()
	fmt.Fprintln(tw, "  STEP\tOFFERED\tTHROUGHPUT\tP99\tERRORS\tRESULT")
	for i, s := range out.Steps {
		res := "ok"
		if !s.OK {
			res = "BROKE: " + s.Broke
		}
		fmt.Fprintf(tw, "  %d\t%.0f\t%.1f\t%s\t%d\t%s\n", i+1, s.OfferedRPS, s.ThroughputRPS, fmtMs(s.P99Ms), s.Errors, res)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if k := out.Knee; k != nil {
		bound := ""
		if k.ReachedMaxRate {
			bound = " (at least: --max-rate reached)"
		}
		fmt.Fprintf(w, "knee: %.0f req/s at p99 %s%s\n", k.ThroughputRPS, fmtMs(k.P99Ms), bound)
	} else {
		fmt.Fprintln(w, "knee: none (the first step already broke)")
	}
	if out.Headroom != nil {
		fmt.Fprintf(w, "headroom over %g req/s: %+.0f%%\n", out.ExpectedRPS, *out.Headroom*100)
	}
	fmt.Fprintf(w, "%s  bottleneck: %s\n%s\n", strings.ToUpper(out.Verdict.Status), out.Verdict.Bottleneck, out.Verdict.Summary)
	for _, f := range out.Findings {
		if f.Severity == finding.Fail || f.Severity == finding.Warn {
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
			if f.Advice != "" {
				fmt.Fprintf(w, "         advice: %s\n", f.Advice)
			}
		}
	}
	fmt.Fprintf(w, "run file: %s\n", out.RunFile)
	if out.Report != "" {
		fmt.Fprintf(w, "report: %s\n", out.Report)
	}
	return nil
}
