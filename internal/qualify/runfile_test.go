package qualify

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/results"
)

func TestProfile(t *testing.T) {
	for _, tier := range hardware.Tiers {
		p, err := Profile(tier, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		l := TierLoad(tier)
		if p.Name != "qualify-"+tier.Name || p.Rate != l.Rate || p.Clients != l.Clients || p.Connections != l.Clients ||
			time.Duration(p.Duration) != 30*time.Second || p.Warmup != 0 || len(p.Ops) != 1 || p.Ops[0].Op != "put" {
			t.Errorf("%s: profile %+v", tier.Name, p)
		}
	}
}

func TestRunFile(t *testing.T) {
	q := Result{Verdict: finding.Verdict{Status: finding.StatusFail, Bottleneck: "disk"}}
	h, d := &results.Host{CPUs: 2}, results.DiskResult{Pattern: "fio"}
	f := []finding.Finding{{Class: finding.ClassDisk, Severity: finding.Fail}}
	last := &results.Run{Command: "bench", Ops: []results.Op{{Op: "put"}}, Diagnosis: &finding.Diagnosis{Findings: f}}
	for name, tc := range map[string]struct {
		run        *results.Run
		ops, finds int
	}{
		"a load ran":  {last, 1, 1},
		"no load ran": {&results.Run{}, 0, 0},
	} {
		run := q.RunFile(tc.run, h, d)
		if run.Command != "qualify" || run.Host != h || len(run.Disk) != 1 || len(run.Ops) != tc.ops ||
			run.Diagnosis.Verdict.Status != finding.StatusFail || len(run.Diagnosis.Findings) != tc.finds {
			t.Errorf("%s: run %+v, diagnosis %+v", name, run, run.Diagnosis)
		}
	}
}
