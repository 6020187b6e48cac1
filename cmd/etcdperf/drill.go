package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/drill"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// drillFlags are the options both drills share; flagRules check their ranges.
type drillFlags struct {
	yes                           bool
	load                          drill.LoadConfig
	prefix, report                string
	before, after                 time.Duration
	snapshotCount, catchupEntries uint64
}

func newDrillCmd(a *app) *cobra.Command {
	df := &drillFlags{}
	cmd := &cobra.Command{Use: "drill", Short: "Membership drills under load: replace a member, rolling restart", Long: drill.Usage}
	f := cmd.PersistentFlags()
	f.BoolVar(&df.yes, "yes-change-membership", false, "allow the drill to change the membership of the cluster at --endpoints")
	f.Float64Var(&df.load.Rate, "rate", 200, "background load: puts per second (open loop); a --profile sets its own unless --rate is given")
	f.IntVar(&df.load.Workers, "clients", 10, "background load: concurrent clients")
	f.IntVar(&df.load.Conns, "conns", 1, "background load: gRPC connections")
	f.IntVar(&df.load.ValSize, "val-size", 256, "background load: value bytes of its puts")
	f.StringVar(&df.load.Profile, "profile", "", "background load: a named workload profile or a profile file instead of puts")
	f.StringVar(&df.prefix, "prefix", bench.DefaultPrefix, "key prefix for the load and the fill, deleted afterwards")
	f.BoolVar(&df.load.Force, "force", false, "run even when the load's or fill's prefix holds keys; they are deleted afterwards")
	f.DurationVar(&df.before, "before", 10*time.Second, "load before the first membership change")
	f.DurationVar(&df.after, "after", 10*time.Second, "load after the last membership change")
	f.StringVar(&df.report, "report", "", "also write the drill's JSON and a timeline plot with the phases shaded to this folder")
	// etcd snapshots every --snapshot-count entries and keeps --snapshot-catchup-entries
	// after it; a fresh cluster whose log still holds every entry would send a new member
	// the log instead of a snapshot, unlike a long-lived one.
	f.Uint64Var(&df.snapshotCount, "embedded-snapshot-count", 1000, "embedded cluster: etcd's --snapshot-count (etcd's default is 10000)")
	f.Uint64Var(&df.catchupEntries, "embedded-snapshot-catchup-entries", 500, "embedded cluster: etcd's --snapshot-catchup-entries (etcd's default is 5000)")
	cmd.AddCommand(newDrillReplaceCmd(a, df), newDrillRestartCmd(a, df))
	return cmd
}

// drillTarget connects for a drill: the user's cluster only with the explicit
// flag, else an embedded 3-member cluster whose log gets compacted; env reaches
// it, with progress on stderr.
func (a *app) drillTarget(cmd *cobra.Command, df *drillFlags) (*target, *drill.Env, map[string]string, error) {
	if len(a.conn.Endpoints) > 0 && !df.yes {
		return nil, nil, nil, usageErr(errors.New("a drill changes the membership of the cluster at --endpoints: pass --yes-change-membership to allow it"))
	}
	var settings map[string]string
	if len(a.conn.Endpoints) == 0 {
		if !cmd.Flags().Changed("embedded-members") {
			a.conn.EmbeddedMembers = drill.MinVoters
		}
		a.conn.EmbeddedArgs = []string{fmt.Sprintf("--snapshot-count=%d", df.snapshotCount), fmt.Sprintf("--snapshot-catchup-entries=%d", df.catchupEntries)}
		settings = map[string]string{"snapshot-count": fmt.Sprint(df.snapshotCount), "snapshot-catchup-entries": fmt.Sprint(df.catchupEntries)}
	}
	t, err := a.connect(cmd.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	env := &drill.Env{Client: t.Client, HTTP: t.HTTP, Timeout: a.conn.DialTimeout + 3*time.Second,
		Progress: func(format string, args ...any) { fmt.Fprintf(a.stderr, format+"\n", args...) }}
	return t, env, settings, nil
}

// startLoad starts the background load on eps (puts at --rate or a profile)
// into env, until the drill stops it; the returned func releases its clients.
func (a *app) startLoad(cmd *cobra.Command, df *drillFlags, t *target, env *drill.Env, eps []string) (func(), error) {
	tlsCfg, err := a.conn.TLSConfig()
	if err != nil {
		return nil, err
	}
	cfg := a.conn.ClientConfig(eps, tlsCfg, t.Client.Username, t.Client.Password)
	lc := df.load
	lc.Dial = func() (*clientv3.Client, error) { return clientv3.New(cfg) }
	transport := conn.TransportGRPC // what the loops use unless a direct connection opens
	lc.DialDirect = func() (drill.DirectConn, error) {
		cc, used, err := conn.DialLoad(cmd.Context(), a.conn.Transport, cfg)
		if cc == nil {
			return nil, err
		}
		transport = used
		return cc, err
	}
	lc.RateSet, lc.Prefix = cmd.Flags().Changed("rate"), df.prefix+"drill-load/"
	lc.NewRun = func() *results.Run {
		run := a.newRun(cmd, strings.TrimPrefix(cmd.CommandPath(), "etcdperf "), t)
		run.Client.Transport = transport
		return run
	}
	load, closeLoad, err := drill.NewLoad(lc)
	if errors.Is(err, drill.ErrLoadConfig) {
		return nil, usageErr(err)
	}
	env.Load = load
	return closeLoad, err
}

// drillDone writes the drill's run file and prints its report, writes --report,
// and maps the outcome to the exit code: refused or failed to run 2, interrupted
// 130, a cluster left wrong 1.
func (a *app) drillDone(df *drillFlags, title string, out report.Output, run *results.Run, ps []drill.Phase, runFile *string, outcome drill.Outcome, err error) error {
	var werr error
	if run != nil {
		*runFile, werr = a.writeRun(run)
	}
	if perr := report.Print(a.stdout, a.output, out); perr != nil {
		return perr
	}
	if werr == nil && df.report != "" {
		werr = report.WriteDrill(df.report, out, run, report.DrillSpans(ps), title)
	}
	switch outcome {
	case drill.Interrupted:
		return fmt.Errorf("interrupted: %w", context.Canceled)
	case drill.Refused:
		return withCode(ExitError, err)
	case drill.Failed:
		return err
	case drill.Changed:
		return withCode(ExitFail, errors.New("the cluster after the drill is not as it was (see verify)"))
	}
	return werr
}

func newDrillReplaceCmd(a *app, df *drillFlags) *cobra.Command {
	var (
		rc            drill.ReplaceConfig
		fill          units.ByteSize
		fillValue     = units.ByteSize(drill.DefaultFillValueBytes)
		shape, member string
		newMember     string
		cmds          drill.Commands
	)
	cmd := &cobra.Command{
		Use:   "replace-member",
		Short: "Replace a follower by a fresh member (a learner, or --as-voter) under load, phase by phase",
		Long:  drill.ReplaceUsage,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !cmd.Flags().Changed("fill") && len(a.conn.Endpoints) == 0 && shape == "" {
				fill = 100 << 20
			}
			spec, err := drill.FillFor(df.prefix+"drill-fill/", int64(fill), int(fillValue), shape)
			if err != nil {
				return usageErr(err)
			}
			if len(a.conn.Endpoints) > 0 && df.yes {
				if cmds.New, err = drill.ParseCandidate(newMember); err != nil || cmds.StartCmd == "" {
					return usageErr(errors.New("on your cluster replace-member needs --new-member NAME=PEER_URL,CLIENT_URL and --start-cmd"))
				}
				rc.Members = &cmds
			}
			t, env, settings, err := a.drillTarget(cmd, df)
			if err != nil {
				return err
			}
			defer t.Close()
			if t.Cluster != nil {
				rc.Members = &drill.Embedded{Cluster: t.Cluster}
			}
			if rc.Plan, err = drill.PlanReplace(ctx, env, member, rc.AsVoter); err != nil {
				return withCode(ExitError, err)
			}
			if err := env.WriteFill(ctx, t.Client, spec, df.load.Force); err != nil {
				return err
			}
			if t.Cluster == nil {
				defer env.DeleteFill(t.Client, spec)
			}
			closeLoad, err := a.startLoad(cmd, df, t, env, rc.Plan.LoadEndpoints())
			if err != nil {
				return err
			}
			defer closeLoad()
			rc.Env, rc.Before, rc.After, rc.Settings = env, df.before, df.after, settings
			rep, err := drill.ReplaceMember(ctx, rc)
			if rep == nil {
				return err
			}
			return a.drillDone(df, "drill replace-member ("+rep.Mode+")", (*report.ReplaceDrill)(rep), rep.Load, rep.Phases, &rep.RunFile,
				drill.Judge(err, rep.Interrupted, rep.Verify.OK(len(rc.Plan.Survey.Voters()))), err)
		},
	}
	f := cmd.Flags()
	f.Var(&fill, "fill", "data to write before the drill (default 100MiB on the embedded cluster, none on yours)")
	f.Var(&fillValue, "fill-value-size", "value size of the --fill keys")
	f.StringVar(&shape, "shape", "", "reproduce the data of an 'inspect -w json' output (prefixes, key and value sizes, history); --fill scales it")
	f.BoolVar(&rc.AsVoter, "as-voter", false, "add the fresh member as a voter at once, without the learner step")
	f.StringVar(&member, "member", "", "name of the follower to replace (default: a follower)")
	f.Float64Var(&rc.DiskMBps, "disk-mbps", 0, "new member's disk throughput for inspect's estimate (default inspect's)")
	f.Float64Var(&rc.NetMBps, "net-mbps", 0, "network throughput to the new member for inspect's estimate (default inspect's)")
	f.DurationVar(&rc.CatchUpTimeout, "catch-up-timeout", 3*time.Minute, "how long the new member may take to catch up")
	f.StringVar(&newMember, "new-member", "", "your cluster: the fresh member as NAME=PEER_URL,CLIENT_URL")
	f.StringVar(&cmds.StartCmd, "start-cmd", "", "your cluster: command that starts the fresh member (etcd's ETCD_* variables set)")
	f.StringVar(&cmds.RetireCmd, "retire-cmd", "", "your cluster: command run for the removed member, %s is its name")
	return cmd
}

func newDrillRestartCmd(a *app, df *drillFlags) *cobra.Command {
	var (
		rc      drill.RestartConfig
		cmds    drill.Commands
		members []string
	)
	cmd := &cobra.Command{
		Use:   "rolling-restart",
		Short: "Restart each member in turn under load and measure each restart",
		Long:  drill.RestartUsage,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if len(a.conn.Endpoints) > 0 && cmds.RestartCmd == "" {
				return usageErr(errors.New("on your cluster rolling-restart needs --restart-cmd (e.g. 'systemctl restart etcd@%s')"))
			}
			t, env, _, err := a.drillTarget(cmd, df)
			if err != nil {
				return err
			}
			defer t.Close()
			rc.Restarter = &cmds
			if t.Cluster != nil {
				rc.Restarter = &drill.Embedded{Cluster: t.Cluster}
			}
			if rc.Plan, err = drill.PlanRestart(ctx, env, members); err != nil {
				return withCode(ExitError, err)
			}
			closeLoad, err := a.startLoad(cmd, df, t, env, t.Info.Endpoints)
			if err != nil {
				return err
			}
			defer closeLoad()
			rc.Env, rc.Before, rc.After = env, df.before, df.after
			rep, err := drill.RollingRestart(ctx, rc)
			if rep == nil {
				return err
			}
			return a.drillDone(df, "drill rolling-restart", (*report.RestartDrill)(rep), rep.Load, rep.Phases, &rep.RunFile,
				drill.Judge(err, rep.Interrupted, rep.Verify.OK(len(rc.Plan.Survey.Voters()))), err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cmds.RestartCmd, "restart-cmd", "", "your cluster: command that restarts a member, %s is its name")
	f.StringSliceVar(&members, "members", nil, "members to restart, in this order (default: all, followers first, the leader last)")
	f.DurationVar(&rc.Settle, "settle", 5*time.Second, "load between a member's return and the next restart")
	f.DurationVar(&rc.Timeout, "restart-timeout", time.Minute, "how long a member may take to answer again")
	return cmd
}
