package k8s

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func testCanary() Canary {
	return Canary{Name: "etcdperf-canary", Namespace: "etcd", Image: "example.com/etcdperf:1",
		Args: []string{"--endpoints=https://etcd-0.etcd:2379"}, Every: time.Minute, TLSSecret: "etcd-client",
		CPU: "500m", Memory: "256Mi", P99: 100 * time.Millisecond, RuleLabels: map[string]string{"release": "prometheus"}}
}

func canaryDocs(t *testing.T, c Canary) [][]byte {
	t.Helper()
	out, err := CanaryManifest(c)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(out, []byte("\n---\n"))
	if len(docs) != 4 {
		t.Fatalf("%d documents, want Deployment, Service, ServiceMonitor, PrometheusRule", len(docs))
	}
	return docs
}

// TestCanaryManifest decodes the Deployment and Service strictly into the
// official types (a misspelt field fails) and checks what serve relies on.
func TestCanaryManifest(t *testing.T) {
	docs := canaryDocs(t, testCanary())
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(docs[0], &d); err != nil {
		t.Fatalf("not an apps/v1 Deployment: %v\n%s", err, docs[0])
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %v strategy %q: two canaries must never probe one prefix at once", d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	want := []string{"serve", "--every=1m0s", "--listen=:9379", "--results-dir=/results", "--instance=" + testCanary().Name, "--cluster-name=" + testCanary().Name, "--endpoints=https://etcd-0.etcd:2379",
		"--cacert=/etc/etcdperf/tls/ca.crt", "--cert=/etc/etcdperf/tls/tls.crt", "--key=/etc/etcdperf/tls/tls.key"}
	if !slices.Equal(c.Command, []string{"etcdperf"}) || !slices.Equal(c.Args, want) {
		t.Errorf("command %q args %q", c.Command, c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != CanaryPort || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("ports %+v liveness %+v", c.Ports, c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/healthz" || c.StartupProbe == nil || c.StartupProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness %+v startup %+v", c.ReadinessProbe, c.StartupProbe)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want false: the canary never calls the API", pod.AutomountServiceAccountToken)
	}
	if !labelsMatch(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the pods %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 30 {
		t.Errorf("grace period %v: the probe's cleanup may take bench.CleanupTimeout (30 s)", pod.TerminationGracePeriodSeconds)
	}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
			t.Errorf("volume %s has no size limit", v.Name)
		}
	}
	var s corev1.Service
	if err := yaml.UnmarshalStrict(docs[1], &s); err != nil {
		t.Fatalf("not a v1 Service: %v\n%s", err, docs[1])
	}
	if !labelsMatch(s.Spec.Selector, d.Spec.Template.Labels) || s.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("service selector %v ports %+v", s.Spec.Selector, s.Spec.Ports)
	}
	// The operator's objects, read generically (their types are not a dependency).
	var sm, pr struct {
		APIVersion string `json:"apiVersion"`
		Kind       string
		Metadata   struct{ Labels map[string]string }
		Spec       struct {
			Selector  struct{ MatchLabels map[string]string } `json:"selector"`
			Endpoints []struct{ Port, Path, Interval string }
			Groups    []struct {
				Name  string
				Rules []struct {
					Alert, Expr, For string
					Annotations      map[string]string
				}
			}
		}
	}
	if err := yaml.Unmarshal(docs[2], &sm); err != nil || sm.Kind != "ServiceMonitor" || sm.APIVersion != "monitoring.coreos.com/v1" {
		t.Fatalf("ServiceMonitor: %v\n%s", err, docs[2])
	}
	if !labelsMatch(sm.Spec.Selector.MatchLabels, s.Labels) || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Interval != "20s" {
		t.Errorf("ServiceMonitor selects %v, endpoints %+v", sm.Spec.Selector.MatchLabels, sm.Spec.Endpoints)
	}
	if err := yaml.Unmarshal(docs[3], &pr); err != nil || pr.Kind != "PrometheusRule" {
		t.Fatalf("PrometheusRule: %v\n%s", err, docs[3])
	}
	var alerts []string
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
		}
	}
	if !slices.Equal(alerts, []string{AlertCanaryDown, AlertNoSuccess, AlertNoLeader, AlertDiskFail, AlertClassFail, AlertLatencyHigh,
		AlertForeignKeys, AlertCertExpiry, AlertNeverCompacts}) {
		t.Errorf("alerts %v", alerts)
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.For == "" || r.Annotations["runbook_url"] == "" || !strings.Contains(r.Expr, `job="etcdperf-canary"`) {
				t.Errorf("%s: for %q, runbook %q, expr %s: want a for:, a runbook and the canary's job", r.Alert, r.For, r.Annotations["runbook_url"], r.Expr)
			}
		}
	}
	for _, l := range []map[string]string{sm.Metadata.Labels, pr.Metadata.Labels} {
		if l["release"] != "prometheus" {
			t.Errorf("rule labels missing: %v", l)
		}
	}
	// The rule file promtool tests is the PrometheusRule's groups.
	rules, err := CanaryRulesFile(testCanary())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(docs[3], bytes.ReplaceAll(bytes.TrimSpace(rules), []byte("\n"), []byte("\n  "))) {
		t.Errorf("the PrometheusRule's spec is not the rule file:\n%s", rules)
	}
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

func TestCanaryRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Canary)
		want string
	}{
		{"no endpoints", func(c *Canary) { c.Args = nil }, "--endpoints"},
		{"the word serve", func(c *Canary) { c.Args = append([]string{"serve"}, c.Args...) }, "without the word serve"},
		{"own flag", func(c *Canary) { c.Args = append(c.Args, "--listen=:1") }, "--listen after --"},
		{"every in args", func(c *Canary) { c.Args = append(c.Args, "--every", "5m") }, "--every after --"},
		{"tls twice", func(c *Canary) { c.Args = append(c.Args, "--cacert=x") }, "conflicts with --tls-secret"},
		{"bad name", func(c *Canary) { c.Name = "Bad_Name" }, "--name"},
		{"subsecond every", func(c *Canary) { c.Every = 1500 * time.Millisecond }, "--every"},
		{"bad cpu", func(c *Canary) { c.CPU = "lots" }, "--cpu"},
		{"quoted cluster", func(c *Canary) { c.Cluster = `a"b` }, "--cluster-name"},
		{"bad label", func(c *Canary) { c.RuleLabels = map[string]string{"a b": "c"} }, "--rule-labels"},
		{"web config in args", func(c *Canary) { c.Args = append(c.Args, "--web.config.file=/w.yml") }, "--web.config.file after --"},
		{"bad web secret", func(c *Canary) { c.WebConfigSecret = "Bad_Name" }, "--web-config-secret"},
	} {
		cn := testCanary()
		c.edit(&cn)
		_, err := CanaryManifest(cn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestCanaryWebConfig: with --web-config-secret the pod mounts the Secret
// read-only, serve gets --web.config.file in it, the kubelet's probes and the
// ServiceMonitor speak https (the latter checking the Secret's ca.crt under
// the Service's name); without it all stays plain HTTP.
func TestCanaryWebConfig(t *testing.T) {
	for _, secret := range []string{"", "canary-web"} {
		cn := testCanary()
		cn.WebConfigSecret = secret
		docs := canaryDocs(t, cn)
		var d appsv1.Deployment
		if err := yaml.UnmarshalStrict(docs[0], &d); err != nil {
			t.Fatalf("not an apps/v1 Deployment: %v\n%s", err, docs[0])
		}
		pod := d.Spec.Template.Spec
		c := pod.Containers[0]
		flag := "--web.config.file=/etc/etcdperf/web/" + WebConfigKey
		wantScheme := corev1.URISchemeHTTP
		if secret != "" {
			wantScheme = corev1.URISchemeHTTPS
		}
		if slices.Contains(c.Args, flag) != (secret != "") {
			t.Errorf("secret %q: args %q", secret, c.Args)
		}
		for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
			if p.HTTPGet.Scheme != wantScheme {
				t.Errorf("secret %q: %s probe scheme %q, want %q", secret, name, p.HTTPGet.Scheme, wantScheme)
			}
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "web" && m.MountPath == "/etc/etcdperf/web" && m.ReadOnly
		})
		fromSecret := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.Name == "web" && v.Secret != nil && v.Secret.SecretName == secret
		})
		if mounted != (secret != "") || fromSecret != (secret != "") {
			t.Errorf("secret %q: mounted %v, volume from the Secret %v", secret, mounted, fromSecret)
		}
		var sm struct {
			Spec struct {
				Endpoints []struct {
					Scheme    string `json:"scheme"`
					TLSConfig *struct {
						CA struct {
							Secret struct{ Name, Key string } `json:"secret"`
						} `json:"ca"`
						ServerName string `json:"serverName"`
					} `json:"tlsConfig"`
				} `json:"endpoints"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(docs[2], &sm); err != nil || len(sm.Spec.Endpoints) != 1 {
			t.Fatalf("ServiceMonitor: %v\n%s", err, docs[2])
		}
		e := sm.Spec.Endpoints[0]
		switch {
		case secret == "" && (e.Scheme != "" || e.TLSConfig != nil):
			t.Errorf("no web config: ServiceMonitor scheme %q tlsConfig %+v", e.Scheme, e.TLSConfig)
		case secret != "" && (e.Scheme != "https" || e.TLSConfig == nil || e.TLSConfig.CA.Secret.Name != secret ||
			e.TLSConfig.CA.Secret.Key != "ca.crt" || e.TLSConfig.ServerName != "etcdperf-canary.etcd.svc"):
			t.Errorf("web config: ServiceMonitor scheme %q tlsConfig %+v\n%s", e.Scheme, e.TLSConfig, docs[2])
		}
	}
}

func TestPromDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{90 * time.Second: "1m30s", time.Minute: "1m", 2 * time.Hour: "2h", 0: "0s", 45 * time.Second: "45s"} {
		if got := promDuration(d); got != want {
			t.Errorf("promDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

// TestCanaryRulesPromtool runs promtool test rules (testdata/canary-rules-test.yaml)
// on the rule files the manifest ships for two canaries of one cluster, at
// --every 1m and 10m: each alert fires when it should and not before, and not
// on what it should ignore, such as the other canary.
func TestCanaryRulesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian: apt-get install -y prometheus; .ci/run installs it)")
	}
	dir := t.TempDir()
	fast := testCanary()
	fast.Cluster = "prod"
	slow := fast
	slow.Name, slow.Every = "etcdperf-canary-slow", 10*time.Minute
	rules, err := CanaryRulesFile(fast)
	if err != nil {
		t.Fatal(err)
	}
	slowRules, err := CanaryRulesFile(slow)
	if err != nil {
		t.Fatal(err)
	}
	test, err := os.ReadFile("testdata/canary-rules-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"canary-rules.yaml": rules, "canary-rules-slow.yaml": slowRules, "canary-rules-test.yaml": test} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "canary-rules.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "canary-rules-test.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
