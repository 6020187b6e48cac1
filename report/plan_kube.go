package report

import (
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/plan"
)

// KubePlan is `plan --kubernetes`'s output: the result and the run file.
type KubePlan struct {
	plan.KubeResult
	RunFile string `json:"run_file"`
}

// Simple writes the verdict (the answer in nodes and pods, what runs out
// first), then the model with its sources, the traffic it makes, the steps and
// the findings behind what ran out.
func (k KubePlan) Simple(w io.Writer) error {
	a := k.Kubernetes
	r := a.Model.Requested
	fmt.Fprintln(w, verdictLine(k.Verdict))
	fmt.Fprintf(w, "plan --kubernetes: %d nodes, %d pods, churn %.3g pods/s, %d apiservers; SLO %s (a whole LIST: p99 ≤ %s)\n",
		r.Nodes, r.Pods, r.Churn, r.APIServers, plan.SLOText(k.SLO), Ms(a.Model.ListP99Ms))
	fmt.Fprintln(w, "model:")
	tw := NewTable(w)
	for _, as := range a.Model.Assumptions {
		mark := ""
		if as.Overridden {
			mark = " (overridden)"
		}
		fmt.Fprintf(tw, "  %s\t%g %s%s\t%s\n", as.Key, as.Value, as.Unit, mark, as.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "traffic at %d nodes: %.1f updates/s, %.2g creates/s, %.2g deletes/s, %.3g events/s on %.2g lease grants/s, %.2g LISTs/s of %d pods (%d pages), %.0f watch events/s; %d objects of %.0f B, db ≈ %s (quota at %d nodes)\n",
		r.Nodes, r.UpdatesPerS, r.CreatesPerS, r.DeletesPerS, r.EventsPerS, r.LeaseGrantsPerS, r.ListsPerS, r.ListObjects, r.ListPages, r.WatchEventsPerS, r.Objects, r.ObjectBytes, units.Bytes(r.DBBytes), r.NodesAtQuota)
	tw = NewTable(w)
	fmt.Fprintln(tw, "  STEP\tNODES\tPODS\tOFFERED\tTHROUGHPUT\tP99\tLIST P99 (LISTS)\tRESULT")
	for i, s := range k.Steps {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\n", i+1, s.Nodes, s.Pods, s.OfferedRPS, s.ThroughputRPS, Ms(s.P99Ms), listText(s), stepResult(&s.RateStep))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeFindings(w, k.Findings, false)
	fmt.Fprintf(w, "run file: %s\n", k.RunFile)
	return nil
}

// Table writes the step table alone: one row per cluster size tried, in the
// order they ran.
func (k KubePlan) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "STEP\tNODES\tPODS\tOFFERED\tTHROUGHPUT\tP99\tLISTS\tLIST P99\tERRORS\tVALID\tBOTTLENECK\tRESULT")
	for i, s := range k.Steps {
		listP99 := "-"
		if s.Lists > 0 {
			listP99 = Ms(s.ListP99Ms)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.1f\t%s\t%d\t%s\t%d\t%t\t%s\t%s\n", i+1, s.Nodes, s.Pods, s.OfferedRPS, s.ThroughputRPS, Ms(s.P99Ms),
			s.Lists, listP99, s.Errors, s.Valid, s.Bottleneck, stepResult(&s.RateStep))
	}
	return tw.Flush()
}

func listText(s *plan.KubeSize) string {
	if s.Lists == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%d)", Ms(s.ListP99Ms), s.Lists)
}
