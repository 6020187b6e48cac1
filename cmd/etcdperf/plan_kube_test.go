package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/plan"
)

// TestPlanKubernetesBadInput: a bad cluster or model is refused in one line
// before any etcd is started or connected to.
func TestPlanKubernetesBadInput(t *testing.T) {
	model := filepath.Join(t.TempDir(), "model.yaml")
	if err := os.WriteFile(model, []byte("pod_bytes: [1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--kubernetes", "pods=10"},
		{"--kubernetes", "nodes=0"},
		{"--kubernetes", "nodes=10,zones=3"},
		{"--kubernetes", "nodes=10", "--kube-assume", "nope=1"},
		{"--kubernetes", "nodes=10", "--kube-assume", "pod_bytes=-4KiB"},
		{"--kubernetes", "nodes=10", "--kube-model", model},
		{"--kubernetes", "nodes=10", "--kube-model", "/nonexistent/model.yaml"},
		{"--kubernetes", "nodes=10", "--profile", "kubernetes"},
		{"--kubernetes", "nodes=100", "--max-nodes", "50"},
		{"--kubernetes", "nodes=10", "--slo", "p98=1s"},
	} {
		assertCleanError(t, runBin(t, nil, append([]string{"plan", "--endpoints", "127.0.0.1:1"}, args...)...))
	}
}

// TestPlanKubernetes sizes the embedded etcd for 20 to 40 nodes with a generous
// SLO: two short steps, an answer in nodes and pods, and the model it used.
func TestPlanKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	model := filepath.Join(t.TempDir(), "model.yaml")
	if err := os.WriteFile(model, []byte("pod_bytes: 2KiB\nlists_per_apiserver_per_min: 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, nil, "plan", "--kubernetes", "nodes=20,apiservers=2", "--max-nodes", "40", "--step-duration", "2s", "--warmup", "500ms",
		"--slo", "p99=5s", "--bisections", "0", "--kube-model", model, "--kube-assume", "pods_per_node=10", "-w", "json")
	if r.code != ExitOK && r.code != ExitFail {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Verdict struct{ Status, Bottleneck, Summary string }
		Steps   []plan.KubeSize
		Kube    struct {
			NodesAtKnee int `json:"nodes_at_knee"`
			PodsAtKnee  int `json:"pods_at_knee"`
			Model       struct {
				Assumptions []struct {
					Key        string
					Value      float64
					Overridden bool
				}
				Requested struct {
					Pods, APIServers int
				}
			}
		} `json:"kubernetes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(out.Steps) < 2 || out.Steps[0].Nodes != 20 || out.Steps[0].Pods != 200 || out.Steps[1].Nodes != 40 && out.Steps[1].Nodes != 10 {
		t.Fatalf("steps %+v: want 20 nodes (200 pods), then 40 or 10", out.Steps)
	}
	k := out.Kube
	if k.NodesAtKnee != 0 && k.PodsAtKnee != 10*k.NodesAtKnee {
		t.Errorf("%d pods at a knee of %d nodes, want 10 per node", k.PodsAtKnee, k.NodesAtKnee)
	}
	if k.NodesAtKnee == 0 && out.Verdict.Status != "fail" {
		t.Errorf("no knee, verdict %+v", out.Verdict)
	}
	if k.Model.Requested.Pods != 200 || k.Model.Requested.APIServers != 2 {
		t.Errorf("model requested %+v", k.Model.Requested)
	}
	over := map[string]float64{}
	for _, a := range k.Model.Assumptions {
		if a.Overridden {
			over[a.Key] = a.Value
		}
	}
	if len(over) != 3 || over["pod_bytes"] != 2048 || over["lists_per_apiserver_per_min"] != 30 || over["pods_per_node"] != 10 {
		t.Errorf("overridden %v", over)
	}
	for _, s := range out.Steps {
		if s.OfferedRPS <= 0 || s.Requests == 0 {
			t.Errorf("step %+v measured nothing", s)
		}
	}
}
