package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/plan"
	"github.com/etcdperf/etcdperf/results"
)

// KeepJob stores o, the output of the command that judged run (check, qualify,
// plan), in the run file (results.Run.Job), so analyze and report reproduce
// what the command printed. Its run file and report paths are left out: the
// file does not know where it will be read from.
func KeepJob(run *results.Run, o Output) error {
	switch j := o.(type) {
	case Plan:
		j.RunFile, j.Report = "", ""
		o = j
	case KubePlan:
		j.RunFile = ""
		o = j
	case Qualify:
		j.RunFile = ""
		o = j
	case Check:
		j.RunFile = ""
		o = j
	}
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("run file: store %s's output: %w", run.Command, err)
	}
	run.Job = b
	return nil
}

// Job is the output a run file stores of the command that judged it (see
// KeepJob), read back: printed as the command printed it, with the run file's
// path and, below it, the analysis of the run the file's own figures are (for
// plan, the knee's step), labelled as such.
type Job struct {
	// Output is the command's output as it printed it.
	Output Output
	// Status is the verdict the command's exit code followed.
	Status string
	// Step is the analysis of the file's own run; StepLabel names that run.
	Step      analyze.Report
	StepLabel string
}

// JobOf decodes the output run stores of the command that judged it, found at
// path, and pairs it with step, the analysis of the file's own run; ok is false
// when the file stores none (a bench run, or a file written before it was kept).
func JobOf(run *results.Run, path string, step analyze.Report) (j Job, ok bool, err error) {
	if len(run.Job) == 0 {
		return Job{}, false, nil
	}
	bad := func(err error) (Job, bool, error) {
		return Job{}, false, fmt.Errorf("%s: the stored %s output: %w", path, run.Command, err)
	}
	j = Job{Step: step}
	switch run.Command {
	case "plan":
		var head struct {
			Kubernetes json.RawMessage `json:"kubernetes"`
		}
		if err := json.Unmarshal(run.Job, &head); err != nil {
			return bad(err)
		}
		if len(head.Kubernetes) > 0 {
			var k KubePlan
			if err := json.Unmarshal(run.Job, &k); err != nil {
				return bad(err)
			}
			k.RunFile = path
			j.Output, j.Status, j.StepLabel = k, k.Verdict.Status, kneeLabel(k.Knee, k.RateSteps())
			break
		}
		var p Plan
		if err := json.Unmarshal(run.Job, &p); err != nil {
			return bad(err)
		}
		p.RunFile = path
		j.Output, j.Status, j.StepLabel = p, p.Verdict.Status, kneeLabel(p.Knee, p.Steps)
	case "qualify":
		var q Qualify
		if err := json.Unmarshal(run.Job, &q); err != nil {
			return bad(err)
		}
		q.RunFile = path
		j.Output, j.Status, j.StepLabel = q, q.Verdict.Status, "diagnosis of the last load run (analyze's grading of the run file)"
	case "check":
		var c Check
		if err := json.Unmarshal(run.Job, &c); err != nil {
			return bad(err)
		}
		c.RunFile = path
		// check prints the diagnosis its verdict came from; the run file stores it.
		c.rep = analyze.Report{Verdict: c.Verdict, Findings: c.Findings, Budget: c.Budget, Notes: c.Notes, Verbose: step.Verbose}
		if d := run.Diagnosis; d != nil {
			c.rep.Hardware = d.Hardware
		}
		j.Output, j.Status = c, c.Verdict.Status
		if c.ExitFollows == "compat" {
			j.Status = c.Compat.Status
		}
	default:
		return bad(fmt.Errorf("no stored output is known for command %q", run.Command))
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
