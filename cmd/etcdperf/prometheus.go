package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/results"
)

// promFlags are analyze's flags for reading the members' metrics from Prometheus
// instead of the scrapes in a run file.
type promFlags struct {
	url, selector string
	containerSel  string
	httpConfig    string
	from, to      time.Time
	stdin         io.Reader // the run file when it is named -
}

func (p *promFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.url, "prometheus", "", "read the members' metrics from this Prometheus server (http://host:9090) over --from..--to")
	fs.StringVar(&p.httpConfig, "prometheus-http-config", "", "Prometheus HTTP client config `FILE` as promtool's --http.config.file: basic_auth, authorization (credentials_file), tls_config, proxy_url")
	fs.StringVar(&p.selector, "selector", "", `label matchers of the members' series in Prometheus, e.g. 'job="etcd"'`)
	fs.StringVar(&p.containerSel, "container-selector", "", `label matchers of the cAdvisor series of the members' containers, e.g. 'pod=~"etcd-.*"' (default: the container named etcd on each member's host)`)
	fs.Var((*bench.TimeValue)(&p.from), "from", "start of the window, RFC 3339 or unix seconds (default: the run file's start)")
	fs.Var((*bench.TimeValue)(&p.to), "to", "end of the window, RFC 3339 or unix seconds (default: the run file's end, else now)")
}

// set reports whether the metrics come from Prometheus.
func (p *promFlags) set() bool { return p.url != "" }

// analyzePrometheus grades the run file args[0] (if given) with its scrapes
// replaced by the samples Prometheus stored over the window, or, without a run
// file, the members' metrics alone over --from..--to.
func analyzePrometheus(ctx context.Context, p *promFlags, args []string, opts analyze.Options) (analyze.Result, error) {
	run, err := p.run(ctx, args)
	if err != nil {
		return analyze.Result{}, err
	}
	return analyze.Run(run, opts)
}

// run is the run to analyze (args[0], if given), its scrapes read from Prometheus.
func (p *promFlags) run(ctx context.Context, args []string) (*results.Run, error) {
	var run *results.Run
	if len(args) == 1 {
		r, err := results.Open(args[0], p.stdin)
		if err != nil {
			return nil, err
		}
		run = r
	}
	prom := &analyze.Prometheus{URL: p.url, Selector: p.selector, ContainerSelector: p.containerSel}
	if p.httpConfig != "" {
		cfg, err := analyze.LoadHTTPConfig(p.httpConfig)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--prometheus-http-config: %w", err))
		}
		prom.HTTPConfig = cfg
	}
	run, err := prom.PrometheusRun(ctx, run, p.from, p.to, toolInfo())
	if errors.Is(err, analyze.ErrWindow) {
		err = usageErr(err)
	}
	return run, err
}
