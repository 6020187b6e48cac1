package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

func newDiskCmd(a *app) *cobra.Command {
	var (
		cfg  diskprobe.Config
		size string
	)
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Probe the fdatasync latency of the disk under a folder, as fio does and as etcd writes",
		Long:  diskprobe.Usage,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := units.ParseSize(size)
			if err != nil {
				return usageErr(fmt.Errorf("--size: %w", err))
			}
			cfg.Size = n
			if err := results.CheckWritable(a.resultsDir, a.runFile); err != nil {
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
			if perr := report.Print(a.stdout, a.output, report.NewDisk(res, path)); perr != nil {
				return perr
			}
			switch {
			case err != nil:
				return fmt.Errorf("disk probe interrupted, partial results written: %w", err)
			case werr != nil:
				return werr
			case res.Severity() == finding.Fail:
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
