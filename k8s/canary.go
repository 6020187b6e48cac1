package k8s

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"
)

// CanaryPort is the canary's HTTP port (serve.DefaultListen's).
const CanaryPort = 9379

// Canary describes what runs etcdperf serve in a cluster: a Deployment of one
// pod, a Service in front of its /metrics, a ServiceMonitor that has the
// Prometheus Operator scrape it, and a PrometheusRule with its alerts.
type Canary struct {
	Name      string
	Namespace string
	Image     string
	// Args are serve's flags (--endpoints among them); the manifest adds
	// --every, --listen, --results-dir, --instance (the Deployment's name, so a
	// new pod is the same canary) and, with TLSSecret, the TLS files.
	Args      []string
	Every     time.Duration
	TLSSecret string
	CPU       string
	Memory    string
	// P99 is the probe latency alert's threshold.
	P99 time.Duration
	// Cluster is the cluster label of the canary's series (serve's
	// --cluster-name) that the rules select; "" is Name.
	Cluster string
	// Runbooks is the page the runbook_url annotations point into; "" is
	// DefaultRunbooks.
	Runbooks string
	// MinFor shortens the warnings' for: below MixinFor (tests only).
	MinFor time.Duration
	// WebConfigSecret is a Secret holding serve's web config (WebConfigKey)
	// and the files it names (tls.crt, tls.key, and ca.crt, the CA Prometheus
	// checks the canary's certificate with): mounted read-only at webDir and
	// passed as --web.config.file; the probes and the ServiceMonitor then use
	// https. A Secret, not a ConfigMap: it holds the server's private key.
	WebConfigSecret string
	// RuleLabels are added to the ServiceMonitor and the PrometheusRule, for the
	// operator's serviceMonitorSelector and ruleSelector (e.g. release=prometheus).
	RuleLabels map[string]string
}

// flags the canary manifest sets itself.
var canaryOwnFlags = []string{"every", "listen", "results-dir", "run-file", "probes", "instance", "cluster-name", "web.config.file", "config.file"}

// WebConfigKey is the web config's key in WebConfigSecret; exporter-toolkit
// reads the files it names relative to it, so "cert_file: tls.crt" is the
// Secret's tls.crt.
const WebConfigKey = "web-config.yml"

// webDir is where WebConfigSecret is mounted.
const webDir = "/etc/etcdperf/web"

// Validate checks the canary before writing it.
func (c Canary) Validate() error {
	switch {
	case !dns1123.MatchString(c.Name) || len(c.Name) > 50:
		return fmt.Errorf("--name %q: want lower-case letters, digits and '-', at most 50 characters", c.Name)
	case c.Namespace != "" && (!dns1123.MatchString(c.Namespace) || len(c.Namespace) > 63):
		return fmt.Errorf("--namespace %q is not a valid namespace name", c.Namespace)
	case c.Image == "":
		return errors.New("--image must not be empty")
	case c.Every < time.Second || c.Every%time.Second != 0:
		return fmt.Errorf("--every %s: want whole seconds, at least 1s", c.Every)
	case strings.ContainsAny(c.Cluster, "\"\\\n"):
		return fmt.Errorf("--cluster-name %q: no quotes, backslashes or newlines (it goes into the rules' selectors)", c.Cluster)
	case c.P99 <= 0:
		return fmt.Errorf("--p99 %s: want a positive duration", c.P99)
	case c.TLSSecret != "" && !dns1123.MatchString(strings.ReplaceAll(c.TLSSecret, ".", "-")):
		return fmt.Errorf("--tls-secret %q is not a valid Secret name", c.TLSSecret)
	case c.WebConfigSecret != "" && !dns1123.MatchString(strings.ReplaceAll(c.WebConfigSecret, ".", "-")):
		return fmt.Errorf("--web-config-secret %q is not a valid Secret name", c.WebConfigSecret)
	case !quantity.MatchString(c.CPU) || strings.Trim(c.CPU, "0.m") == "":
		return fmt.Errorf("--cpu %q: want a positive quantity, e.g. 500m", c.CPU)
	case !quantity.MatchString(c.Memory) || strings.Trim(c.Memory, "0.kMGTi") == "":
		return fmt.Errorf("--memory %q: want a positive quantity, e.g. 256Mi", c.Memory)
	}
	if len(c.Args) > 0 && c.Args[0] == "serve" {
		return errors.New("give serve's flags after --, without the word serve")
	}
	if err := checkPodArgs(c.Args, canaryOwnFlags, c.TLSSecret != "", "the pod would probe"); err != nil {
		return err
	}
	for k, v := range c.RuleLabels {
		if k == "" || strings.ContainsAny(k+v, " \n\"") {
			return fmt.Errorf("--rule-labels %s=%s: want key=value", k, v)
		}
	}
	return nil
}

// ServeArgs are the container's arguments: etcdperf serve with the manifest's
// flags and the user's.
func (c Canary) ServeArgs() []string {
	args := []string{"serve",
		"--every=" + c.Every.String(),
		fmt.Sprintf("--listen=:%d", CanaryPort),
		"--results-dir=" + resultsDir,
		"--instance=" + c.Name,
		"--cluster-name=" + c.cluster(),
	}
	args = append(args, c.Args...)
	if c.TLSSecret != "" {
		args = append(args, "--cacert="+tlsDir+"/ca.crt", "--cert="+tlsDir+"/tls.crt", "--key="+tlsDir+"/tls.key")
	}
	if c.WebConfigSecret != "" {
		args = append(args, "--web.config.file="+webDir+"/"+WebConfigKey)
	}
	return args
}

// CanaryManifest returns the YAML of the Deployment, the Service, the
// ServiceMonitor and the PrometheusRule.
func CanaryManifest(c Canary) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	ns := ""
	if c.Namespace != "" {
		ns = " -n " + c.Namespace
	}
	fmt.Fprintf(&b, "# etcdperf canary: one pod runs `etcdperf %s`.\n", strings.Join(c.ServeArgs(), " "))
	fmt.Fprintf(&b, "#   kubectl%s apply -f <this file>\n", ns)
	fmt.Fprintf(&b, "# The ServiceMonitor and PrometheusRule need the Prometheus Operator's CRDs (monitoring.coreos.com/v1).\n")
	fmt.Fprintf(&b, "# Status page: kubectl%s port-forward svc/%s %d:%d, then http://127.0.0.1:%d/\n", ns, c.Name, CanaryPort, CanaryPort, CanaryPort)
	docs := []any{c.deployment(), c.service(), c.serviceMonitor(), c.prometheusRule()}
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		if err := encodeYAML(&b, d); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// CanaryRulesFile is the PrometheusRule's groups as a Prometheus rule file
// (for promtool, or a Prometheus without the operator).
func CanaryRulesFile(c Canary) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err := encodeYAML(&b, ruleSpec{Groups: c.ruleGroups()})
	return b.Bytes(), err
}

func encodeYAML(b *bytes.Buffer, v any) error {
	enc := yaml.NewEncoder(b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("k8s manifest: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("k8s manifest: %w", err)
	}
	return nil
}

func (c Canary) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "etcdperf", "app.kubernetes.io/component": "canary", "etcdperf.io/canary": c.Name}
}

func (c Canary) labelsWith(extra map[string]string) map[string]string {
	l := c.labels()
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func (c Canary) deployment() deployment {
	r := map[string]string{"cpu": c.CPU, "memory": c.Memory}
	// /healthz answers once the HTTP server is up and while the scheduler ticks,
	// whatever the cluster does: a cluster that is down is a series, never a
	// restart. Startup allows a minute to come up; readiness takes the pod out
	// of the Service only while it does not answer.
	// With a web config the server speaks TLS only; the kubelet's https
	// probe does not verify the certificate, and presents no credentials.
	get := httpGet{Path: "/healthz", Port: "metrics", Scheme: c.scheme()}
	health := &httpProbe{HTTPGet: get, PeriodSeconds: 30, TimeoutSeconds: 5, FailureThreshold: 3}
	ready := &httpProbe{HTTPGet: get, PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 3}
	startup := &httpProbe{HTTPGet: get, PeriodSeconds: 2, TimeoutSeconds: 2, FailureThreshold: 30}
	ctr := canaryContainer{
		container: container{
			Name: "serve", Image: c.Image, Command: []string{"etcdperf"}, Args: c.ServeArgs(),
			Resources:       &resources{Requests: r, Limits: r},
			VolumeMounts:    []volumeMount{{Name: "results", MountPath: resultsDir}, {Name: "scratch", MountPath: scratchDir}},
			SecurityContext: restricted(),
		},
		Ports:          []containerPort{{Name: "metrics", ContainerPort: CanaryPort, Protocol: "TCP"}},
		LivenessProbe:  health,
		ReadinessProbe: ready,
		StartupProbe:   startup,
	}
	// Bounded: serve keeps --keep run files (24 by default, each well under a MiB).
	vols := []canaryVolume{
		{Name: "results", EmptyDir: &emptyDir{SizeLimit: "256Mi"}},
		{Name: "scratch", EmptyDir: &emptyDir{SizeLimit: "64Mi"}},
	}
	if c.TLSSecret != "" {
		ctr.VolumeMounts = append(ctr.VolumeMounts, volumeMount{Name: "tls", MountPath: tlsDir, ReadOnly: true})
		vols = append(vols, canaryVolume{Name: "tls", Secret: &secretSource{SecretName: c.TLSSecret}})
	}
	if c.WebConfigSecret != "" {
		ctr.VolumeMounts = append(ctr.VolumeMounts, volumeMount{Name: "web", MountPath: webDir, ReadOnly: true})
		vols = append(vols, canaryVolume{Name: "web", Secret: &secretSource{SecretName: c.WebConfigSecret}})
	}
	return deployment{
		APIVersion: "apps/v1", Kind: "Deployment",
		Metadata: meta{Name: c.Name, Namespace: c.Namespace, Labels: c.labels()},
		Spec: deploymentSpec{
			// One pod, replaced by stopping it first: two pods of one canary would
			// write its one key at once.
			Replicas: 1, Strategy: strategy{Type: "Recreate"},
			Selector: labelSelector{MatchLabels: map[string]string{"etcdperf.io/canary": c.Name}},
			Template: canaryPodTemplate{
				Metadata: meta{Labels: c.labels()},
				Spec: canaryPodSpec{
					SecurityContext: podSecurity(),
					// The canary talks to etcd, never to the Kubernetes API.
					AutomountServiceAccountToken: false,
					// SIGTERM stops the probe in progress and revokes the canary's lease (its one key).
					TerminationGracePeriodSeconds: 45,
					Containers:                    []canaryContainer{ctr},
					Volumes:                       vols,
				},
			},
		},
	}
}

func (c Canary) service() service {
	return service{
		APIVersion: "v1", Kind: "Service",
		Metadata: meta{Name: c.Name, Namespace: c.Namespace, Labels: c.labels()},
		Spec: serviceSpec{
			Selector: map[string]string{"etcdperf.io/canary": c.Name},
			Ports:    []servicePort{{Name: "metrics", Port: CanaryPort, TargetPort: "metrics", Protocol: "TCP"}},
		},
	}
}

// ScrapeInterval is the ServiceMonitor's: a third of the probe period (so each
// probe's series are scraped before the next replaces them), at most 30 s,
// Prometheus' usual interval, and at least 1 s.
func (c Canary) ScrapeInterval() time.Duration {
	return max(time.Second, min(30*time.Second, (c.Every/3).Truncate(time.Second)))
}

func (c Canary) serviceMonitor() serviceMonitor {
	return serviceMonitor{
		APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor",
		Metadata: meta{Name: c.Name, Namespace: c.Namespace, Labels: c.labelsWith(c.RuleLabels)},
		Spec: serviceMonitorSpec{
			Selector:  labelSelector{MatchLabels: map[string]string{"etcdperf.io/canary": c.Name}},
			Endpoints: []smEndpoint{c.smEndpoint()},
		},
	}
}

// scheme is the canary's HTTP scheme as Kubernetes writes it.
func (c Canary) scheme() string {
	if c.WebConfigSecret != "" {
		return "HTTPS"
	}
	return "HTTP"
}

// smEndpoint is how Prometheus scrapes the canary: over https with a web
// config, checking the certificate against the Secret's ca.crt under the
// Service's DNS name.
func (c Canary) smEndpoint() smEndpoint {
	e := smEndpoint{Port: "metrics", Path: "/metrics", Interval: promDuration(c.ScrapeInterval())}
	if c.WebConfigSecret == "" {
		return e
	}
	e.Scheme = "https"
	e.TLSConfig = &smTLSConfig{CA: secretOrConfigMap{Secret: &secretKey{Name: c.WebConfigSecret, Key: "ca.crt"}},
		ServerName: c.Name + "." + cmp.Or(c.Namespace, "default") + ".svc"}
	return e
}

func (c Canary) prometheusRule() prometheusRule {
	return prometheusRule{
		APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule",
		Metadata: meta{Name: c.Name, Namespace: c.Namespace, Labels: c.labelsWith(c.RuleLabels)},
		Spec:     ruleSpec{Groups: c.ruleGroups()},
	}
}

// Alert names of the canary's rules; docs/canary.md has a runbook section
// for each, whose anchor is the name in lower case.
const (
	AlertCanaryDown    = "EtcdperfCanaryDown"
	AlertNoSuccess     = "EtcdperfNoSuccessfulProbe"
	AlertNoLeader      = "EtcdperfNoLeader"
	AlertDiskFail      = "EtcdperfDiskSlow"
	AlertClassFail     = "EtcdperfClassFail"
	AlertLatencyHigh   = "EtcdperfProbeLatencyHigh"
	AlertForeignKeys   = "EtcdperfForeignKeys"
	AlertCertExpiry    = "EtcdperfCertificateExpiry"
	AlertNeverCompacts = "EtcdperfClusterNeverCompacted"
	noSuccessTicks     = 3
	latencyWindowTicks = 10
)

// DefaultRunbooks is where the runbook_url annotations point: the canary's
// doc page, an anchor per alert.
const DefaultRunbooks = "https://github.com/etcdperf/etcdperf/blob/main/docs/canary.md"

// MixinFor is the etcd mixin's for: of its warnings on latency and disk
// (etcdHighFsyncDurations, etcdHighCommitDurations, etcdGRPCRequestsSlow: 10m;
// etcd-io/etcd contrib/mixin/alerts/alerts.libsonnet): a canary's alert on
// the same signals waits as long.
const MixinFor = 10 * time.Minute

// ruleGroups are the canary's alerts. Every rule selects this canary's job
// and cluster, so canaries at other periods or of other clusters are judged
// by their own rules; each waits (for:) in probe periods (ticks) and at least
// as long as the mixin's alert on the same signal. Severities (docs/canary.md):
// critical only where the mixin pages (no leader) or where the cluster served
// no probe at all for the mixin's 10 minutes; the verdict classes grade against
// the hardware guide's thresholds (WAL fsync p99 10 ms), far below the
// mixin's page (1 s), and stay warnings.
func (c Canary) ruleGroups() []ruleGroup {
	every := c.Every
	warnFor := promDuration(max(c.minFor(), 2*every))
	latWin := promDuration(max(5*time.Minute, latencyWindowTicks*every))
	p99 := strconv.FormatFloat(c.P99.Seconds(), 'g', -1, 64)
	sel := fmt.Sprintf(`job=%q,cluster=%q`, c.Name, c.cluster())
	by := "job, cluster, instance"
	mk := func(alert, severity, forDur, expr, summary string) rule {
		return rule{Alert: alert, Expr: expr, For: forDur, Labels: map[string]string{"severity": severity},
			Annotations: map[string]string{"summary": summary, "runbook_url": c.runbooks() + "#" + strings.ToLower(alert)}}
	}
	return []ruleGroup{{
		Name: c.Name,
		Rules: []rule{
			mk(AlertCanaryDown, "warning", promDuration(c.minFor()),
				fmt.Sprintf(`up{job=%q} == 0 or absent(etcdperf_build_info{%s})`, c.Name, sel),
				"the etcdperf canary {{ $labels.job }} is down or not scraped: nothing watches its cluster from a client's side"),
			mk(AlertNoSuccess, "critical", promDuration(max(c.minFor(), noSuccessTicks*every)),
				fmt.Sprintf(`etcdperf_probe_up{%s} == 0 unless on (%s) etcdperf_probe_reason_info{%s,reason="foreign_keys"} == 1`, sel, by, sel),
				"etcd cluster {{ $labels.cluster }}: the canary has had no successful probe for the whole for: window (etcdperf_probe_reason_info says why)"),
			mk(AlertNoLeader, "critical", "1m", fmt.Sprintf(`etcdperf_cluster_has_leader{%s} == 0`, sel),
				"etcd cluster {{ $labels.cluster }} has no leader (as the mixin's etcdNoLeader)"),
			mk(AlertDiskFail, "warning", warnFor, fmt.Sprintf(`etcdperf_verdict_class{%s,class="disk"} == 2`, sel),
				"etcd cluster {{ $labels.cluster }}: disk graded fail (WAL fsync or backend commit over the hardware guide's bounds)"),
			mk(AlertClassFail, "warning", warnFor, fmt.Sprintf(`etcdperf_verdict_class{%s,class!="disk"} == 2`, sel),
				"etcd cluster {{ $labels.cluster }}: {{ $labels.class }} graded fail"),
			mk(AlertLatencyHigh, "warning", warnFor,
				fmt.Sprintf("histogram_quantile(0.99, sum by (job, cluster, op, le) (rate(etcdperf_probe_latency_seconds_bucket{%s}[%s]))) > %s", sel, latWin, p99),
				fmt.Sprintf("etcd cluster {{ $labels.cluster }}: the canary's {{ $labels.op }} p99 over %s is above %s", latWin, c.P99)),
			mk(AlertForeignKeys, "warning", warnFor, fmt.Sprintf(`etcdperf_foreign_keys{%s} > 0`, sel),
				"etcd cluster {{ $labels.cluster }}: keys the canary did not write are in its directory; it sends no load"),
			mk(AlertCertExpiry, "warning", "1h", fmt.Sprintf(`etcdperf_tls_certificate_expiry_timestamp_seconds{%s} - time() < 7 * 86400`, sel),
				"etcd cluster {{ $labels.cluster }}: the canary's certificate {{ $labels.file }} expires within a week"),
			mk(AlertNeverCompacts, "warning", "1d",
				fmt.Sprintf(`changes(etcdperf_cluster_compact_revision{%s}[1d]) == 0 and delta(etcdperf_cluster_revision{%s}[1d]) > 0`, sel, sel),
				"etcd cluster {{ $labels.cluster }}: no compaction for a day while revisions grow; the database only grows"),
		},
	}}
}

// minFor is the shortest for: of the canary's warnings, MinFor or MixinFor.
func (c Canary) minFor() time.Duration {
	if c.MinFor > 0 {
		return c.MinFor
	}
	return MixinFor
}

// cluster is the cluster label the rules select, the serve flag --cluster-name.
func (c Canary) cluster() string { return cmp.Or(c.Cluster, c.Name) }

func (c Canary) runbooks() string { return cmp.Or(c.Runbooks, DefaultRunbooks) }

// promDuration writes d as Prometheus durations are written (1m30s, 45s).
func promDuration(d time.Duration) string {
	d = d.Truncate(time.Second)
	var b strings.Builder
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
		d -= m * time.Minute
	}
	if s := d / time.Second; s > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

// The subset of apps/v1, core/v1 and monitoring.coreos.com/v1 the canary writes.

type deployment struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   meta           `yaml:"metadata"`
	Spec       deploymentSpec `yaml:"spec"`
}

type deploymentSpec struct {
	Replicas int               `yaml:"replicas"`
	Strategy strategy          `yaml:"strategy"`
	Selector labelSelector     `yaml:"selector"`
	Template canaryPodTemplate `yaml:"template"`
}

type strategy struct {
	Type string `yaml:"type"`
}

type canaryPodTemplate struct {
	Metadata meta          `yaml:"metadata"`
	Spec     canaryPodSpec `yaml:"spec"`
}

type canaryPodSpec struct {
	SecurityContext               *podSecurityContext `yaml:"securityContext,omitempty"`
	AutomountServiceAccountToken  bool                `yaml:"automountServiceAccountToken"`
	TerminationGracePeriodSeconds int                 `yaml:"terminationGracePeriodSeconds"`
	Containers                    []canaryContainer   `yaml:"containers"`
	Volumes                       []canaryVolume      `yaml:"volumes,omitempty"`
}

type canaryContainer struct {
	container      `yaml:",inline"`
	Ports          []containerPort `yaml:"ports,omitempty"`
	LivenessProbe  *httpProbe      `yaml:"livenessProbe,omitempty"`
	ReadinessProbe *httpProbe      `yaml:"readinessProbe,omitempty"`
	StartupProbe   *httpProbe      `yaml:"startupProbe,omitempty"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type httpProbe struct {
	HTTPGet          httpGet `yaml:"httpGet"`
	PeriodSeconds    int     `yaml:"periodSeconds"`
	TimeoutSeconds   int     `yaml:"timeoutSeconds"`
	FailureThreshold int     `yaml:"failureThreshold"`
}

type httpGet struct {
	Path   string `yaml:"path"`
	Port   string `yaml:"port"`
	Scheme string `yaml:"scheme"`
}

type canaryVolume struct {
	Name     string        `yaml:"name"`
	EmptyDir *emptyDir     `yaml:"emptyDir,omitempty"`
	Secret   *secretSource `yaml:"secret,omitempty"`
}

type emptyDir struct {
	SizeLimit string `yaml:"sizeLimit,omitempty"`
}

type service struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   meta        `yaml:"metadata"`
	Spec       serviceSpec `yaml:"spec"`
}

type serviceSpec struct {
	Selector map[string]string `yaml:"selector"`
	Ports    []servicePort     `yaml:"ports"`
}

type servicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
	Protocol   string `yaml:"protocol"`
}

type serviceMonitor struct {
	APIVersion string             `yaml:"apiVersion"`
	Kind       string             `yaml:"kind"`
	Metadata   meta               `yaml:"metadata"`
	Spec       serviceMonitorSpec `yaml:"spec"`
}

type serviceMonitorSpec struct {
	Selector  labelSelector `yaml:"selector"`
	Endpoints []smEndpoint  `yaml:"endpoints"`
}

type smEndpoint struct {
	Port      string       `yaml:"port"`
	Path      string       `yaml:"path"`
	Interval  string       `yaml:"interval"`
	Scheme    string       `yaml:"scheme,omitempty"`
	TLSConfig *smTLSConfig `yaml:"tlsConfig,omitempty"`
}

type smTLSConfig struct {
	CA         secretOrConfigMap `yaml:"ca"`
	ServerName string            `yaml:"serverName"`
}

type secretOrConfigMap struct {
	Secret *secretKey `yaml:"secret,omitempty"`
}

type secretKey struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

type prometheusRule struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   meta     `yaml:"metadata"`
	Spec       ruleSpec `yaml:"spec"`
}

type ruleSpec struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name  string `yaml:"name"`
	Rules []rule `yaml:"rules"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// CanaryOutput is the output of k8s canary: the manifest (Simple prints it
// alone, to pipe into kubectl apply) and the objects and alerts it creates.
type CanaryOutput struct {
	Manifest string   `json:"manifest"`
	Rules    string   `json:"rules"` // the PrometheusRule's groups as a rule file
	Name     string   `json:"name"`
	EveryS   float64  `json:"every_s"`
	Alerts   []string `json:"alerts"`
	objects  []string
}

// NewCanaryOutput writes c's manifest and rule file.
func NewCanaryOutput(c Canary) (CanaryOutput, error) {
	m, err := CanaryManifest(c)
	if err != nil {
		return CanaryOutput{}, err
	}
	r, err := CanaryRulesFile(c)
	if err != nil {
		return CanaryOutput{}, err
	}
	o := CanaryOutput{Manifest: string(m), Rules: string(r), Name: c.Name, EveryS: c.Every.Seconds(),
		objects: []string{"Deployment", "Service", "ServiceMonitor", "PrometheusRule"}}
	for _, g := range c.ruleGroups() {
		for _, r := range g.Rules {
			o.Alerts = append(o.Alerts, r.Alert)
		}
	}
	return o, nil
}

// Simple writes the manifest.
func (o CanaryOutput) Simple(w io.Writer) error {
	_, err := io.WriteString(w, o.Manifest)
	return err
}

// Table writes one row per object, the alerts on the PrometheusRule's.
func (o CanaryOutput) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tDETAIL")
	for _, k := range o.objects {
		detail := "-"
		switch k {
		case "Deployment":
			detail = fmt.Sprintf("1 pod, probes every %s", time.Duration(o.EveryS*float64(time.Second)))
		case "PrometheusRule":
			detail = strings.Join(o.Alerts, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k, o.Name, detail)
	}
	return tw.Flush()
}
