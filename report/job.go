package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/qualify"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/results"
)

// Job is the result of the command that judged a run (check, qualify, plan),
// read from its section of the run file: printed as the command printed it,
// with the run file's path and, below it, the analysis of the run the file's
// own figures are (for plan, the knee's step), labelled as such.
type Job struct {
	// Output is the command's output as it printed it.
	Output Output
	// Status is the verdict the command's exit code followed.
	Status finding.Status
	// Step is the analysis of the file's own run; StepLabel names that run.
	Step      analyze.Result
	StepLabel string
	// Regraded says where this build's rules grade the file apart from what it
	// stores (see Regraded); "" when they agree.
	Regraded string
}

// JobOf reads the section run keeps of the command that judged it, found at
// path, whichever it is, and pairs it with step, the analysis of the file's own
// run; ok is false when the file keeps none (a bench run, or a file written
// before it was kept).
func JobOf(run *results.Run, path string, step analyze.Result) (j Job, ok bool, err error) {
	var (
		c check.Result
		p plan.Record
		k plan.KubeResult
		q qualify.Record
	)
	var found results.Section
	for _, s := range []results.Section{&c, &p, &k, &q} {
		if ok, err := run.Section(s); err != nil {
			return Job{}, false, fmt.Errorf("%s: %w", path, err)
		} else if ok {
			found = s
			break
		}
	}
	j = Job{Step: step}
	switch found {
	case nil:
		return Job{}, false, nil
	case &k:
		out := KubePlan{KubeResult: k, RunFile: path}
		j.Output, j.Status, j.StepLabel = out, k.Verdict.Status, kneeLabel(k.Knee, k.RateSteps())
	case &p:
		out := Plan{Result: p.Result, Profile: p.Profile, RunFile: path}
		j.Output, j.Status, j.StepLabel = out, p.Verdict.Status, kneeLabel(p.Knee, p.Steps)
	case &q:
		out := Qualify{Result: q.Result, Disk: q.Disk, Host: q.Host, Ops: BenchOps(run), RunFile: path}
		j.Output, j.Status, j.StepLabel = out, q.Verdict.Status, "diagnosis of the last load run (analyze's grading of the run file)"
	case &c:
		// check prints the diagnosis its verdict came from; the run file stores it.
		rep := analyze.Result{Verbose: step.Verbose}
		if d := run.Diagnosis; d != nil {
			rep.Findings, rep.Budget, rep.Notes, rep.Hardware = d.Findings, d.Budget, d.Notes, d.Hardware
		}
		j.Output, j.Status = NewCheck(run, path, rep, c), c.Status()
	}
	return j, true, nil
}

// kneeLabel names the step whose run a plan's run file holds: the knee's, or
// the first when none held (plan.RunFile).
func kneeLabel(k *plan.Knee, steps []*plan.RateStep) string {
	if k != nil {
		for i, s := range steps {
			if s.OK && s.OfferedRPS == k.OfferedRPS && s.ThroughputRPS == k.ThroughputRPS {
				return fmt.Sprintf("diagnosis of the knee's step (step %d, %.0f req/s offered)", i+1, s.OfferedRPS)
			}
		}
		return "diagnosis of the knee's step"
	}
	return "diagnosis of step 1 (no step held; the run file keeps the first)"
}

// MarshalJSON is the command's output alone, as the command printed it with -w json.
func (j Job) MarshalJSON() ([]byte, error) { return json.Marshal(j.Output) }

// Simple writes the command's output, then the step's diagnosis.
func (j Job) Simple(w io.Writer) error { return j.write(w, "simple") }

// Table writes the command's table, then the step's diagnosis as tables.
func (j Job) Table(w io.Writer) error { return j.write(w, "table") }

func (j Job) write(w io.Writer, format string) error {
	if err := Print(w, format, j.Output); err != nil {
		return err
	}
	if j.Regraded != "" {
		fmt.Fprintf(w, "note: %s\n", j.Regraded)
	}
	if j.StepLabel == "" {
		return nil
	}
	fmt.Fprintf(w, "\n%s:\n", j.StepLabel)
	return Analysis(j.Step).write(w, format)
}

// jobSteps writes the table of the stored job's steps (plan's ramp, qualify's
// criteria), for report; nothing for a job without one.
func jobSteps(w io.Writer, o Output) error {
	switch j := o.(type) {
	case Plan, KubePlan, Qualify:
		return j.Table(w)
	}
	return nil
}

func jobStepsTitle(o Output) string {
	if _, ok := o.(Qualify); ok {
		return "Qualification criteria"
	}
	return "Plan steps"
}
