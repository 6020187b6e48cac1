package plan

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Config is a rate plan as plan's flags give it.
type Config struct {
	Profile      string // name or YAML file
	SLO          string // "p99=25ms" (ParseSLO)
	ExpectedRPS  float64
	MaxRate      float64
	StartRate    float64 // 0: the profile's rate
	StepDuration time.Duration
	Warmup       time.Duration
	WarmupSet    bool // Warmup was given; else the profile's applies
	ErrorBudget  float64
	Bisections   int
	Prefix       string
	Compact      time.Duration // 0: the profile's compact_interval
}

// Validate checks c and returns the profile shaped as each step runs it (its
// duration the step's, the warm-up and compaction of c) and the SLO; a StartRate
// of 0 becomes the profile's rate, and it is capped at MaxRate.
func (c *Config) Validate() (*profiles.Profile, []PercentileBound, error) {
	if c.Profile == "" {
		return nil, nil, errors.New("--profile is required (etcdperf profiles list)")
	}
	slo, err := ParseSLO(c.SLO)
	if err != nil {
		return nil, nil, err
	}
	e, err := profiles.Load(c.Profile)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case c.MaxRate <= 0 || math.IsNaN(c.MaxRate):
		return nil, nil, fmt.Errorf("--max-rate must be positive, got %g", c.MaxRate)
	case c.StartRate < 0 || c.ExpectedRPS < 0:
		return nil, nil, errors.New("--start-rate and --expected-rps must not be negative")
	case c.StepDuration <= 0:
		return nil, nil, fmt.Errorf("--step-duration must be positive, got %s", c.StepDuration)
	case c.Warmup < 0:
		return nil, nil, fmt.Errorf("--warmup must not be negative, got %s", c.Warmup)
	case c.ErrorBudget < 0 || c.ErrorBudget >= 1:
		return nil, nil, fmt.Errorf("--error-budget must be in [0, 1), got %g", c.ErrorBudget)
	case c.Bisections < 0:
		return nil, nil, fmt.Errorf("--bisections must not be negative, got %d", c.Bisections)
	case c.Prefix == "":
		return nil, nil, errors.New("--prefix must not be empty: plan deletes its prefix after each step")
	}
	p := e.Profile
	p.Duration = profiles.Duration(c.StepDuration)
	switch {
	case c.Compact < 0:
		return nil, nil, fmt.Errorf("--compact-interval must not be negative, got %s", c.Compact)
	case c.Compact > 0:
		p.CompactInterval = profiles.Duration(c.Compact)
	}
	if c.WarmupSet {
		p.Warmup = profiles.Duration(c.Warmup)
	}
	if c.StartRate == 0 {
		c.StartRate = p.Rate
	}
	c.StartRate = min(c.StartRate, c.MaxRate)
	return p, slo, nil
}

// Ramp is the ramp c asks for.
func (c *Config) Ramp() Ramp {
	return Ramp{StartRate: c.StartRate, MaxRate: c.MaxRate, Bisections: c.Bisections}
}

// RunFile is a plan's run file: the run of the knee's step (of the first step
// when none held), with every step's run (StepRuns) and the plan's diagnosis.
func RunFile(steps []*RateStep, good *RateStep, diag *finding.Diagnosis) *results.Run {
	keep := steps[0]
	if good != nil {
		keep = good
	}
	run := keep.Run
	run.Steps = StepRuns(steps)
	run.Diagnosis = diag
	return run
}
