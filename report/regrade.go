package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/qualify"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/results"
)

// Regraded is one line saying where the verdicts run stores differ from what
// this build's rules give on the inputs the file keeps (status, bottleneck,
// ranked classes, each class's severity); "" when they agree, as they do for a
// file this build wrote. The runs compared: a plan's steps, check's default
// verdict (from its stored objective), and a bench run's own diagnosis.
func Regraded(run *results.Run) (string, error) {
	var diffs []string
	add := func(label string, r *results.Run, stored finding.Verdict, storedFs []finding.Finding, fresh func(analyze.Result) finding.Verdict) error {
		rep, err := analyze.Run(r, analyze.Options{})
		if err != nil {
			return err
		}
		s, f := gradedText(stored, storedFs), gradedText(fresh(rep), rep.Findings)
		if s != f {
			diffs = append(diffs, fmt.Sprintf("%sstored %s, now %s", label, s, f))
		}
		return nil
	}
	analyzer := func(rep analyze.Result) finding.Verdict { return rep.Verdict }
	for i, s := range run.Steps {
		if d := s.Diagnosis; d != nil && d.Verdict != nil {
			if err := add(fmt.Sprintf("step %d: ", i+1), s, *d.Verdict, d.Findings, analyzer); err != nil {
				return "", err
			}
		}
	}
	var c check.Result
	isCheck, err := run.Section(&c)
	if err != nil {
		return "", err
	}
	d := run.Diagnosis
	switch {
	case d == nil || d.Verdict == nil:
	case isCheck && c.P99LimitMs > 0:
		limit := time.Duration(c.P99LimitMs * float64(time.Millisecond))
		err = add("", run, c.Verdict, d.Findings, func(rep analyze.Result) finding.Verdict {
			v, _ := check.Default(run, rep, limit, c.P99Source)
			return v
		})
	case len(run.Steps) == 0 && !isCheck && !has(run, plan.Record{}, plan.KubeResult{}, qualify.Record{}):
		err = add("", run, *d.Verdict, d.Findings, analyzer)
	}
	if err != nil || len(diffs) == 0 {
		return "", err
	}
	by := run.Tool.Version
	if run.Tool.Commit != "" {
		by += " " + run.Tool.Commit
	}
	return fmt.Sprintf("the stored verdict came from other rules (etcdperf %s); this build grades the same inputs apart: %s", by, strings.Join(diffs, "; ")), nil
}

// has says whether run holds a section of any of the types.
func has(run *results.Run, of ...results.Section) bool {
	return slices.ContainsFunc(of, func(s results.Section) bool { return run.Sections[s.SectionName()] != nil })
}

// gradedText is a verdict as Regraded compares it: status/bottleneck, the
// ranked classes and the worst severity of each class at warn or fail.
func gradedText(v finding.Verdict, fs []finding.Finding) string {
	worst := map[finding.Class]finding.Severity{}
	for _, f := range fs {
		if f.Severity.Bad() && f.Severity.Rank() > worst[f.Class].Rank() {
			worst[f.Class] = f.Severity
		}
	}
	var bad []string
	for _, c := range finding.Classes {
		if s, ok := worst[c]; ok {
			bad = append(bad, fmt.Sprintf("%s %s", c, s))
		}
	}
	s := string(v.Status) + "/" + v.Bottleneck
	if len(v.Ranked) > 0 {
		s += " [" + strings.Join(v.Ranked, " ") + "]"
	}
	if len(bad) > 0 {
		s += " (" + strings.Join(bad, ", ") + ")"
	}
	return s
}
