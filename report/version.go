package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/etcdperf/etcdperf/internal/version"
)

// Version is the output of etcdperf version: this binary's version, commit, Go
// version and embedded etcd.
type Version version.Info

// Simple writes the one line --version prints.
func (v Version) Simple(w io.Writer) error {
	_, err := fmt.Fprintln(w, version.Info(v))
	return err
}

// Table writes one row per field.
func (v Version) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "FIELD\tVALUE")
	i := version.Info(v)
	for _, kv := range [][2]string{{"version", i.Version}, {"commit", i.ShortCommit()}, {"dirty", strconv.FormatBool(i.Dirty)},
		{"commit time", i.CommitTime}, {"go", i.Go}, {"embedded etcd", i.Etcd}, {"module", i.Module}} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	return tw.Flush()
}
