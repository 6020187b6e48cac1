package plan

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// DefaultKubeWarmup keeps each step's start (new watchers, first leases) out of its window.
const DefaultKubeWarmup = 2 * time.Second

// KubeConfig is plan --kubernetes as its flags give it; the rate plan's flags
// it shares (SLO, step duration, warm-up, error budget, bisections, prefix,
// compaction) come from Config.
type KubeConfig struct {
	Cluster  string // nodes=N[,pods=P][,churn=R][,apiservers=A]
	Assume   string // --kube-assume overrides
	Model    string // --kube-model file
	MaxNodes int
}

// KubePlan is a checked plan --kubernetes: the cluster asked for, the model, the SLO
// (p99 within profiles.DefaultP99 when c gives none) and each step's warm-up.
type KubePlan struct {
	Cluster     KubeCluster
	Assumptions Assumptions
	SLO         []PercentileBound
	Warmup      time.Duration
}

// Validate checks k with the rate plan's c and returns the plan.
func (k KubeConfig) Validate(c Config) (KubePlan, error) {
	if c.Profile != "" {
		return KubePlan{}, errors.New("--kubernetes and --profile exclude each other: the model makes the profile")
	}
	cl, err := ParseKubeCluster(k.Cluster)
	if err != nil {
		return KubePlan{}, err
	}
	as, err := k.assumptions()
	if err != nil {
		return KubePlan{}, err
	}
	if c.Compact != 0 {
		if err := as.Set(CompactionS, c.Compact.Seconds()); err != nil {
			return KubePlan{}, fmt.Errorf("--compact-interval: %w", err)
		}
	}
	if c.SLO == "" {
		c.SLO = "p99=" + profiles.DefaultP99.String()
	}
	slo, err := ParseSLO(c.SLO)
	switch {
	case err != nil:
		return KubePlan{}, err
	case k.MaxNodes < cl.Nodes:
		return KubePlan{}, fmt.Errorf("--max-nodes %d is under the %d nodes asked for", k.MaxNodes, cl.Nodes)
	case c.StepDuration <= 0 || c.Warmup < 0:
		return KubePlan{}, errors.New("--step-duration must be positive and --warmup not negative")
	case c.ErrorBudget < 0 || c.ErrorBudget >= 1 || c.Bisections < 0 || c.Prefix == "":
		return KubePlan{}, errors.New("--error-budget must be in [0, 1), --bisections not negative, --prefix not empty")
	}
	p := KubePlan{Cluster: cl, Assumptions: as, SLO: slo, Warmup: DefaultKubeWarmup}
	if c.WarmupSet {
		p.Warmup = c.Warmup
	}
	return p, nil
}

// assumptions is the model's table with the file's and the flag's overrides.
func (k KubeConfig) assumptions() (Assumptions, error) {
	as := DefaultAssumptions()
	if k.Model != "" {
		b, err := os.ReadFile(k.Model)
		if err != nil {
			return nil, fmt.Errorf("--kube-model: %w", err)
		}
		if err := as.ParseFile(b); err != nil {
			return nil, fmt.Errorf("--kube-model %s: %w", k.Model, err)
		}
	}
	if err := as.ParseOverrides(k.Assume); err != nil {
		return nil, fmt.Errorf("--kube-assume: %w", err)
	}
	return as, nil
}

// RunFile is the plan's run file: the run of the largest size that held (of the
// first size when none did), with every size's run and the verdict.
func (r KubeResult) RunFile(good *KubeSize) *results.Run {
	var g *RateStep
	if good != nil {
		g = &good.RateStep
	}
	return RunFile(r.RateSteps(), g, r.Diagnosis())
}
