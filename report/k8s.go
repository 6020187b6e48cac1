package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/k8s"
)

// K8sJob is the output of k8s job: the manifest (Simple prints it alone, to pipe
// into kubectl apply), and the objects it creates (Table).
type K8sJob struct {
	Manifest string       `json:"manifest"`
	Name     string       `json:"name"`
	StartAt  time.Time    `json:"start_at"`
	Workers  int          `json:"workers"`
	Objects  []k8s.Object `json:"-"`
}

// Simple writes the manifest.
func (j K8sJob) Simple(w io.Writer) error {
	_, err := io.WriteString(w, j.Manifest)
	return err
}

// Table writes one row per object the manifest creates, and when the workers start.
func (j K8sJob) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "KIND\tNAME\tNAMESPACE\tPODS\tSTATE\tIMAGE\tMOUNTS\tCOMMAND")
	for _, o := range j.Objects {
		state := "runs at " + j.StartAt.UTC().Format(time.RFC3339)
		if o.Suspended {
			state = "suspended"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", o.Kind, o.Name, dash(o.Namespace), o.Pods, state, o.Image,
			dash(strings.Join(o.Volumes, ",")), o.Command)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
