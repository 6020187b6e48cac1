package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/internal/measure"
	"github.com/etcdperf/etcdperf/internal/qualify"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// defaultQualifyDuration keeps a qualification practical: long enough for a few
// thousand requests at the small tier's rate, short enough to run on every new machine.
const defaultQualifyDuration = 30 * time.Second

type qualifyFlags struct{ qualify.Config }

func newQualifyCmd(a *app) *cobra.Command {
	qf := &qualifyFlags{}
	cmd := &cobra.Command{
		Use:   "qualify --data-dir DIR",
		Short: "Qualify this host for a tier of etcd's hardware guide: CPU, memory, the disk under DIR, and a load run",
		Long:  qualify.Usage,
		Example: `  etcdperf qualify --data-dir /var/lib/etcd-test
  etcdperf qualify --data-dir /mnt/ssd --tier medium --duration 1m -w json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runQualify(cmd, qf) },
	}
	f := cmd.Flags()
	f.StringVar(&qf.Tier, "tier", "", "tier to qualify for: small, medium, large or xlarge (default: the highest that passes)")
	f.DurationVar(&qf.Duration, "duration", defaultQualifyDuration, "measured window of each load run")
	f.DurationVar(&qf.P99, "p99", profiles.DefaultP99, "p99 response-time requirement of the load run")
	return cmd
}

func (a *app) runQualify(cmd *cobra.Command, qf *qualifyFlags) error {
	qf.DataDir = a.conn.DataDir
	if err := qf.Validate(len(a.conn.Endpoints) > 0); err != nil {
		return usageErr(err)
	}
	host := hardware.Collect(hardware.Config{DataDir: qf.DataDir})
	if err := qf.CheckHost(host); err != nil {
		return usageErr(err)
	}
	if err := results.CheckWritable(a.resultsDir, a.runFile); err != nil {
		return err
	}
	disk, err := qf.Probe(cmd.Context())
	var cannot *qualify.CannotProbeError
	if errors.As(err, &cannot) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	res, run, err := qualify.Run(qf.Tier, host, disk, qf.P99, func(tier hardware.Tier) (*results.Run, analyze.Result, error) {
		lr, err := a.qualifyLoad(cmd, qf.DataDir, tier, qf)
		return lr.Run, lr.Analysis, err
	})
	if err != nil {
		return err
	}
	if run == nil {
		run = a.newRun(cmd, "qualify", nil)
	}
	run = res.RunFile(run, host, disk)
	out := report.NewQualify(res, host, disk, run, "")
	if err := run.SetSection(qualify.Record{Result: out.Result, Disk: out.Disk, Host: out.Host}); err != nil {
		return err
	}
	return a.finish(run, res.Verdict.Status, func(path string) (report.Output, error) {
		return report.NewQualify(res, host, disk, run, path), nil
	})
}

// qualifyLoad runs the tier's load on an embedded etcd whose data lives in a
// folder of its own inside dir, removed afterwards.
func (a *app) qualifyLoad(cmd *cobra.Command, dir string, tier hardware.Tier, qf *qualifyFlags) (measure.Measured, error) {
	p, err := qualify.Profile(tier, qf.Duration)
	if err != nil {
		return measure.Measured{}, err
	}
	sub, err := os.MkdirTemp(dir, ".etcdperf-qualify-")
	if err != nil {
		return measure.Measured{}, fmt.Errorf("data dir: %w", err)
	}
	defer os.RemoveAll(sub)
	saved := a.conn.DataDir
	a.conn.DataDir = sub
	defer func() { a.conn.DataDir = saved }()
	ctx := cmd.Context()
	t, clis, release, err := a.openLoad(ctx, max(p.Connections, 1))
	if err != nil {
		return measure.Measured{}, err
	}
	defer release()
	lr, err := a.runProfile(ctx, cmd, "qualify", t, clis, p, defaultCheckPrefix, false)
	if err != nil {
		return measure.Measured{}, err
	}
	if lr.Err != nil {
		return measure.Measured{}, fmt.Errorf("%s load: %w", tier.Name, lr.Err)
	}
	return lr, nil
}
