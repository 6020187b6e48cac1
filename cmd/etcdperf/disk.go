package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/metrics"
	"github.com/etcdperf/etcdperf/results"
	"github.com/etcdperf/etcdperf/units"
)

func newDiskCmd(a *app) *cobra.Command {
	var (
		cfg  diskprobe.Config
		size string
	)
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Probe the fdatasync latency of the disk under a folder, as fio does and as etcd writes",
		Long: `disk writes in a temp folder inside --dir and grades the p99 of fdatasync.

Patterns:
  fio      the I/O of fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300
  wal      etcd's WAL: 64 MB preallocated segments, 8-byte framed records, one fdatasync per batch, segment cuts
  backend  etcd's bbolt commits: random 4 KiB pages, fdatasync, meta page, fdatasync, every 100 ms
  etcd     wal and backend at once, as in a member

Grades: p99 fdatasync < 10 ms (etcd FAQ); with --block-size 8000, OpenShift's variant, < 20 ms;
backend commits p99 < 25 ms (etcd FAQ). Exit 0 pass or warn, 1 fail, 2 could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := units.ParseSize(size)
			if err != nil {
				return usageErr(fmt.Errorf("--size: %w", err))
			}
			cfg.Size = n
			if err := checkWritableDir(a.resultsDir, a.runFile); err != nil {
				return err
			}
			run := a.newRun(cmd, "disk", nil)
			res, err := diskprobe.Run(cmd.Context(), cfg)
			if err != nil && !res.Interrupted {
				return err
			}
			run.Disk = []results.DiskResult{res}
			run.DurationS = res.DurationS
			if res.Interrupted {
				run.Interrupted, run.Error = true, err.Error()
			}
			path, werr := a.writeRun(run)
			if perr := a.printDisk(res, path); perr != nil {
				return perr
			}
			switch {
			case err != nil:
				return fmt.Errorf("disk probe interrupted, partial results written: %w", err)
			case werr != nil:
				return werr
			case res.Grade == diskprobe.Fail:
				return withCode(ExitFail, nil)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Dir, "dir", ".", "folder on the disk to probe (etcd's data dir disk); the probe writes only in a temp folder inside it")
	f.StringVar(&cfg.Pattern, "pattern", diskprobe.PatternFio, "I/O pattern: "+strings.Join(diskprobe.Patterns, ", "))
	f.StringVar(&size, "size", diskprobe.FormatSize(diskprobe.DefaultSize), "bytes to write: "+units.SizeSyntax)
	f.IntVar(&cfg.BlockSize, "block-size", diskprobe.DefaultBlockSize, "bytes per write (fio) or per WAL batch (wal); 8000 is OpenShift's variant, graded at 20 ms")
	f.DurationVar(&cfg.Duration, "duration", 0, "stop after this long (default: when --size is written; backend alone: 15s)")
	f.BoolVar(&cfg.AllowTmpfs, "allow-tmpfs", false, "probe tmpfs or ramfs anyway (fdatasync is a no-op there)")
	return cmd
}

// diskJSON is the -w json object: the result without its encoded histograms (they are in
// the run file), plus the run file's path.
type diskJSON struct {
	results.DiskResult
	RunFile string `json:"run_file,omitempty"`
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

func (a *app) printDisk(res results.DiskResult, runFile string) error {
	switch a.output {
	case "json":
		return a.printJSON(diskJSON{DiskResult: withoutHists(res), RunFile: runFile})
	case "table":
		tw := a.table()
		fmt.Fprintln(tw, "PATTERN\tSIGNAL\tP50\tP90\tP99\tP99.9\tMAX\tCOUNT\tIOPS\tMB/S\tGRADE")
		diskRows(tw, res)
		if res.Backend != nil {
			diskRows(tw, *res.Backend)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	default:
		a.diskSimple(res)
		if res.Backend != nil {
			fmt.Fprintln(a.stdout, "concurrent backend commits:")
			a.diskSimple(*res.Backend)
		}
		fmt.Fprintf(a.stdout, "grade: %s (%s)\n", strings.ToUpper(res.Grade), res.GradeReason)
	}
	if res.FioCommand != "" && a.output != "json" {
		fmt.Fprintf(a.stdout, "fio equivalent: %s\n", res.FioCommand)
	}
	if runFile != "" && a.output != "json" {
		fmt.Fprintf(a.stdout, "run file: %s\n", runFile)
	}
	return nil
}

func diskRows(tw *tabwriter.Writer, r results.DiskResult) {
	row := func(signal string, s results.Summary, n int64, stats string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Pattern, signal,
			fmtMs(s.P50), fmtMs(s.P90), fmtMs(s.P99), fmtMs(s.P999), fmtMs(s.Max), n, stats)
	}
	stats := fmt.Sprintf("%.0f\t%.1f\t%s", r.IOPS, r.MBPerS, r.Grade)
	row("fdatasync", r.Fdatasync, r.Fdatasyncs, stats)
	row("write", r.Write, r.Writes, "\t\t")
	if r.Commit != nil {
		row("commit", *r.Commit, r.Commits, "\t\t")
	}
}

func (a *app) diskSimple(r results.DiskResult) {
	w := a.stdout
	fmt.Fprintf(w, "%s pattern, %d-byte blocks, %.1f MiB in %.2fs in %s", r.Pattern, r.BlockSize, float64(r.Bytes)/(1<<20), r.DurationS, r.Dir)
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
			fmtMs(s.P50), fmtMs(s.P90), fmtMs(s.P99), fmtMs(s.P999), fmtMs(s.Max))
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
