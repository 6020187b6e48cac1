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
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// drillFlags are the options both drills share.
type drillFlags struct {
	yes            bool
	rate           float64
	clients, conns int
	valSize        int
	profile        string
	prefix         string
	force          bool
	before, after  time.Duration
	report         string
	snapshotCount  uint64
	catchupEntries uint64
}

const drillLong = `drill runs a membership drill under a steady background load and measures what it costs,
phase by phase: client p50/p99 and errors (per-second histograms of the load), leader changes
and heartbeat send failures (the members' /metrics at each phase boundary), the leader's peer
traffic.

With no --endpoints it runs on an embedded 3-member cluster (separate etcd processes in a temp
dir). On your cluster it runs only with --endpoints and --yes-change-membership, after checking
that the cluster is healthy, has at least 3 voting members, no learner, and keeps its quorum at
every step; it never removes the leader. Ctrl-C at any step leaves the original number of voting
members and says what it did to get there (a second Ctrl-C aborts at once).`

func newDrillCmd(a *app) *cobra.Command {
	df := &drillFlags{}
	cmd := &cobra.Command{Use: "drill", Short: "Membership drills under load: replace a member, rolling restart", Long: drillLong}
	f := cmd.PersistentFlags()
	f.BoolVar(&df.yes, "yes-change-membership", false, "allow the drill to change the membership of the cluster at --endpoints")
	f.Float64Var(&df.rate, "rate", 200, "background load: puts per second (open loop); a --profile sets its own unless --rate is given")
	f.IntVar(&df.clients, "clients", 10, "background load: concurrent clients")
	f.IntVar(&df.conns, "conns", 1, "background load: gRPC connections")
	f.IntVar(&df.valSize, "val-size", 256, "background load: value bytes of its puts")
	f.StringVar(&df.profile, "profile", "", "background load: a named workload profile or a profile file instead of puts")
	f.StringVar(&df.prefix, "prefix", bench.DefaultPrefix, "key prefix for the load and the fill, deleted afterwards")
	f.BoolVar(&df.force, "force", false, "run even when the load's or fill's prefix holds keys; they are deleted afterwards")
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
// flag, else an embedded 3-member cluster whose log gets compacted.
func (a *app) drillTarget(cmd *cobra.Command, df *drillFlags) (*target, map[string]string, error) {
	if len(a.conn.endpoints) > 0 && !df.yes {
		return nil, nil, usageErr(errors.New("a drill changes the membership of the cluster at --endpoints: pass --yes-change-membership to allow it"))
	}
	if df.rate < 0 || df.clients < 1 || df.conns < 1 || df.before < 0 || df.after < 0 {
		return nil, nil, usageErr(errors.New("--rate, --before and --after must not be negative; --clients and --conns at least 1"))
	}
	settings := map[string]string{}
	if len(a.conn.endpoints) == 0 {
		if !cmd.Flags().Changed("embedded-members") {
			a.conn.embeddedMembers = drill.MinVoters
		}
		a.conn.embeddedArgs = []string{fmt.Sprintf("--snapshot-count=%d", df.snapshotCount), fmt.Sprintf("--snapshot-catchup-entries=%d", df.catchupEntries)}
		settings["snapshot-count"] = fmt.Sprint(df.snapshotCount)
		settings["snapshot-catchup-entries"] = fmt.Sprint(df.catchupEntries)
	}
	t, err := a.connect(cmd.Context())
	return t, settings, err
}

// drillEnv is what the drill package needs from the connection.
func (a *app) drillEnv(t *target) *drill.Env {
	return &drill.Env{
		Client: t.Client, HTTP: t.HTTP, Timeout: a.conn.dialTimeout + 3*time.Second,
		Progress: func(format string, args ...any) { fmt.Fprintf(a.stderr, format+"\n", args...) },
	}
}

// drillLoad is the background load on eps: puts at --rate or a profile, until the
// drill stops it. closeLoad releases its clients.
func (a *app) drillLoad(cmd *cobra.Command, df *drillFlags, t *target, eps []string, command string) (drill.Load, func(), error) {
	tlsCfg, err := a.conn.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg := a.conn.clientConfig(eps, tlsCfg, t.Client.Username, t.Client.Password)
	load, closeLoad, err := drill.NewLoad(drill.LoadConfig{
		Dial:  func() (*clientv3.Client, error) { return clientv3.New(cfg) },
		Conns: df.conns, Workers: df.clients, Rate: df.rate, RateSet: cmd.Flags().Changed("rate"), ValSize: df.valSize,
		Profile: df.profile, Prefix: df.prefix + "drill-load/", Force: df.force,
		NewRun: func() *results.Run { return a.newRun(cmd, command, t) },
	})
	if errors.Is(err, drill.ErrLoadConfig) {
		err = usageErr(err)
	}
	return load, closeLoad, err
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
		werr = writeDrillReport(df.report, title, out, run, ps)
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

// replaceFlags are replace-member's own options.
type replaceFlags struct {
	fill, fillValue  byteSize
	shape            string
	asVoter          bool
	member           string
	diskMBps         float64
	netMBps          float64
	catchUpTimeout   time.Duration
	newMember        string
	startCmd         string
	retireCmd        string
	defaultFillBytes int64
}

func newDrillReplaceCmd(a *app, df *drillFlags) *cobra.Command {
	rf := &replaceFlags{fillValue: drill.DefaultFillValueBytes, defaultFillBytes: 100 << 20}
	cmd := &cobra.Command{
		Use:   "replace-member",
		Short: "Replace a follower by a fresh member (a learner, or --as-voter) under load, phase by phase",
		Long: `replace-member fills the cluster (--fill SIZE, or --shape with the JSON of 'inspect -w json'),
starts the background load, removes a follower, adds a fresh member as a learner, waits while the
leader sends it a snapshot of the db and then the log, promotes it once it has caught up (etcd
refuses before), and keeps the load running --after. Phases: before, remove, snapshot, catch-up,
after. The measured catch-up (start of the new member to its applied index reaching the leader's
commit index) is compared with inspect's recovery estimate for the leader's db size.

--as-voter adds the member straight as a voter (the old way), for comparison.

On your cluster (--endpoints, --yes-change-membership) the fresh member is started by --start-cmd
with ETCD_NAME, ETCD_INITIAL_CLUSTER, ETCD_INITIAL_CLUSTER_STATE=existing and
ETCD_INITIAL_ADVERTISE_PEER_URLS set (etcd reads them), named by --new-member; the removed member
stops itself, and --retire-cmd (with %s for its name) may then discard it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runReplace(cmd, df, rf) },
	}
	f := cmd.Flags()
	f.Var(&rf.fill, "fill", "data to write before the drill (default 100MiB on the embedded cluster, none on yours)")
	f.Var(&rf.fillValue, "fill-value-size", "value size of the --fill keys")
	f.StringVar(&rf.shape, "shape", "", "reproduce the data of an 'inspect -w json' output (prefixes, key and value sizes, history); --fill scales it")
	f.BoolVar(&rf.asVoter, "as-voter", false, "add the fresh member as a voter at once, without the learner step")
	f.StringVar(&rf.member, "member", "", "name of the follower to replace (default: a follower)")
	f.Float64Var(&rf.diskMBps, "disk-mbps", 0, "new member's disk throughput for inspect's estimate (default inspect's)")
	f.Float64Var(&rf.netMBps, "net-mbps", 0, "network throughput to the new member for inspect's estimate (default inspect's)")
	f.DurationVar(&rf.catchUpTimeout, "catch-up-timeout", 3*time.Minute, "how long the new member may take to catch up")
	f.StringVar(&rf.newMember, "new-member", "", "your cluster: the fresh member as NAME=PEER_URL,CLIENT_URL")
	f.StringVar(&rf.startCmd, "start-cmd", "", "your cluster: command that starts the fresh member (etcd's ETCD_* variables set)")
	f.StringVar(&rf.retireCmd, "retire-cmd", "", "your cluster: command run for the removed member, %s is its name")
	return cmd
}

// commands are the user's commands that start the fresh member on their cluster.
func (rf *replaceFlags) commands() (*drill.Commands, error) {
	name, urls, ok := strings.Cut(rf.newMember, "=")
	peer, client, ok2 := strings.Cut(urls, ",")
	if !ok || !ok2 || name == "" || peer == "" || client == "" || rf.startCmd == "" {
		return nil, usageErr(errors.New("on your cluster replace-member needs --new-member NAME=PEER_URL,CLIENT_URL and --start-cmd"))
	}
	return &drill.Commands{New: drill.Candidate{Name: name, PeerURL: peer, ClientURL: client}, StartCmd: rf.startCmd, RetireCmd: rf.retireCmd}, nil
}

func (a *app) runReplace(cmd *cobra.Command, df *drillFlags, rf *replaceFlags) error {
	ctx := cmd.Context()
	if rf.catchUpTimeout <= 0 {
		return usageErr(errors.New("--catch-up-timeout must be positive"))
	}
	fillBytes := int64(rf.fill)
	if !cmd.Flags().Changed("fill") && len(a.conn.endpoints) == 0 && rf.shape == "" {
		fillBytes = rf.defaultFillBytes
	}
	spec, err := drill.FillFor(df.prefix+"drill-fill/", fillBytes, int(rf.fillValue), rf.shape)
	if err != nil {
		return usageErr(err)
	}
	var ms drill.Members
	if len(a.conn.endpoints) > 0 && df.yes {
		if ms, err = rf.commands(); err != nil {
			return err
		}
	}
	t, settings, err := a.drillTarget(cmd, df)
	if err != nil {
		return err
	}
	defer t.Close()
	if t.Cluster != nil {
		ms = &drill.Embedded{Cluster: t.Cluster}
	}
	env := a.drillEnv(t)
	plan, err := drill.PlanReplace(ctx, env, rf.member, rf.asVoter)
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := env.WriteFill(ctx, t.Client, spec, df.force); err != nil {
		return err
	}
	if t.Cluster == nil {
		defer env.DeleteFill(t.Client, spec)
	}
	load, closeLoad, err := a.drillLoad(cmd, df, t, plan.LoadEndpoints(), "drill replace-member")
	if err != nil {
		return err
	}
	defer closeLoad()
	env.Load = load
	rep, err := drill.ReplaceMember(ctx, drill.ReplaceConfig{Env: env, Members: ms, Plan: plan, AsVoter: rf.asVoter,
		Before: df.before, After: df.after, CatchUpTimeout: rf.catchUpTimeout, DiskMBps: rf.diskMBps, NetMBps: rf.netMBps, Settings: settings})
	if rep == nil {
		return err
	}
	return a.drillDone(df, "drill replace-member ("+rep.Mode+")", (*report.ReplaceDrill)(rep), rep.Load, rep.Phases, &rep.RunFile, drill.Judge(err, rep.Interrupted, rep.Verify.OK(len(plan.Survey.Voters()))), err)
}

// writeDrillReport writes the drill's JSON and its timeline plot to dir, when named.
func writeDrillReport(dir, title string, rep any, run *results.Run, ps []drill.Phase) error {
	spans := make([]report.Span, len(ps))
	for i, p := range ps {
		spans[i] = report.Span{Name: strings.TrimSpace(p.Name + " " + p.Member), Start: p.Start, End: p.End}
	}
	return report.WriteDrill(dir, rep, run, spans, title)
}

// restartFlags are rolling-restart's own options.
type restartFlags struct {
	restartCmd string
	members    []string
	settle     time.Duration
	timeout    time.Duration
}

func newDrillRestartCmd(a *app, df *drillFlags) *cobra.Command {
	rf := &restartFlags{}
	cmd := &cobra.Command{
		Use:   "rolling-restart",
		Short: "Restart each member in turn under load and measure each restart",
		Long: `rolling-restart restarts each member in turn (followers first, the leader last, unless --members
orders them) under the background load, waiting until the member answers again and the cluster
is healthy before the next one. Per restart: how long the member did not answer, leader changes,
client p99 and errors.

On the embedded cluster a member is stopped with SIGTERM and started again from its data dir. On
your cluster (--endpoints, --yes-change-membership) --restart-cmd restarts it, %s being the
member's name, e.g. --restart-cmd 'systemctl restart etcd@%s'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runRestart(cmd, df, rf) },
	}
	f := cmd.Flags()
	f.StringVar(&rf.restartCmd, "restart-cmd", "", "your cluster: command that restarts a member, %s is its name")
	f.StringSliceVar(&rf.members, "members", nil, "members to restart, in this order (default: all, followers first, the leader last)")
	f.DurationVar(&rf.settle, "settle", 5*time.Second, "load between a member's return and the next restart")
	f.DurationVar(&rf.timeout, "restart-timeout", time.Minute, "how long a member may take to answer again")
	return cmd
}

func (a *app) runRestart(cmd *cobra.Command, df *drillFlags, rf *restartFlags) error {
	ctx := cmd.Context()
	if rf.settle < 0 || rf.timeout <= 0 {
		return usageErr(errors.New("--settle must not be negative and --restart-timeout must be positive"))
	}
	if len(a.conn.endpoints) > 0 && rf.restartCmd == "" {
		return usageErr(errors.New("on your cluster rolling-restart needs --restart-cmd (e.g. 'systemctl restart etcd@%s')"))
	}
	t, _, err := a.drillTarget(cmd, df)
	if err != nil {
		return err
	}
	defer t.Close()
	var rs drill.Restarter = &drill.Commands{RestartCmd: rf.restartCmd}
	if t.Cluster != nil {
		rs = &drill.Embedded{Cluster: t.Cluster}
	}
	env := a.drillEnv(t)
	plan, err := drill.PlanRestart(ctx, env, rf.members)
	if err != nil {
		return withCode(ExitError, err)
	}
	load, closeLoad, err := a.drillLoad(cmd, df, t, t.Info.Endpoints, "drill rolling-restart")
	if err != nil {
		return err
	}
	defer closeLoad()
	env.Load = load
	rep, err := drill.RollingRestart(ctx, drill.RestartConfig{Env: env, Restarter: rs, Plan: plan, Before: df.before, After: df.after, Settle: rf.settle, Timeout: rf.timeout})
	if rep == nil {
		return err
	}
	return a.drillDone(df, "drill rolling-restart", (*report.RestartDrill)(rep), rep.Load, rep.Phases, &rep.RunFile, drill.Judge(err, rep.Interrupted, rep.Verify.OK(len(plan.Survey.Voters()))), err)
}
