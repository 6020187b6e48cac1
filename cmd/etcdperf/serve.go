package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
	"github.com/etcdperf/etcdperf/serve"
)

// defaultServePrefix keeps the canary's keys apart from check's and bench's.
const defaultServePrefix = "/etcdperf/serve/"

type serveFlags struct {
	every, maxBackoff time.Duration
	load, profile     string
	listen, prefix    string
	instance, cluster string
	webConfig         string
	configFile        string
	diskDir           string
	keep, probes      int
	p99               time.Duration
}

func newServeCmd(a *app) *cobra.Command {
	sf := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Probe a cluster on a schedule and export the verdict as Prometheus metrics (a canary)",
		Long:  serve.Usage,
		Example: `  etcdperf serve --endpoints 10.0.0.1:2379 --every 1m
  etcdperf serve --endpoints https://etcd:2379 --cacert ca.crt --load s --every 5m --listen :9379`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runServe(cmd, sf) },
	}
	f := cmd.Flags()
	f.DurationVar(&sf.every, "every", time.Minute, "period of the probes (start to start)")
	f.DurationVar(&sf.maxBackoff, "max-backoff", 0, "longest wait between probes while they fail, doubling from --every (default 8 × --every)")
	f.StringVar(&sf.load, "load", serve.LoadTiny, "probe load: tiny (10 req/s for 5 s), or etcdctl check perf's s, m, l, xl")
	f.StringVar(&sf.profile, "profile", "", "profile name or YAML file of the probe's load instead of --load (its duration must fit in half of --every)")
	f.StringVar(&sf.listen, "listen", serve.DefaultListen, "address of /metrics, /healthz and the status page (:9379 for every interface)")
	f.StringVar(&sf.prefix, "prefix", defaultServePrefix, "key prefix of the canaries: each writes one key under <prefix><instance>/, bound to a lease, and sends no load while others' keys are there")
	f.StringVar(&sf.webConfig, "web.config.file", "", "exporter-toolkit web config (TLS, client certificates, basic auth) for every path, as node_exporter's")
	f.StringVar(&sf.configFile, "config.file", "", "modules of /probe?target=<endpoints>&module=<name> (YAML, as blackbox_exporter's): probe the clusters Prometheus names instead of --endpoints; reread on SIGHUP or POST /-/reload")
	f.StringVar(&sf.cluster, "cluster-name", "", "cluster label of every etcdperf_ series, which the alert rules select (k8s canary sets it)")
	f.StringVar(&sf.instance, "instance", "", "name of this canary under --prefix, the same across its restarts (default: the host name)")
	f.StringVar(&sf.diskDir, "disk-dir", "", "a folder on a member's data disk on this host for the light fsync probe (default: the embedded etcd's data dir; none for --endpoints)")
	f.IntVar(&sf.keep, "keep", 24, "run files kept in --results-dir (the oldest of serve's are removed)")
	f.IntVar(&sf.probes, "probes", 0, "stop after this many probes (0: run until SIGTERM or Ctrl-C)")
	f.DurationVar(&sf.p99, "p99", 0, "p99 response-time threshold of the verdict (default: the profile's SLO, else 100ms)")
	return cmd
}

func (a *app) runServe(cmd *cobra.Command, sf *serveFlags) error {
	load := sf.load
	if !cmd.Flags().Changed("load") && sf.profile != "" {
		load = ""
	}
	p, err := serve.LoadProfile(load, sf.profile)
	if err != nil {
		return usageErr(err)
	}
	sched := serve.Schedule{Every: sf.every, MaxBackoff: sf.maxBackoff, Probes: sf.probes}
	if sf.instance == "" {
		if sf.instance, err = os.Hostname(); err != nil {
			return usageErr(fmt.Errorf("--instance: no host name to default to: %w", err))
		}
	}
	if sf.configFile != "" {
		return a.runServeTargets(cmd, sf)
	}
	prober := &serve.Prober{Profile: p, ID: serve.Identity{Prefix: sf.prefix, Instance: sf.instance},
		LeaseTTL: 3 * sched.Next(1<<10), CommandTimeout: a.conn.CommandTimeout, DialTimeout: a.conn.DialTimeout,
		Keep: &serve.Keeper{Dir: a.resultsDir, N: sf.keep}}
	prober.P99, prober.P99Source = check.P99Limit(sf.p99, p)
	if err := prober.Validate(sf.every); err != nil {
		return usageErr(err)
	}
	if strings.ContainsAny(sf.cluster, "\"\\\n") {
		// k8s canary's rules select it in a quoted matcher.
		return usageErr(fmt.Errorf("--cluster-name %q: no quotes, backslashes or newlines", sf.cluster))
	}
	if err := web.Validate(sf.webConfig); err != nil {
		return usageErr(fmt.Errorf("--web.config.file %s: %w", sf.webConfig, err))
	}
	// The results dir is a flag like the others: refused before anything starts.
	if err := results.CheckWritable(a.resultsDir, ""); err != nil {
		return usageErr(err)
	}
	l, err := net.Listen("tcp", sf.listen)
	if err != nil {
		return usageErr(err)
	}
	defer l.Close()
	ctx := cmd.Context()
	prober.Connect = func(ctx context.Context) (*target, []*clientv3.Client, func(), error) {
		return a.openLoad(ctx, max(p.Connections, 1))
	}
	prober.TLSFiles = slices.DeleteFunc([]string{a.conn.CACert, a.conn.Cert, a.conn.Key}, func(f string) bool { return f == "" })
	prober.TLS, prober.Endpoints = a.conn.TLSConfig, a.conn.Endpoints
	prober.NewRun = func(t *target) *results.Run { return a.newRun(cmd, "serve", t) }
	prober.DiskDir = sf.diskDir
	endpoints := a.conn.Endpoints
	if len(endpoints) == 0 {
		// An embedded etcd starts here or never: it is no cluster to wait for.
		if err := prober.Open(ctx); err != nil {
			return err
		}
		endpoints = prober.Target.Info.Endpoints
	}
	// A cluster given by --endpoints is connected at the first probe and again
	// while it fails: unreachable, it is a series on /metrics, not an exit.
	bi := buildInfo()
	c := &serve.Canary{Schedule: sched, Exporter: serve.NewExporter(serve.BuildInfo{Version: bi.Version, Revision: bi.Commit, GoVersion: bi.Go}, sf.cluster),
		Page: &serve.Page{Target: strings.Join(endpoints, ",")}, WebConfigFile: sf.webConfig}
	c.Page.Restore(prober.Keep.History()) // the page's plot survives a restart
	start := serve.Startup{Listen: l.Addr().String(), Endpoints: endpoints, Embedded: len(a.conn.Endpoints) == 0, Profile: p.Name,
		RatePerS: p.Rate, DurationS: time.Duration(p.Duration + p.Warmup).Seconds(), EveryS: sf.every.Seconds(), Prefix: prober.ID.Dir(),
		DiskDir: prober.DiskDir, ResultsDir: a.resultsDir, Keep: sf.keep}
	if err := report.Print(a.stdout, a.output, start); err != nil {
		return err
	}
	err = c.Run(ctx, l, prober.Probe)
	// Revoking the lease deletes the canary's key, and only it.
	return errors.Join(err, prober.Close(context.WithoutCancel(ctx)))
}

// runServeTargets is serve --config.file: /probe?target=…&module=… probes the
// cluster Prometheus names, one probe a scrape, as blackbox_exporter does.
func (a *app) runServeTargets(cmd *cobra.Command, sf *serveFlags) error {
	if len(a.conn.Endpoints) > 0 {
		return usageErr(errors.New("--config.file takes its clusters from /probe?target=<endpoints>: give no --endpoints"))
	}
	def := serve.Identity{Prefix: sf.prefix, Instance: sf.instance}
	if err := def.Check(); err != nil {
		return usageErr(err)
	}
	cfg, err := serve.LoadConfig(sf.configFile, def)
	if err != nil {
		return usageErr(fmt.Errorf("--config.file %s: %w", sf.configFile, err))
	}
	if err := web.Validate(sf.webConfig); err != nil {
		return usageErr(fmt.Errorf("--web.config.file %s: %w", sf.webConfig, err))
	}
	l, err := net.Listen("tcp", sf.listen)
	if err != nil {
		return usageErr(err)
	}
	defer l.Close()
	bi := buildInfo()
	build := serve.BuildInfo{Version: bi.Version, Revision: bi.Commit, GoVersion: bi.Go}
	targets := &serve.Targets{ConfigFile: sf.configFile, Default: def, Base: a.conn.Config, Build: build,
		NewRun: func(t *target) *results.Run { return a.newRun(cmd, "serve", t) }}
	if err := targets.Reload(cmd.Context()); err != nil { // the file as checked above, unless it just changed
		return usageErr(err)
	}
	c := &serve.Canary{Exporter: serve.NewExporter(build, sf.cluster),
		Page: &serve.Page{Target: "/probe targets"}, WebConfigFile: sf.webConfig, Targets: targets}
	start := serve.Startup{Listen: l.Addr().String(), Modules: slices.Sorted(maps.Keys(cfg.Modules)), Prefix: def.Dir()}
	if err := report.Print(a.stdout, a.output, start); err != nil {
		return err
	}
	ctx := cmd.Context()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := targets.Reload(ctx); err != nil {
					fmt.Fprintf(a.stderr, "etcdperf serve: reload: %v (the config in force stays)\n", err)
				}
			}
		}
	}()
	err = c.Run(ctx, l, nil)
	// Revoking the leases deletes the canary's keys, and only them.
	return errors.Join(err, targets.Close(context.WithoutCancel(ctx)))
}
