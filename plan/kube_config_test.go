package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKubeConfigValidate(t *testing.T) {
	model := filepath.Join(t.TempDir(), "model.yaml")
	if err := os.WriteFile(model, []byte("pod_bytes: 2KiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rate := Config{StepDuration: time.Second, ErrorBudget: 0.001, Prefix: "/p/", Compact: time.Minute}
	k := KubeConfig{Cluster: "nodes=20", Model: model, Assume: "pods_per_node=10", MaxNodes: 100}
	p, err := k.Validate(rate)
	if err != nil {
		t.Fatal(err)
	}
	if p.Cluster.Nodes != 20 || p.Assumptions.Get(PodBytes) != 2048 || p.Assumptions.Get(CompactionS) != 60 ||
		p.Warmup != DefaultKubeWarmup || len(p.SLO) != 1 || p.SLO[0].MaxMs != 100 {
		t.Errorf("plan %+v", p)
	}
	warm := rate
	warm.Warmup, warm.WarmupSet = 0, true
	if p, err := k.Validate(warm); err != nil || p.Warmup != 0 {
		t.Errorf("--warmup 0: %v, %v", p.Warmup, err)
	}
	for _, tc := range []struct {
		want string
		k    KubeConfig
		c    func(*Config)
	}{
		{"exclude each other", k, func(c *Config) { c.Profile = "kubernetes" }},
		{"nodes", KubeConfig{Cluster: "pods=10", MaxNodes: 100}, nil},
		{"--kube-assume", KubeConfig{Cluster: "nodes=20", Assume: "nope=1", MaxNodes: 100}, nil},
		{"--kube-model", KubeConfig{Cluster: "nodes=20", Model: "/nonexistent.yaml", MaxNodes: 100}, nil},
		{"--max-nodes 10 is under the 20 nodes", KubeConfig{Cluster: "nodes=20", MaxNodes: 10}, nil},
		{"--slo", k, func(c *Config) { c.SLO = "p98=1s" }},
		{"--step-duration", k, func(c *Config) { c.StepDuration = 0 }},
		{"--prefix", k, func(c *Config) { c.Prefix = "" }},
	} {
		c := rate
		if tc.c != nil {
			tc.c(&c)
		}
		if _, err := tc.k.Validate(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
}
