// Package qualify grades a host against the tiers of etcd's hardware guide:
// static criteria (CPUs, memory, the disk probe's fdatasync p99 and IOPS) and the
// criteria of a load run at the tier's workload (rate achieved, p99, the
// analyzer's findings), tier by tier from the highest the host could meet.
package qualify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Sequential IOPS the hardware guide asks of the disk: "typically 50 sequential
// IOPS (e.g., a 7200 RPM disk) is required; for heavily loaded clusters, 500".
const (
	iopsTypical = 50
	iopsHeavy   = 500
	iopsSource  = "etcd op-guide/hardware.md (disks: 50 sequential IOPS typical, 500 for heavily loaded clusters)"
)

// xlRate is the rate offered to the unbounded top tier: etcdctl check perf's xl load.
const xlRate = 15000

// Load is the load qualify offers for a tier.
type Load struct {
	Rate    float64
	Clients int
}

// TierLoad is the tier's upper workload bounds from the hardware guide (its
// limits are exclusive, so this is the heaviest load the tier is sized for).
// The top tier has no bound: it gets etcdctl's xl rate and the clients of the
// tier below's bound.
func TierLoad(t hardware.Tier) Load {
	if t.MaxRPS > 0 {
		return Load{Rate: t.MaxRPS, Clients: t.MaxClients}
	}
	return Load{Rate: xlRate, Clients: hardware.Tiers[len(hardware.Tiers)-2].MaxClients}
}

// TierByName is the hardware guide's tier of that name; nil when there is none.
func TierByName(name string) *hardware.Tier {
	for i := range hardware.Tiers {
		if hardware.Tiers[i].Name == name {
			return &hardware.Tiers[i]
		}
	}
	return nil
}

func tierIndex(name string) int {
	for i, t := range hardware.Tiers {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// Static grades what needs no load: CPUs, memory, fdatasync p99 and sequential
// IOPS of the probe.
func Static(h *results.Host, disk results.DiskResult, t hardware.Tier) []finding.Criterion {
	cpus := h.EffectiveCPUs()
	iops := float64(iopsTypical)
	if tierIndex(t.Name) >= tierIndex("large") {
		iops = iopsHeavy
	}
	rule := diskprobe.LimitWAL
	return []finding.Criterion{
		finding.Higher("CPU", fmt.Sprintf("%g CPUs", cpus), cpus, fmt.Sprintf("≥ %d CPUs", t.CPUs), float64(t.CPUs), hardware.TiersSource, cpus > 0),
		finding.Higher("memory", fmt.Sprintf("%.1f GB", float64(h.MemoryBytes)/1e9), float64(h.MemoryBytes),
			fmt.Sprintf("≥ %d GB (%.0f%% accepted)", t.MemoryBytes/1e9, hardware.MemorySlack*100), hardware.MemorySlack*float64(t.MemoryBytes), hardware.TiersSource, h.MemoryBytes > 0),
		finding.Lower("disk fdatasync p99", units.Ms(disk.SyncP99()), disk.SyncP99(), "< "+units.Ms(rule.LimitMs), rule.LimitMs, rule.Source, disk.Fdatasyncs > 0, true),
		finding.Higher("sequential IOPS", fmt.Sprintf("%.0f", disk.IOPS), disk.IOPS, fmt.Sprintf("≥ %.0f", iops), iops, iopsSource, disk.Writes > 0),
	}
}

// LoadCriteria grades the tier's load run: the rate achieved (bench's validity
// rule), the worst p99 of the paced ops, and the analyzer's findings.
func LoadCriteria(run *results.Run, rep analyze.Result, t hardware.Tier, p99 time.Duration) []finding.Criterion {
	load := TierLoad(t)
	paced := run.Paced()
	got, worst := paced.ThroughputRPS, paced.P99Ms
	limit := float64(p99) / float64(time.Millisecond)
	need := results.ValidRateFraction * load.Rate
	var fails []string
	for _, f := range rep.Findings {
		if f.Severity == finding.Fail {
			fails = append(fails, string(f.Class))
		}
	}
	diag := finding.Criterion{Name: "diagnosis", Observed: "no signal graded fail", Threshold: "no signal graded fail",
		Source: "etcdperf analyzer (rules cite their sources)", Status: finding.PassIf(len(fails) == 0)}
	if len(fails) > 0 {
		diag.Observed = "fail: " + strings.Join(fails, ", ")
	}
	return []finding.Criterion{
		finding.Higher("achieved load", fmt.Sprintf("%.0f req/s", got), got,
			fmt.Sprintf("≥ %.0f req/s (%.0f%% of %g, %d clients)", need, results.ValidRateFraction*100, load.Rate, load.Clients), need,
			hardware.TiersSource+" (tier workload bounds); etcdperf validity rule (95%)", len(run.Ops) > 0),
		finding.Lower("latency p99", units.Ms(worst), worst, "≤ "+units.Ms(limit), limit, profiles.DefaultP99Source, len(run.Ops) > 0, false),
		diag,
	}
}

// TierResult is the grade of the host for one tier.
type TierResult struct {
	Tier     string              `json:"tier"`
	Criteria []finding.Criterion `json:"criteria"`
	// LoadRun says whether the tier's load was run; the load rows are absent otherwise.
	LoadRun bool `json:"load_run"`
	// Status is pass when every criterion passed, else fail.
	Status finding.Status `json:"status"`
}

// UnmarshalJSON reads a tier's result, also as run files of version 2 wrote
// it: a boolean pass.
func (t *TierResult) UnmarshalJSON(b []byte) error {
	type plain TierResult
	var v struct {
		plain
		Pass *bool `json:"pass"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = TierResult(v.plain)
	if t.Status == "" && v.Pass != nil {
		t.Status = finding.PassIf(*v.Pass)
	}
	return nil
}

// Result is the qualification: the verdict, the findings of the last load run,
// the highest tier passed ("" when none) and every tier tried, highest first.
type Result struct {
	Verdict       finding.Verdict   `json:"verdict"`
	Findings      []finding.Finding `json:"findings"`
	QualifiedTier string            `json:"qualified_tier"` // "" when none
	Tiers         []TierResult      `json:"tiers"`
}

// LoadFunc runs the tier's load and returns its run and analysis.
type LoadFunc func(t hardware.Tier) (*results.Run, analyze.Result, error)

// Run qualifies the host: the asked tier, or every tier down from the highest
// whose static criteria pass (small when none do, to show why), stopping at the
// first that passes. A tier's load runs when its static criteria pass, when it
// was asked for, or when it is the first tried. It returns the last load run
// (nil when none ran) and stops at the first error of load.
func Run(asked string, host *results.Host, disk results.DiskResult, p99 time.Duration, load LoadFunc) (Result, *results.Run, error) {
	var order []hardware.Tier
	if asked != "" {
		t := TierByName(asked)
		if t == nil {
			return Result{}, nil, fmt.Errorf("tier %q: want small, medium, large or xlarge", asked)
		}
		order = []hardware.Tier{*t}
	} else {
		start := 0
		for i := len(hardware.Tiers) - 1; i > 0; i-- {
			if finding.AllPass(Static(host, disk, hardware.Tiers[i])) {
				start = i
				break
			}
		}
		for i := start; i >= 0; i-- {
			order = append(order, hardware.Tiers[i])
		}
	}
	var out Result
	var lastRun *results.Run
	var lastRep analyze.Result
	for _, tier := range order {
		tr := TierResult{Tier: tier.Name, Criteria: Static(host, disk, tier)}
		if finding.AllPass(tr.Criteria) || asked != "" || len(out.Tiers) == 0 {
			run, rep, err := load(tier)
			if err != nil {
				return out, lastRun, err
			}
			lastRun, lastRep = run, rep
			tr.LoadRun = true
			tr.Criteria = append(tr.Criteria, LoadCriteria(run, rep, tier, p99)...)
		}
		tr.Status = finding.PassIf(finding.AllPass(tr.Criteria))
		out.Tiers = append(out.Tiers, tr)
		if tr.Status == finding.StatusPass {
			out.QualifiedTier = tier.Name
			break
		}
	}
	out.finish(asked, lastRep)
	return out, lastRun, nil
}

// finish fills the verdict: pass when the host qualifies for the asked tier (or
// for any, when none was asked); the bottleneck is the first failing criterion's
// resource of the highest tier tried.
func (q *Result) finish(asked string, last analyze.Result) {
	q.Findings = last.Findings
	if q.Findings == nil {
		q.Findings = []finding.Finding{}
	}
	q.Verdict = finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	if q.QualifiedTier == "" || (asked != "" && q.QualifiedTier != asked) {
		q.Verdict.Status = finding.StatusFail
	}
	top := q.Tiers[0]
	var short []string
	for _, c := range top.Criteria {
		if !c.Passed() {
			short = append(short, fmt.Sprintf("%s %s (needs %s)", c.Name, c.Observed, c.Threshold))
			if q.Verdict.Bottleneck == finding.BottleneckNone {
				q.Verdict.Bottleneck = criterionClass(c.Name, last)
			}
		}
	}
	switch {
	case q.Verdict.Status == finding.StatusPass && len(short) == 0:
		q.Verdict.Summary = fmt.Sprintf("pass: this host qualifies for the %s tier", q.QualifiedTier)
	case q.Verdict.Status == finding.StatusPass:
		q.Verdict.Summary = fmt.Sprintf("pass: this host qualifies for the %s tier; not for %s: %s", q.QualifiedTier, top.Tier, strings.Join(short, "; "))
	case q.QualifiedTier != "":
		q.Verdict.Summary = fmt.Sprintf("fail: not %s (%s); this host qualifies for %s", top.Tier, strings.Join(short, "; "), q.QualifiedTier)
	default:
		q.Verdict.Summary = fmt.Sprintf("fail: this host does not qualify for %s: %s", top.Tier, strings.Join(short, "; "))
	}
}

// criterionClass names the resource behind a failed criterion.
func criterionClass(name string, last analyze.Result) string {
	switch name {
	case "CPU":
		return string(finding.ClassCPU)
	case "memory":
		return string(finding.ClassMemory)
	case "disk fdatasync p99", "sequential IOPS":
		return string(finding.ClassDisk)
	}
	for _, f := range last.Findings {
		if f.Severity == finding.Fail && !f.Class.Context() {
			return string(f.Class)
		}
	}
	return finding.BottleneckNone
}

// Record is what qualify's run file keeps of it (section "qualify"): the
// qualification, the disk probe without its histograms and the host facts.
type Record struct {
	Result
	Disk results.DiskResult `json:"disk"`
	Host *results.Host      `json:"host"`
}

// SectionName is the record's key in the run file's sections.
func (Record) SectionName() string { return "qualify" }

var _ = results.RegisterSection(Record{})
