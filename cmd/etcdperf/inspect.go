package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/report"
)

// inspectFlags are the options of `etcdperf inspect`.
type inspectFlags struct {
	inspect.LiveOptions
	snapshot string
	previous string
}

func newInspectCmd(a *app) *cobra.Command {
	f := &inspectFlags{}
	f.PageBytes, f.ExactUnder, f.MaxRequestBytes = 2<<20, 512<<20, inspect.DefaultMaxRequestBytes
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Describe the stored data (prefixes, value sizes, history, db, quota) and the tuning, read-only",
		Long:  inspect.Usage,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runInspect(cmd, f) },
	}
	bytes := func(p *int64) *units.ByteSize { return (*units.ByteSize)(p) }
	fs := cmd.Flags()
	fs.StringVar(&f.snapshot, "snapshot", "", "inspect this snapshot file instead of a live cluster")
	fs.IntVar(&f.Depth, "depth", 2, "group keys into prefixes of this many '/'-separated segments (≥ 1)")
	fs.IntVar(&f.Top, "top", 10, "list this many largest keys")
	fs.StringVar(&f.KeyPrefix, "key-prefix", "", "inspect only the keys under this prefix (default: every key)")
	fs.Int64Var(&f.PageSize, "page-size", 1000, "keys per range request (live)")
	fs.Var(bytes(&f.PageBytes), "page-bytes", "about this many bytes per range that returns values (live)")
	fs.Float64Var(&f.MaxRPS, "max-rps", 10, "at most this many requests per second (live; 0 = unpaced)")
	fs.StringVar(&f.Values, "values", inspect.ValuesAuto, "how value sizes are read (live): auto, exact or sample (see above)")
	fs.Var(bytes(&f.ExactUnder), "exact-under", "db in-use size up to which --values auto reads every value; also the value bytes a sample reads")
	fs.Var(bytes(&f.MaxRequestBytes), "max-request-bytes", "the server's --max-request-bytes; keys at 2/3 of it are 'near the limit'")
	fs.Var(bytes(&f.QuotaBytes), "quota-bytes", "the backend quota (default: read from the cluster; etcd's 2GiB default for a snapshot)")
	fs.Float64Var(&f.DiskMBps, "disk-mbps", 0, fmt.Sprintf("a new member's disk write throughput, MB/s (default %d, assumed)", inspect.DefaultDiskMBps))
	fs.Float64Var(&f.NetMBps, "net-mbps", 0, fmt.Sprintf("network throughput to a new member, MB/s (default %d = 1 GbE, assumed)", inspect.DefaultNetMBps))
	fs.Float64Var(&f.HeartbeatMs, "heartbeat-ms", 0, "the members' --heartbeat-interval in ms (default: etcd's 100, assumed)")
	fs.Float64Var(&f.ElectionMs, "election-ms", 0, "the members' --election-timeout in ms (default: etcd's 1000, assumed)")
	fs.Int64Var(&f.SnapshotCount, "snapshot-count", 0, "the members' --snapshot-count (default: etcd's 10000, assumed)")
	fs.StringVar(&f.previous, "previous", "", "an earlier 'inspect -w json' output or a run file, for the growth rate")
	return cmd
}

func (f *inspectFlags) validate(cmd *cobra.Command, a *app) error {
	if err := f.Validate(); err != nil {
		return usageErr(err)
	}
	if f.snapshot != "" {
		if len(a.conn.Endpoints) > 0 || a.conn.DataDir != "" {
			return usageErr(errors.New("--snapshot reads a file: it cannot be combined with --endpoints or --data-dir"))
		}
		for _, name := range []string{"page-size", "page-bytes", "max-rps", "values", "exact-under"} {
			if cmd.Flags().Changed(name) {
				return usageErr(fmt.Errorf("--%s is for live inspection; a snapshot is read whole", name))
			}
		}
	}
	return nil
}

func (a *app) runInspect(cmd *cobra.Command, f *inspectFlags) error {
	if err := f.validate(cmd, a); err != nil {
		return err
	}
	if f.previous != "" {
		p, err := inspect.LoadPrevious(f.previous)
		if err != nil {
			return usageErr(err)
		}
		f.Previous = p
	}
	var r *inspect.Result
	if f.snapshot != "" {
		var err error
		if r, err = inspect.ReadSnapshot(f.snapshot, f.Options); err != nil {
			return usageErr(err)
		}
	} else {
		ctx := cmd.Context()
		t, err := a.connect(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		r, err = inspect.Live(ctx, inspect.LiveTarget{Client: t.Client, Endpoints: t.Info.Endpoints, HTTP: t.HTTP, MetricsURLs: t.MetricsURLs},
			f.LiveOptions)
		if err != nil {
			return err
		}
	}
	if err := report.Print(a.stdout, a.output, report.Inspect{Result: r}); err != nil {
		return err
	}
	if r.Worst() == finding.Fail {
		return withCode(ExitFail, nil)
	}
	return nil
}
