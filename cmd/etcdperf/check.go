package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/check"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
)

// checkLoads maps etcdctl check perf's --load values (and its aliases) to profiles.
var checkLoads = map[string]string{
	"s": "check-perf-s", "small": "check-perf-s",
	"m": "check-perf-m", "medium": "check-perf-m",
	"l": "check-perf-l", "large": "check-perf-l",
	"xl": "check-perf-xl", "xLarge": "check-perf-xl",
}

// defaultCheckPrefix keeps check's keys apart from etcdctl check perf's
// (/etcdctl-check-perf/) and from bench's default.
const defaultCheckPrefix = "/etcdperf/check/"

type checkFlags struct {
	load      string
	profile   string
	duration  time.Duration
	warmup    time.Duration
	p99       time.Duration
	compat    bool
	warmupSet bool
	prefix    string
	force     bool
	report    string
	compact   time.Duration
	worker    workerFlags
}

func newCheckCmd(a *app) *cobra.Command {
	cf := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check a cluster's performance: etcdctl check perf's loads and rule, plus percentiles and a diagnosis",
		Long: `check runs a load against the cluster and gives two verdicts, both shown:

  compat   etcdctl check perf's rule, exactly: no errors, throughput above 90% of the
           target, slowest request ≤ 500 ms, stddev ≤ 100 ms (service time, as etcdctl
           times its requests).
  default  etcdperf's rule: every op's p99 response time (from the intended start, so
           queueing counts) within the profile's SLO (100 ms unless it states one), no
           errors, at least 95% of the target rate, and no signal the analyzer grades
           fail (a disk whose fdatasync p99 is 10x the guideline fails even when the
           light load of --load s still passes etcdctl's rule). A failure names the
           bottleneck and its evidence.

--load s|m|l|xl runs etcdctl check perf's load (150/1000/8000/15000 puts/s of 1 KiB
values to 256-byte random keys from 50/200/500/1000 clients, one connection each, for
60 s); --profile runs any profile (etcdperf profiles list) or a YAML file. Keys go
under --prefix, never etcdctl's /etcdctl-check-perf/, and are deleted afterwards.

Exit codes follow the chosen verdict (the default one, or etcdctl's with --compat):
0 pass, 1 fail, 2 could not run, 3 invalid (the load generator was saturated).`,
		Example: `  etcdperf check --endpoints 10.0.0.1:2379 --load m
  etcdperf check --profile kubernetes --duration 2m -w json
  etcdperf check --load s --compat     # exit code as etcdctl check perf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.warmupSet = cmd.Flags().Changed("warmup")
			return a.runCheck(cmd, cf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cf.load, "load", "", "etcdctl check perf load: s, m, l or xl (also small, medium, large, xLarge); default s")
	f.StringVar(&cf.profile, "profile", "", "profile name or YAML file to run instead of --load")
	f.DurationVar(&cf.duration, "duration", 0, "measured window (default: the profile's; 60s for --load)")
	f.DurationVar(&cf.warmup, "warmup", 0, "load before the measured window (default: the profile's)")
	f.DurationVar(&cf.p99, "p99", 0, "p99 response-time threshold of the default verdict (default: the profile's SLO, else 100ms)")
	f.BoolVar(&cf.compat, "compat", false, "exit code follows etcdctl check perf's rule instead of etcdperf's")
	f.StringVar(&cf.prefix, "prefix", defaultCheckPrefix, "key prefix the check writes under and deletes afterwards")
	f.BoolVar(&cf.force, "force", false, "run even when the prefix holds keys; they are deleted after the run")
	f.StringVar(&cf.report, "report", "", "also write a report with plots (text, HTML, PNG, SVG) to this folder")
	f.DurationVar(&cf.compact, "compact-interval", 0, "compact the cluster's history every interval during the load, as kube-apiserver does (default: the profile's compact_interval; it compacts the whole keyspace)")
	cf.worker.register(f)
	return cmd
}

// resolveProfile loads the profile of --load or --profile and applies the overrides.
func (cf *checkFlags) resolveProfile() (*profiles.Profile, error) {
	if cf.load != "" && cf.profile != "" {
		return nil, usageErr(errors.New("give --load or --profile, not both"))
	}
	name := cf.profile
	if name == "" {
		load := cf.load
		if load == "" {
			load = "s"
		}
		var ok bool
		if name, ok = checkLoads[load]; !ok {
			return nil, usageErr(fmt.Errorf("--load %q: want s, m, l or xl (small, medium, large, xLarge)", load))
		}
	}
	e, err := profiles.Load(name)
	if err != nil {
		return nil, usageErr(err)
	}
	p := e.Profile
	switch {
	case cf.duration < 0:
		return nil, usageErr(fmt.Errorf("--duration must be positive, got %s", cf.duration))
	case cf.duration > 0:
		p.Duration = profiles.Duration(cf.duration)
	}
	if cf.warmup < 0 {
		return nil, usageErr(fmt.Errorf("--warmup must not be negative, got %s", cf.warmup))
	}
	if cf.warmupSet {
		p.Warmup = profiles.Duration(cf.warmup)
	}
	if cf.p99 < 0 {
		return nil, usageErr(fmt.Errorf("--p99 must be positive, got %s", cf.p99))
	}
	if cf.prefix == "" {
		return nil, usageErr(errors.New("--prefix must not be empty: check deletes its prefix after the run"))
	}
	return p, nil
}

// p99Limit is the default verdict's threshold and where it comes from.
func (cf *checkFlags) p99Limit(p *profiles.Profile) (time.Duration, string) {
	switch {
	case cf.p99 > 0:
		return cf.p99, "--p99"
	case p.SLO.P99 > 0:
		return time.Duration(p.SLO.P99), "profile " + p.Name + " SLO"
	}
	return profiles.DefaultP99, profiles.DefaultP99Source
}

func (a *app) runCheck(cmd *cobra.Command, cf *checkFlags) error {
	p, err := cf.resolveProfile()
	if err != nil {
		return err
	}
	if cf.compact < 0 {
		return usageErr(fmt.Errorf("--compact-interval must not be negative, got %s", cf.compact))
	} else if cf.compact > 0 {
		p.CompactInterval = profiles.Duration(cf.compact)
	}
	if err := cf.worker.apply(&cf.prefix); err != nil {
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
	if err := cf.worker.start(a.stderr, &p.Rate, nil, nil); err != nil {
		return err
	}
	a.startAt = cf.worker.startAt
	lr, err := a.runProfile(ctx, cmd, "check", t, clis, p, cf.prefix, cf.force)
	if err != nil {
		return err
	}
	run := lr.Run
	if lr.Err != nil && len(run.Ops) == 0 {
		return lr.Err // nothing was measured: the prefix was in use, the fill failed, ...
	}
	limit, src := cf.p99Limit(p)
	out := checkJSON{Profile: profileSummary(p), ExitFollows: "default"}
	if cf.compat {
		out.ExitFollows = "compat"
	}
	out.Verdict, out.Criteria = check.Default(run, lr.Report, limit, src)
	if out.Compat, err = check.Compat(run); err != nil {
		return err
	}
	out.Findings, out.Budget, out.Notes = lr.Report.Findings, lr.Report.Budget, lr.Report.Notes
	if out.Findings == nil {
		out.Findings = []finding.Finding{}
	}
	// The run file keeps check's own verdict, so a report made from it says what check said.
	run.Diagnosis = lr.Report.Diagnosis()
	run.Diagnosis.Verdict = &out.Verdict
	path, werr := a.writeRun(run)
	if werr == nil {
		werr = writeReport(cf.report, run)
	}
	b := report.NewBench(run, path, nil)
	out.Ops, out.Valid, out.InvalidReason, out.DurationS, out.RunFile, out.Client = b.Ops, b.Valid, b.InvalidReason, b.DurationS, path, b.Client
	if perr := a.printCheck(out, lr.Report); perr != nil {
		return perr
	}
	status := out.Verdict.Status
	if cf.compat {
		status = out.Compat.Status
	}
	switch {
	case run.Interrupted:
		return fmt.Errorf("interrupted: partial results written to %s, keys under %s deleted: %w", path, cf.prefix, context.Canceled)
	case lr.Err != nil:
		return lr.Err
	case werr != nil:
		return werr
	}
	return verdictExit(status)
}

// verdictExit maps a verdict status to the exit code; the verdict is already printed.
func verdictExit(status string) error {
	switch status {
	case finding.StatusFail:
		return withCode(ExitFail, nil)
	case finding.StatusInvalid:
		return withCode(ExitInvalid, nil)
	}
	return nil
}

// checkJSON is check's -w json object: the contract's verdict and findings, the
// ops as bench reports them, and etcdctl's verdict under "compat".
type checkJSON struct {
	Verdict       finding.Verdict     `json:"verdict"`
	Findings      []finding.Finding   `json:"findings"`
	Ops           []report.BenchOp    `json:"ops"`
	Compat        check.CompatVerdict `json:"compat"`
	Criteria      []finding.Criterion `json:"criteria"`
	ExitFollows   string              `json:"exit_follows"` // default | compat
	Profile       profileJSON         `json:"profile"`
	Valid         bool                `json:"valid"`
	InvalidReason string              `json:"invalid_reason"`
	DurationS     float64             `json:"duration_s"`
	Client        report.BenchClient  `json:"client"`
	Budget        *finding.Budget     `json:"budget,omitempty"`
	Notes         []string            `json:"notes,omitempty"`
	RunFile       string              `json:"run_file"`
}

// profileJSON is what a command's output says about the profile it ran.
type profileJSON struct {
	Name        string  `json:"name"`
	Version     int     `json:"version"`
	Description string  `json:"description"`
	Rate        float64 `json:"rate"`
	Clients     int     `json:"clients"`
	Connections int     `json:"connections"`
	DurationS   float64 `json:"duration_s"`
}

func profileSummary(p *profiles.Profile) profileJSON {
	return profileJSON{Name: p.Name, Version: p.Version, Description: p.Description, Rate: p.Rate,
		Clients: p.Clients, Connections: max(p.Connections, 1), DurationS: time.Duration(p.Duration).Seconds()}
}

func (a *app) printCheck(out checkJSON, rep analyze.Report) error {
	if a.output == "json" {
		return a.printJSON(out)
	}
	w := a.stdout
	p := out.Profile
	// The answer first: the verdict, etcdctl's rule beside it, the bottleneck.
	fmt.Fprintf(w, "%s  %s: %s (etcdctl's rule: %s)\n", strings.ToUpper(out.Verdict.Status), p.Name, out.Verdict.Summary, strings.ToUpper(out.Compat.Status))
	fmt.Fprintf(w, "check %s v%d: %s\n", p.Name, p.Version, p.Description)
	fmt.Fprintf(w, "offered %g req/s from %d clients over %d connection(s); measured %.2fs\n", p.Rate, p.Clients, p.Connections, out.DurationS)
	for _, op := range out.Ops {
		fmt.Fprintf(w, "  %-16s %d requests, %d errors, %.1f req/s", op.Op, op.Requests, op.Errors, op.ThroughputRPS)
		if op.TargetRPS > 0 {
			fmt.Fprintf(w, " of %g target", op.TargetRPS)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %-16s response p50 %s  p99 %s  max %s;  service p99 %s  max %s  stddev %s\n", "",
			fmtMs(op.Latency.P50), fmtMs(op.Latency.P99), fmtMs(op.Latency.Max), fmtMs(op.Service.P99), fmtMs(op.Service.Max), fmtMs(op.Service.Stddev))
	}
	c := out.Compat
	fmt.Fprintf(w, "\ncompat verdict (etcdctl check perf rule): %s\n", strings.ToUpper(c.Status))
	fmt.Fprintf(w, "  throughput %.0f writes/s of %g, slowest %s, stddev %s, %d errors\n", c.ThroughputRPS, c.TargetRPS, fmtMs(c.SlowestMs), fmtMs(c.StddevMs), c.Errors)
	for _, f := range c.Failures {
		fmt.Fprintf(w, "  FAIL: %s\n", f)
	}
	fmt.Fprintf(w, "\ndefault verdict (etcdperf): %s\n", strings.ToUpper(out.Verdict.Status))
	tw := a.table()
	passed := 0
	for _, cr := range out.Criteria {
		mark := "ok"
		if !cr.Pass {
			mark = "FAIL"
		} else if !a.verbose {
			passed++
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, cr.Name, cr.Observed, cr.Threshold)
	}
	if passed > 0 {
		fmt.Fprintf(tw, "  ok\t%d criteria met (-v lists them)\n", passed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rep.Verdict = out.Verdict
	format := analyze.FormatSimple
	if a.output == "table" {
		format = analyze.FormatTable
	}
	rep.Verbose = a.verbose
	if err := rep.Write(w, format); err != nil {
		return err
	}
	if !out.Valid {
		fmt.Fprintf(w, "\nrun marked invalid by the generator: %s\n", out.InvalidReason)
	}
	fmt.Fprintf(w, "\nexit code follows the %s verdict", out.ExitFollows)
	if out.ExitFollows == "default" {
		fmt.Fprint(w, " (--compat: etcdctl's)")
	}
	fmt.Fprintf(w, "\nrun file: %s\n", out.RunFile)
	return nil
}
