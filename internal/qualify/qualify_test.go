package qualify

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

// A 2-CPU, 8 GB host with a fast disk: these machines (fio p99 ≈ 0.2 ms).
var (
	host = &results.Host{CPUs: 2, MemoryBytes: 7_800_000_000}
	disk = results.DiskResult{Fdatasyncs: 10000, Writes: 10000, IOPS: 8400, Fdatasync: results.Summary{P99: 0.2}}
)

// fakeLoad achieves up to capacity req/s at 5 ms p99, graded fail on cpu above it.
func fakeLoad(capacity float64, tried *[]string) LoadFunc {
	return func(t hardware.Tier) (*results.Run, analyze.Result, error) {
		*tried = append(*tried, t.Name)
		l := TierLoad(t)
		got := min(l.Rate, capacity)
		run := &results.Run{Ops: []results.Op{{Op: "put", TargetRPS: l.Rate, ThroughputRPS: got, Latency: results.Summary{P99: 5}}}}
		var rep analyze.Result
		if got < l.Rate {
			rep.Findings = []finding.Finding{{Class: finding.ClassCPU, Severity: finding.Fail}}
		}
		return run, rep, nil
	}
}

func TestRunStepsDown(t *testing.T) {
	var tried []string
	res, run, err := Run("", host, disk, 100*time.Millisecond, fakeLoad(5000, &tried))
	if err != nil || run == nil {
		t.Fatal(err)
	}
	// The host meets small's static criteria only (2 CPUs): small is tried first and passes.
	if strings.Join(tried, ",") != "small" || res.QualifiedTier != "small" || res.Verdict.Status != finding.StatusPass {
		t.Fatalf("tried %v, result %+v", tried, res.Verdict)
	}
	if len(res.Tiers) != 1 || len(res.Tiers[0].Criteria) != 7 || !res.Tiers[0].LoadRun {
		t.Errorf("tiers %+v", res.Tiers)
	}
}

func TestRunAskedTierFails(t *testing.T) {
	var tried []string
	res, _, err := Run("medium", host, disk, 100*time.Millisecond, fakeLoad(900, &tried))
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if strings.Join(tried, ",") != "medium" || res.QualifiedTier != "" || v.Status != finding.StatusFail || v.Bottleneck != "cpu" {
		t.Fatalf("tried %v, verdict %+v", tried, v)
	}
	for _, want := range []string{"does not qualify for medium", "CPU 2 CPUs (needs ≥ 4 CPUs)", "achieved load 900 req/s (needs ≥ 950 req/s"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("summary %q lacks %q", v.Summary, want)
		}
	}
	c := res.Tiers[0].Criteria
	if c[0].Margin == nil || *c[0].Margin != 0.5 || c[0].Status != finding.StatusFail {
		t.Errorf("CPU criterion %+v: want margin 50%% past the threshold", c[0])
	}
}

func TestRunLoadError(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := Run("small", host, disk, time.Second, func(hardware.Tier) (*results.Run, analyze.Result, error) {
		return nil, analyze.Result{}, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	if _, _, err := Run("huge", host, disk, time.Second, nil); err == nil {
		t.Error("an unknown tier ran")
	}
}

func TestTierLoad(t *testing.T) {
	for name, want := range map[string]Load{"small": {200, 100}, "medium": {1000, 500}, "large": {10000, 1500}, "xlarge": {15000, 1500}} {
		if got := TierLoad(*TierByName(name)); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

func TestStaticUnknownNeverPasses(t *testing.T) {
	for _, c := range Static(&results.Host{}, results.DiskResult{}, hardware.Tiers[0]) {
		if c.Status != finding.StatusInvalid || c.Margin != nil {
			t.Errorf("unmeasured %s: %+v", c.Name, c)
		}
	}
}

// TestTierResultJSON: a tier is written with its status and read back from
// either form, a version 2 run file's boolean pass included.
func TestTierResultJSON(t *testing.T) {
	for in, want := range map[string]finding.Status{
		`{"tier":"small","criteria":null,"load_run":true,"status":"fail"}`:                     finding.StatusFail,
		`{"tier":"small","criteria":[{"name":"CPU","pass":true}],"load_run":true,"pass":true}`: finding.StatusPass,
		`{"tier":"small","criteria":null,"load_run":false,"pass":false}`:                       finding.StatusFail,
	} {
		var tr TierResult
		if err := json.Unmarshal([]byte(in), &tr); err != nil || tr.Status != want || tr.Tier != "small" {
			t.Errorf("%s: read %+v (%v), want %s", in, tr, err, want)
		}
		if len(tr.Criteria) > 0 && !tr.Criteria[0].Passed() {
			t.Errorf("%s: criterion %+v, want pass", in, tr.Criteria[0])
		}
	}
}
