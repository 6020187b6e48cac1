package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// defaultQualifyDuration keeps a qualification practical: long enough for a few
// thousand requests at the small tier's rate, short enough to run on every new machine.
const defaultQualifyDuration = 30 * time.Second

// tierLoad is the load qualify offers for a tier: the tier's upper workload bounds
// from the hardware guide (its limits are exclusive, so this is the heaviest load
// the tier is sized for). xlarge has no upper bound; it gets etcdctl's xl rate.
var tierLoad = map[string]struct {
	rate    float64
	clients int
}{
	"small":  {200, 100},
	"medium": {1000, 500},
	"large":  {10000, 1500},
	"xlarge": {15000, 1500},
}

// Sequential IOPS the hardware guide asks of the disk: "typically 50 sequential
// IOPS (e.g., a 7200 RPM disk) is required; for heavily loaded clusters, 500".
const (
	iopsTypical = 50
	iopsHeavy   = 500
	iopsSource  = "etcd op-guide/hardware.md (disks: 50 sequential IOPS typical, 500 for heavily loaded clusters)"
)

type qualifyFlags struct {
	tier     string
	duration time.Duration
	p99      time.Duration
}

func newQualifyCmd(a *app) *cobra.Command {
	qf := &qualifyFlags{}
	cmd := &cobra.Command{
		Use:   "qualify --data-dir DIR",
		Short: "Qualify this host for a tier of etcd's hardware guide: CPU, memory, the disk under DIR, and a load run",
		Long: `qualify grades this machine against the tiers of etcd's hardware guide
(small, medium, large, xlarge): host facts (CPUs, memory, cgroup limits), the fio-style
fdatasync probe in --data-dir, then an embedded etcd with its data in --data-dir under
the tier's load (its request rate and clients, puts of 1 KiB as etcdctl check perf) for
--duration. It prints one row per criterion with the observed and required values,
the source of the requirement and the margin, and the highest tier the host qualifies
for. Without --tier it starts from the highest tier the host's CPUs, memory and disk
allow and steps down until a load run passes.

Exit 0 when the host qualifies (for --tier, or for some tier), 1 when it does not,
2 when it cannot run (no data dir, a data dir on tmpfs where fdatasync is a no-op).`,
		Example: `  etcdperf qualify --data-dir /var/lib/etcd-test
  etcdperf qualify --data-dir /mnt/ssd --tier medium --duration 1m -w json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runQualify(cmd, qf) },
	}
	f := cmd.Flags()
	f.StringVar(&qf.tier, "tier", "", "tier to qualify for: small, medium, large or xlarge (default: the highest that passes)")
	f.DurationVar(&qf.duration, "duration", defaultQualifyDuration, "measured window of each load run")
	f.DurationVar(&qf.p99, "p99", profiles.DefaultP99, "p99 response-time requirement of the load run")
	return cmd
}

// qualCriterion is one row of the qualification table.
type qualCriterion struct {
	Name     string `json:"name"`
	Observed string `json:"observed"`
	Required string `json:"required"`
	Source   string `json:"source"`
	// Margin is how far the observed value is past the requirement, as a
	// fraction of it: positive passes, negative fails; null when not measured.
	Margin *float64 `json:"margin"`
	Pass   bool     `json:"pass"`
}

// tierResult is the grade of the host for one tier.
type tierResult struct {
	Tier     string          `json:"tier"`
	Criteria []qualCriterion `json:"criteria"`
	// LoadRun says whether the tier's load was run; the load rows are absent otherwise.
	LoadRun bool `json:"load_run"`
	Pass    bool `json:"pass"`
}

func (a *app) runQualify(cmd *cobra.Command, qf *qualifyFlags) error {
	dir := a.conn.dataDir
	switch {
	case len(a.conn.endpoints) > 0:
		return usageErr(errors.New("qualify grades this host with its own embedded etcd; drop --endpoints"))
	case dir == "":
		return usageErr(errors.New("--data-dir is required: a folder on the disk etcd's data would live on"))
	case qf.tier != "" && tierByName(qf.tier) == nil:
		return usageErr(fmt.Errorf("--tier %q: want small, medium, large or xlarge", qf.tier))
	case qf.duration <= 0:
		return usageErr(fmt.Errorf("--duration must be positive, got %s", qf.duration))
	case qf.p99 <= 0:
		return usageErr(fmt.Errorf("--p99 must be positive, got %s", qf.p99))
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageErr(fmt.Errorf("--data-dir %s: not an existing folder", dir))
	}
	host := hardware.Collect(hardware.Config{DataDir: dir})
	if host.DataDirFS == "tmpfs" || host.DataDirFS == "ramfs" {
		return usageErr(fmt.Errorf("--data-dir %s is on %s, in memory, where fdatasync is a no-op: qualify a folder on the disk etcd would use", dir, host.DataDirFS))
	}
	if err := checkWritableDir(a.resultsDir, a.runFile); err != nil {
		return err
	}
	ctx := cmd.Context()
	disk, err := diskprobe.Run(ctx, diskprobe.Config{Dir: dir, Pattern: diskprobe.PatternFio})
	if errors.Is(err, diskprobe.ErrTmpfs) || errors.Is(err, diskprobe.ErrNotDir) || errors.Is(err, diskprobe.ErrReadOnly) || errors.Is(err, diskprobe.ErrNoSpace) {
		return usageErr(err)
	}
	if err != nil {
		return fmt.Errorf("disk probe: %w", err)
	}

	// Tiers to try, highest first: the asked one, or every tier down from the
	// highest whose static criteria pass (small when none do, to show why).
	var order []hardware.Tier
	if qf.tier != "" {
		order = []hardware.Tier{*tierByName(qf.tier)}
	} else {
		start := 0
		for i := len(hardware.Tiers) - 1; i > 0; i-- {
			if allPass(staticCriteria(host, disk, hardware.Tiers[i])) {
				start = i
				break
			}
		}
		for i := start; i >= 0; i-- {
			order = append(order, hardware.Tiers[i])
		}
	}

	var out qualifyJSON
	var last measured
	for _, tier := range order {
		tr := tierResult{Tier: tier.Name, Criteria: staticCriteria(host, disk, tier)}
		if allPass(tr.Criteria) || qf.tier != "" || len(out.Tiers) == 0 {
			lr, err := a.qualifyLoad(cmd, dir, tier, qf)
			if err != nil {
				return err
			}
			last = lr
			tr.LoadRun = true
			tr.Criteria = append(tr.Criteria, loadCriteria(lr, tier, qf.p99)...)
		}
		tr.Pass = allPass(tr.Criteria)
		out.Tiers = append(out.Tiers, tr)
		if tr.Pass {
			out.QualifiedTier = tier.Name
			break
		}
	}
	out.finish(qf.tier, host, disk, last)
	run := last.run
	if run == nil {
		run = a.newRun(cmd, "qualify", nil)
	}
	run.Command = "qualify"
	run.Host = host
	run.Disk = []results.DiskResult{disk}
	run.Diagnosis = last.report.Diagnosis()
	run.Diagnosis.Verdict = &out.Verdict
	path, werr := a.writeRun(run)
	out.RunFile = path
	if err := a.printQualify(out); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return verdictExit(out.Verdict.Status)
}

// qualifyLoad runs the tier's load on an embedded etcd whose data lives in a
// folder of its own inside dir, removed afterwards.
func (a *app) qualifyLoad(cmd *cobra.Command, dir string, tier hardware.Tier, qf *qualifyFlags) (measured, error) {
	e, err := profiles.Load("check-perf-s")
	if err != nil {
		return measured{}, err
	}
	p := *e.Profile
	load := tierLoad[tier.Name]
	p.Name, p.Rate, p.Clients, p.Connections = "qualify-"+tier.Name, load.rate, load.clients, load.clients
	p.Duration, p.Warmup = profiles.Duration(qf.duration), 0
	p.Description = fmt.Sprintf("the %s tier's load: %g puts/s of 1 KiB from %d clients", tier.Name, load.rate, load.clients)
	sub, err := os.MkdirTemp(dir, ".etcdperf-qualify-")
	if err != nil {
		return measured{}, fmt.Errorf("data dir: %w", err)
	}
	defer os.RemoveAll(sub)
	saved := a.conn.dataDir
	a.conn.dataDir = sub
	defer func() { a.conn.dataDir = saved }()
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, max(p.Connections, 1))
	if err != nil {
		return measured{}, err
	}
	defer release()
	lr, err := a.runProfile(ctx, cmd, "qualify", t, clis, &p, defaultCheckPrefix, false)
	if err != nil {
		return measured{}, err
	}
	if lr.err != nil {
		return measured{}, fmt.Errorf("%s load: %w", tier.Name, lr.err)
	}
	return lr, nil
}

func tierByName(name string) *hardware.Tier {
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

// memorySlack accepts an "8 GB" machine that reports a little less after the
// kernel and firmware take theirs (as hardware.HostTier does).
const memorySlack = 0.9

// staticCriteria grades what needs no load: CPUs, memory, fdatasync p99 and
// sequential IOPS of the probe.
func staticCriteria(h *results.Host, disk results.DiskResult, t hardware.Tier) []qualCriterion {
	cpus := h.EffectiveCPUs()
	iops := float64(iopsTypical)
	if tierIndex(t.Name) >= tierIndex("large") {
		iops = iopsHeavy
	}
	rule := diskprobe.RuleWAL
	return []qualCriterion{
		higher("CPU", fmt.Sprintf("%g CPUs", cpus), cpus, fmt.Sprintf("≥ %d CPUs", t.CPUs), float64(t.CPUs), hardware.TiersSource, cpus > 0),
		higher("memory", fmt.Sprintf("%.1f GB", float64(h.MemoryBytes)/1e9), float64(h.MemoryBytes),
			fmt.Sprintf("≥ %d GB (%.0f%% accepted)", t.MemoryBytes/1e9, memorySlack*100), memorySlack*float64(t.MemoryBytes), hardware.TiersSource, h.MemoryBytes > 0),
		lower("disk fdatasync p99", fmtMs(disk.Fdatasync.P99), disk.Fdatasync.P99, "< "+fmtMs(rule.LimitMs), rule.LimitMs, rule.Source, disk.Fdatasyncs > 0, true),
		higher("sequential IOPS", fmt.Sprintf("%.0f", disk.IOPS), disk.IOPS, fmt.Sprintf("≥ %.0f", iops), iops, iopsSource, disk.Writes > 0),
	}
}

// loadCriteria grades the tier's load run: the rate achieved, the p99, and the
// analyzer's findings.
func loadCriteria(lr measured, t hardware.Tier, p99 time.Duration) []qualCriterion {
	load := tierLoad[t.Name]
	var got, worst float64
	for _, op := range lr.run.Ops {
		if op.TargetRPS > 0 {
			got += op.ThroughputRPS
			worst = max(worst, op.Latency.P99)
		}
	}
	limit := float64(p99) / float64(time.Millisecond)
	need := 0.95 * load.rate
	var fails []string
	for _, f := range lr.report.Findings {
		if f.Severity == finding.Fail {
			fails = append(fails, string(f.Class))
		}
	}
	diag := qualCriterion{Name: "diagnosis", Observed: "no signal graded fail", Required: "no signal graded fail",
		Source: "etcdperf analyzer (rules cite their sources)", Pass: len(fails) == 0}
	if len(fails) > 0 {
		diag.Observed = "fail: " + strings.Join(fails, ", ")
	}
	return []qualCriterion{
		higher("achieved load", fmt.Sprintf("%.0f req/s", got), got, fmt.Sprintf("≥ %.0f req/s (95%% of %g, %d clients)", need, load.rate, load.clients), need,
			hardware.TiersSource+" (tier workload bounds); etcdperf validity rule (95%)", len(lr.run.Ops) > 0),
		lower("latency p99", fmtMs(worst), worst, "≤ "+fmtMs(limit), limit, profiles.DefaultP99Source, len(lr.run.Ops) > 0, false),
		diag,
	}
}

// higher builds a row where more is better; measured says whether obs is known.
func higher(name, obsText string, obs float64, reqText string, req float64, src string, measured bool) qualCriterion {
	c := qualCriterion{Name: name, Observed: obsText, Required: reqText, Source: src}
	if measured && req > 0 {
		m := obs/req - 1
		c.Margin, c.Pass = &m, obs >= req
	}
	return c
}

// lower builds a row where less is better; strict requires obs < req, else obs ≤ req.
func lower(name, obsText string, obs float64, reqText string, req float64, src string, measured, strict bool) qualCriterion {
	c := qualCriterion{Name: name, Observed: obsText, Required: reqText, Source: src}
	if measured && req > 0 {
		m := 1 - obs/req
		c.Margin, c.Pass = &m, obs < req || (!strict && obs == req)
	}
	return c
}

func allPass(cs []qualCriterion) bool {
	for _, c := range cs {
		if !c.Pass {
			return false
		}
	}
	return true
}

// qualifyJSON is qualify's -w json object.
type qualifyJSON struct {
	Verdict       finding.Verdict    `json:"verdict"`
	Findings      []finding.Finding  `json:"findings"`
	QualifiedTier string             `json:"qualified_tier"` // "" when none
	Tiers         []tierResult       `json:"tiers"`
	Disk          results.DiskResult `json:"disk"`
	Host          *results.Host      `json:"host"`
	Ops           []benchOpJSON      `json:"ops"`
	RunFile       string             `json:"run_file"`
}

// finish fills the verdict: pass when the host qualifies for the asked tier (or
// for any, when none was asked); the bottleneck is the first failing criterion's
// resource of the highest tier tried.
func (q *qualifyJSON) finish(asked string, host *results.Host, disk results.DiskResult, last measured) {
	q.Host, q.Disk = host, withoutHists(disk)
	q.Findings = last.report.Findings
	if q.Findings == nil {
		q.Findings = []finding.Finding{}
	}
	q.Ops = []benchOpJSON{}
	if last.run != nil {
		q.Ops = newBenchJSON(last.run, "").Ops
	}
	q.Verdict = finding.Verdict{Status: finding.StatusPass, Bottleneck: finding.BottleneckNone}
	if q.QualifiedTier == "" || (asked != "" && q.QualifiedTier != asked) {
		q.Verdict.Status = finding.StatusFail
	}
	top := q.Tiers[0]
	var short []string
	for _, c := range top.Criteria {
		if !c.Pass {
			short = append(short, fmt.Sprintf("%s %s (needs %s)", c.Name, c.Observed, c.Required))
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
func criterionClass(name string, last measured) string {
	switch name {
	case "CPU":
		return string(finding.ClassCPU)
	case "memory":
		return string(finding.ClassMemory)
	case "disk fdatasync p99", "sequential IOPS":
		return string(finding.ClassDisk)
	}
	for _, f := range last.report.Findings {
		if f.Severity == finding.Fail && !f.Class.Context() {
			return string(f.Class)
		}
	}
	return finding.BottleneckNone
}

func (a *app) printQualify(q qualifyJSON) error {
	if a.output == "json" {
		return a.printJSON(q)
	}
	w := a.stdout
	h := q.Host
	fmt.Fprintf(w, "host %s: %g CPUs, %.1f GB memory; data dir %s (%s", h.Hostname, h.EffectiveCPUs(), float64(h.MemoryBytes)/1e9, h.DataDir, h.DataDirFS)
	if h.Disk != nil {
		fmt.Fprintf(w, " on %s", h.Disk.Device)
	}
	fmt.Fprintf(w, ")\ndisk probe: %s\n", q.Disk.GradeReason)
	for _, tr := range q.Tiers {
		fmt.Fprintf(w, "\ntier %s: %s\n", tr.Tier, passText(tr.Pass))
		tw := a.table()
		fmt.Fprintln(tw, "  CRITERION\tOBSERVED\tREQUIRED\tMARGIN\tRESULT\tSOURCE")
		for _, c := range tr.Criteria {
			margin := "?"
			if c.Margin != nil {
				margin = fmt.Sprintf("%+.0f%%", *c.Margin*100)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Observed, c.Required, margin, passText(c.Pass), c.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if !tr.LoadRun {
			fmt.Fprintln(w, "  (load not run: the host falls short of the tier already)")
		}
	}
	tier := q.QualifiedTier
	if tier == "" {
		tier = "none (" + hardware.BelowSmall + " or the load failed)"
	}
	fmt.Fprintf(w, "\nqualifies for: %s\n%s  %s\n", tier, strings.ToUpper(q.Verdict.Status), q.Verdict.Summary)
	for _, f := range q.Findings {
		if f.Severity == finding.Fail || f.Severity == finding.Warn {
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
		}
	}
	fmt.Fprintf(w, "run file: %s\n", q.RunFile)
	return nil
}

func passText(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
