package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Disk is `disk`'s output: the probe's result without its encoded histograms
// (they are in the run file), and the run file's path.
type Disk struct {
	results.DiskResult
	RunFile string `json:"run_file,omitempty"`
}

// NewDisk is the output of a probe whose run file is at runFile ("" when none was written).
func NewDisk(r results.DiskResult, runFile string) Disk {
	return Disk{DiskResult: withoutHists(r), RunFile: runFile}
}

// withoutHists drops the encoded histograms, for stdout.
func withoutHists(r results.DiskResult) results.DiskResult {
	r.SyncHist, r.WriteHist, r.CommitHist = "", "", ""
	if r.Backend != nil {
		b := withoutHists(*r.Backend)
		r.Backend = &b
	}
	return r
}

// Simple writes each signal's percentiles, the counts, etcd's histogram buckets
// and the grade.
func (d Disk) Simple(w io.Writer) error {
	diskSimple(w, d.DiskResult)
	if d.Backend != nil {
		fmt.Fprintln(w, "concurrent backend commits:")
		diskSimple(w, *d.Backend)
	}
	fmt.Fprintf(w, "grade: %s (%s)\n", strings.ToUpper(string(d.Grade)), d.GradeReason)
	return d.tail(w)
}

// Table writes one row per pattern and signal.
func (d Disk) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "PATTERN\tSIGNAL\tP50\tP90\tP99\tP99.9\tMAX\tCOUNT\tIOPS\tMB/S\tGRADE")
	diskRows(tw, d.DiskResult)
	if d.Backend != nil {
		diskRows(tw, *d.Backend)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return d.tail(w)
}

// tail names the fio command of the same I/O and the run file.
func (d Disk) tail(w io.Writer) error {
	if d.FioCommand != "" {
		fmt.Fprintf(w, "fio equivalent: %s\n", d.FioCommand)
	}
	if d.RunFile != "" {
		fmt.Fprintf(w, "run file: %s\n", d.RunFile)
	}
	return nil
}

func diskRows(tw *tabwriter.Writer, r results.DiskResult) {
	row := func(signal string, s results.Summary, n int64, stats string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Pattern, signal,
			Ms(s.P50), Ms(s.P90), Ms(s.P99), Ms(s.P999), Ms(s.Max), n, stats)
	}
	stats := fmt.Sprintf("%.0f\t%.1f\t%s", r.IOPS, r.MBPerS, r.Grade)
	row("fdatasync", r.Fdatasync, r.Fdatasyncs, stats)
	row("write", r.Write, r.Writes, "\t\t")
	if r.Commit != nil {
		row("commit", *r.Commit, r.Commits, "\t\t")
	}
}

func diskSimple(w io.Writer, r results.DiskResult) {
	fmt.Fprintf(w, "%s pattern, %d-byte blocks, %s in %.2fs in %s", r.Pattern, r.BlockSize, units.Bytes(r.Bytes), r.DurationS, r.Dir)
	if r.Filesystem != "" {
		fmt.Fprintf(w, " (%s", r.Filesystem)
		if d := r.Device; d != nil {
			fmt.Fprintf(w, " on %s", d.Device)
			if d.Rotational != nil {
				fmt.Fprintf(w, ", rotational=%t", *d.Rotational)
			}
			if d.WriteCache != "" {
				fmt.Fprintf(w, ", %s cache", d.WriteCache)
			}
			if d.Model != "" {
				fmt.Fprintf(w, ", %s", d.Model)
			}
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	line := func(name string, s results.Summary) {
		fmt.Fprintf(w, "  %-9s p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n", name,
			Ms(s.P50), Ms(s.P90), Ms(s.P99), Ms(s.P999), Ms(s.Max))
	}
	line("fdatasync", r.Fdatasync)
	line("write", r.Write)
	if r.Commit != nil {
		line("commit", *r.Commit)
	}
	fmt.Fprintf(w, "  %d writes, %d fdatasyncs: %.0f IOPS, %.1f MB/s", r.Writes, r.Fdatasyncs, r.IOPS, r.MBPerS)
	if r.SegmentCuts > 0 {
		fmt.Fprintf(w, ", %d segment cuts", r.SegmentCuts)
	}
	fmt.Fprintln(w)
	buckets := r.FdatasyncBuckets
	name := metrics.WALFsync
	if r.Commit != nil {
		buckets, name = r.CommitBuckets, metrics.BackendCommit
	}
	var b strings.Builder
	for _, k := range buckets {
		fmt.Fprintf(&b, " ≤%gms:%d", k.LE*1000, k.Count)
		if k.Count == r.Fdatasyncs || (r.Commit != nil && k.Count == r.Commits) {
			break // the remaining buckets hold everything too
		}
	}
	fmt.Fprintf(w, "  as %s buckets:%s\n", name, b.String())
}
