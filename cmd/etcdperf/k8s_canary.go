package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/k8s"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
)

func newK8sCanaryCmd(a *app) *cobra.Command {
	c := k8s.Canary{}
	var ruleLabels []string
	cmd := &cobra.Command{
		Use:   "canary [flags] -- SERVE-FLAGS...",
		Short: "Print a Deployment running etcdperf serve, its Service, ServiceMonitor and PrometheusRule",
		Long:  k8s.CanaryUsage,
		Example: `  etcdperf k8s canary --every 1m --tls-secret etcd-client -- \
    --endpoints=https://etcd-0.etcd:2379,https://etcd-1.etcd:2379 | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 0 || len(args) == 0 {
				return usageErr(errors.New("give serve's flags after --, e.g. -- --endpoints=https://etcd:2379"))
			}
			c.Args = args
			if c.P99 == 0 {
				c.P99 = profiles.DefaultP99
			}
			c.RuleLabels = map[string]string{}
			for _, kv := range ruleLabels {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageErr(fmt.Errorf("--rule-label %q: want key=value", kv))
				}
				c.RuleLabels[k] = v
			}
			out, err := k8s.NewCanaryOutput(c)
			if err != nil {
				return usageErr(err)
			}
			return report.Print(a.stdout, a.output, out)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&c.Every, "every", time.Minute, "period of the probes; the alerts count in periods")
	f.StringVar(&c.Image, "image", defaultImage(), "etcdperf image of the pod (default: what make image builds)")
	f.StringVar(&c.CPU, "cpu", "500m", "CPU the pod requests and is limited to (a Kubernetes quantity)")
	f.StringVar(&c.Memory, "memory", "256Mi", "memory the pod requests and is limited to (a Kubernetes quantity)")
	f.StringVar(&c.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	f.StringVar(&c.Name, "name", "etcdperf-canary", "name of the Deployment, Service, ServiceMonitor and PrometheusRule")
	f.StringVar(&c.Cluster, "cluster-name", "", "cluster label of the canary's series that its alerts select (default: --name)")
	f.StringVar(&c.TLSSecret, "tls-secret", "", "Secret with the client's ca.crt, tls.crt and tls.key")
	f.StringVar(&c.WebConfigSecret, "web-config-secret", "", "Secret with serve's web-config.yml (as --web.config.file) and the files it names (tls.crt, tls.key, ca.crt): the probes and the ServiceMonitor use https")
	f.DurationVar(&c.P99, "p99", 0, "probe p99 response time the latency alert fires above (default 100ms, etcd's 'apply request took too long')")
	f.StringSliceVar(&ruleLabels, "rule-label", nil, "key=value label for the ServiceMonitor and PrometheusRule (the operator's selectors, e.g. release=prometheus); repeatable")
	return cmd
}
