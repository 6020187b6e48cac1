package psa

import (
	"bytes"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/k8s"
)

func jobs(t *testing.T, j k8s.Job) []batchv1.Job {
	t.Helper()
	out, err := k8s.Manifest(j)
	if err != nil {
		t.Fatal(err)
	}
	var js []batchv1.Job
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var b batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &b); err != nil {
			t.Fatalf("not a batch/v1 Job: %v\n%s", err, doc)
		}
		js = append(js, b)
	}
	return js
}

// TestRestricted: every pod the manifests create passes the restricted profile
// of the newest policy version, with TLS and both kinds of results; and the
// evaluator is shown to refuse a pod that drops the seccomp profile.
func TestRestricted(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	base := k8s.Job{
		Name: "etcdperf-psa", Image: k8s.Repository + ":v1", Workers: 3,
		Args:    []string{"bench", "put", "--endpoints=https://etcd:2379", "--rate", "3000"},
		StartAt: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC), TLSSecret: "etcd-client",
		CPU: "2", Memory: "1Gi", TTL: 24 * time.Hour, Results: k8s.ResultsStdout,
	}
	for _, results := range []string{k8s.ResultsStdout, k8s.ResultsPVC} {
		j := base
		j.Results, j.PVC = results, "etcdperf-results"
		for _, b := range jobs(t, j) {
			agg := policy.AggregateCheckResults(eval.EvaluatePod(lv, &b.Spec.Template.ObjectMeta, &b.Spec.Template.Spec))
			if !agg.Allowed {
				t.Errorf("%s (results %s): restricted refuses it: %s: %s", b.Name, results, agg.ForbiddenReason(), agg.ForbiddenDetail())
			}
		}
	}
	b := jobs(t, base)[0]
	b.Spec.Template.Spec.SecurityContext.SeccompProfile = nil
	if agg := policy.AggregateCheckResults(eval.EvaluatePod(lv, &b.Spec.Template.ObjectMeta, &b.Spec.Template.Spec)); agg.Allowed {
		t.Error("a pod without a seccomp profile passed: the evaluator checks nothing")
	} else {
		t.Logf("without seccomp: %s", agg.ForbiddenReason())
	}
}

// TestCanaryRestricted: the canary's Deployment pod passes the restricted
// profile, with and without TLS and a web config Secret; without the seccomp profile it is refused.
func TestCanaryRestricted(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	base := k8s.Canary{Name: "etcdperf-canary", Image: k8s.Repository + ":v1", Args: []string{"--endpoints=https://etcd:2379"},
		Every: time.Minute, CPU: "500m", Memory: "256Mi", P99: 100 * time.Millisecond}
	deployment := func(c k8s.Canary) appsv1.Deployment {
		out, err := k8s.CanaryManifest(c)
		if err != nil {
			t.Fatal(err)
		}
		var d appsv1.Deployment
		if err := yaml.UnmarshalStrict(bytes.Split(out, []byte("\n---\n"))[0], &d); err != nil {
			t.Fatalf("not an apps/v1 Deployment: %v", err)
		}
		return d
	}
	for _, secret := range []string{"", "etcd-client"} {
		for _, web := range []string{"", "canary-web"} {
			c := base
			c.TLSSecret, c.WebConfigSecret = secret, web
			d := deployment(c)
			agg := policy.AggregateCheckResults(eval.EvaluatePod(lv, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec))
			if !agg.Allowed {
				t.Errorf("canary (tls secret %q, web config secret %q): restricted refuses it: %s: %s", secret, web, agg.ForbiddenReason(), agg.ForbiddenDetail())
			}
		}
	}
	d := deployment(base)
	d.Spec.Template.Spec.SecurityContext.SeccompProfile = nil
	if agg := policy.AggregateCheckResults(eval.EvaluatePod(lv, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec)); agg.Allowed {
		t.Error("a canary pod without a seccomp profile passed: the evaluator checks nothing")
	}
}
