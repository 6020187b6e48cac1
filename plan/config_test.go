package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

func TestConfigValidate(t *testing.T) {
	ok := func() Config {
		return Config{Profile: "write-heavy", SLO: "p99=25ms", MaxRate: 500, StepDuration: 3 * time.Second, ErrorBudget: 0.001, Bisections: 2, Prefix: "/p/"}
	}
	c := ok()
	p, slo, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	// write-heavy offers 1000 req/s: the start is capped at --max-rate.
	if c.StartRate != 500 || time.Duration(p.Duration) != 3*time.Second || len(slo) != 1 || slo[0].MaxMs != 25 {
		t.Errorf("start %g, duration %s, slo %v", c.StartRate, time.Duration(p.Duration), slo)
	}
	c = ok()
	c.StartRate, c.Warmup, c.WarmupSet, c.Compact = 100, time.Second, true, time.Minute
	if p, _, err = c.Validate(); err != nil || c.StartRate != 100 || time.Duration(p.Warmup) != time.Second || time.Duration(p.CompactInterval) != time.Minute {
		t.Errorf("start %g, profile %+v, %v", c.StartRate, p, err)
	}
	for _, tc := range []struct {
		want string
		set  func(*Config)
	}{
		{"--profile is required", func(c *Config) { c.Profile = "" }},
		{"--slo", func(c *Config) { c.SLO = "p98=1s" }},
		{"unknown profile", func(c *Config) { c.Profile = "nope" }},
		{"--max-rate", func(c *Config) { c.MaxRate = 0 }},
		{"--start-rate", func(c *Config) { c.ExpectedRPS = -1 }},
		{"--step-duration", func(c *Config) { c.StepDuration = 0 }},
		{"--warmup", func(c *Config) { c.Warmup = -time.Second }},
		{"--error-budget", func(c *Config) { c.ErrorBudget = 1 }},
		{"--bisections", func(c *Config) { c.Bisections = -1 }},
		{"--prefix", func(c *Config) { c.Prefix = "" }},
		{"--compact-interval", func(c *Config) { c.Compact = -time.Second }},
	} {
		c := ok()
		tc.set(&c)
		if _, _, err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
}

func TestRunFile(t *testing.T) {
	steps := []*RateStep{{OK: true, Run: &results.Run{DurationS: 1}}, {OK: false, Run: &results.Run{DurationS: 2}}}
	if run := RunFile(steps, steps[0], nil); run != steps[0].Run || len(run.Steps) != 2 {
		t.Errorf("knee: run %+v", run)
	}
	if run := RunFile(steps, nil, nil); run != steps[0].Run {
		t.Error("no knee: want the first step's run")
	}
}
