package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/bundle"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
	"github.com/etcdperf/etcdperf/serve"
)

type bundleFlags struct {
	out      string
	interval time.Duration
	reads    int
	keys     string
	maxKeys  int
	dataDirs []string
	rates    bundle.Rates
	probe    bool
}

func newBundleCmd(a *app) *cobra.Command {
	bf := &bundleFlags{}
	cmd := &cobra.Command{
		Use:   "bundle --endpoints ... [-o FILE.tar.gz]",
		Short: "Gather an incident's evidence (status, reads, two /metrics scrapes, host facts) into one archive, with its verdict; read-only",
		Long:  bundle.Usage,
		Example: `  etcdperf bundle --endpoints 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379 -o incident.tar.gz
  etcdperf bundle --endpoints https://10.0.0.1:2379 --cacert ca.pem --interval 60s --keys
  etcdperf report incident.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runBundle(cmd, bf) },
	}
	f := cmd.Flags()
	f.StringVarP(&bf.out, "output", "o", "", "archive to write (default: etcdperf-bundle-TIME.tar.gz in the current folder)")
	f.DurationVar(&bf.interval, "interval", 30*time.Second, "time between the two /metrics scrapes of every member")
	f.IntVar(&bf.reads, "reads", 30, "linearizable and serializable reads timed on each member (each kind)")
	f.StringVar(&bf.keys, "keys", bundle.KeysNone, "include key names grouped by prefix: hashed (the default of a bare --keys) or plain; never values")
	f.Lookup("keys").NoOptDefVal = bundle.KeysHashed
	f.IntVar(&bf.maxKeys, "max-keys", 100000, "read at most this many key names for --keys")
	f.Float64Var(&bf.rates.DiskMBps, "disk-mbps", 0, fmt.Sprintf("the disk's copy rate for the repair cost, MB/s (default %d, assumed)", inspect.DefaultDiskMBps))
	f.Float64Var(&bf.rates.NetMBps, "net-mbps", 0, fmt.Sprintf("network throughput to a new member, MB/s (default %d = 1 GbE, assumed)", inspect.DefaultNetMBps))
	f.BoolVar(&bf.probe, "probe", false, "also run a short check with serve's tiny load (10 req/s for 5 s, its own keys under "+bundleProbePrefix+", deleted after) and keep its run file as probe.json")
	// bundle never starts an embedded etcd: here --data-dir names stopped members' data dirs.
	f.StringArrayVar(&bf.dataDirs, "data-dir", nil, "offline: a stopped member's data dir (the folder holding member/), read-only; repeat for each member")
	return cmd
}

func (a *app) runBundle(cmd *cobra.Command, bf *bundleFlags) error {
	if bf.keys != bundle.KeysNone && !slices.Contains(bundle.KeysModes, bf.keys) {
		return usageErr(fmt.Errorf("--keys %q: must be one of %s", bf.keys, strings.Join(bundle.KeysModes, ", ")))
	}
	out := bf.out
	if out == "" {
		out = "etcdperf-bundle-" + time.Now().UTC().Format("20060102T150405Z") + ".tar.gz"
	}
	if len(bf.dataDirs) > 0 {
		return a.runOfflineBundle(cmd, bf, out)
	}
	ctx := cmd.Context()
	t, err := conn.ConnectAny(ctx, &a.conn.Config, a.stdin, a.stderr)
	if errors.Is(err, conn.ErrNoEndpoints) {
		// An embedded etcd started for the bundle would be a fresh, empty one:
		// no evidence of anything the operator is looking at.
		return usageErr(errors.New("bundle gathers evidence of a running cluster: give its --endpoints (an embedded etcd would hold nothing to report), or --data-dir of stopped members"))
	}
	if err != nil {
		return err
	}
	defer t.Close()
	opts := bundle.Options{Interval: bf.interval, Reads: bf.reads, Keys: bf.keys, MaxKeys: bf.maxKeys, Timeout: a.conn.CommandTimeout, Rates: bf.rates,
		Tool: toolInfo(), Flags: cli.FlagsOf(cmd.Flags()), Log: a.stderr}
	if bf.probe {
		opts.Probe = func(ctx context.Context) (*results.Run, error) { return a.bundleProbe(ctx, cmd) }
	}
	b, err := bundle.Live(ctx, bundle.Target{Client: t.Client, Endpoints: t.Info.Endpoints, HTTP: t.HTTP, TLS: t.TLS, MetricsURLs: t.MetricsURLs}, opts)
	if err != nil {
		return err
	}
	if err := bundle.Write(out, b); err != nil {
		return err
	}
	if err := report.Print(a.stdout, a.output, report.NewBundle(b, out)); err != nil {
		return err
	}
	return verdictExit(b.Run.Diagnosis.Verdict.Status)
}

// runOfflineBundle bundles stopped members' data dirs.
func (a *app) runOfflineBundle(cmd *cobra.Command, bf *bundleFlags, out string) error {
	if len(a.conn.Endpoints) > 0 || a.conn.DiscoverySrv != "" {
		return usageErr(errors.New("--data-dir reads stopped members' data dirs: it cannot be combined with --endpoints or --discovery-srv"))
	}
	for _, name := range []string{"interval", "reads", "keys", "max-keys", "probe"} {
		if cmd.Flags().Changed(name) {
			return usageErr(fmt.Errorf("--%s is for a live cluster; --data-dir reads data dirs", name))
		}
	}
	b, err := bundle.OfflineBundle(bf.dataDirs, bf.rates, toolInfo(), cli.FlagsOf(cmd.Flags()))
	if err != nil {
		return usageErr(err)
	}
	if err := bundle.Write(out, b); err != nil {
		return err
	}
	if err := report.Print(a.stdout, a.output, report.NewBundle(b, out)); err != nil {
		return err
	}
	return verdictExit(b.Run.Diagnosis.Verdict.Status)
}

// bundleProbePrefix is where --probe's check writes its keys, apart from check's own.
const bundleProbePrefix = "/etcdperf/bundle-probe/"

// bundleProbe is check with serve's tiny load: its run, with check's verdict and
// section, as check would write it. It connects as check does, so a cluster
// with a member down fails it (the bundle says so in a note).
func (a *app) bundleProbe(ctx context.Context, cmd *cobra.Command) (*results.Run, error) {
	p, err := serve.TinyProfile()
	if err != nil {
		return nil, err
	}
	t, clis, release, err := a.openLoad(ctx, max(p.Connections, 1))
	if err != nil {
		return nil, err
	}
	defer release()
	lr, err := a.runProfile(ctx, cmd, "check", t, clis, p, bundleProbePrefix, false)
	if err != nil {
		return nil, err
	}
	if lr.Err != nil && len(lr.Run.Ops) == 0 {
		return nil, lr.Err
	}
	limit, src := check.P99Limit(0, p)
	verdict, criteria := check.Default(lr.Run, lr.Analysis, limit, src)
	compat, err := check.Compat(lr.Run)
	if err != nil {
		return nil, err
	}
	lr.Run.Diagnosis = lr.Analysis.Diagnosis()
	lr.Run.Diagnosis.Verdict = &verdict
	res := check.Result{Verdict: verdict, Criteria: criteria, Compat: compat, ExitFollows: "default", Profile: p.Summary(),
		P99LimitMs: float64(limit) / float64(time.Millisecond), P99Source: src}
	return lr.Run, lr.Run.SetSection(res)
}
