package k8s

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

var testStart = time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)

func testJob() Job {
	return Job{
		Name: "etcdperf-run1", Namespace: "perf", Image: "example.com/etcdperf:1", Workers: 4,
		Args:    []string{"bench", "put", "--endpoints=https://etcd-0.etcd:2379", "--rate", "20000", "--duration", "60s"},
		StartAt: testStart, TLSSecret: "etcd-client", Results: ResultsStdout,
		CPU: "2", Memory: "1Gi", TTL: 24 * time.Hour,
	}
}

// decode splits the manifest into documents and decodes each into the official
// batch/v1 Job, strictly: a misspelt field in this package's structs fails here.
func decode(t *testing.T, manifest []byte) []batchv1.Job {
	t.Helper()
	var jobs []batchv1.Job
	for _, doc := range bytes.Split(manifest, []byte("\n---\n")) {
		var j batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &j); err != nil {
			t.Fatalf("not a batch/v1 Job: %v\n%s", err, doc)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

func TestManifestIsAnIndexedJob(t *testing.T) {
	out, err := Manifest(testJob())
	if err != nil {
		t.Fatal(err)
	}
	jobs := decode(t, out)
	if len(jobs) != 1 {
		t.Fatalf("%d documents, want 1 with stdout results", len(jobs))
	}
	j := jobs[0]
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Name != "etcdperf-run1" || j.Namespace != "perf" {
		t.Errorf("header: %s %s %s/%s", j.APIVersion, j.Kind, j.Namespace, j.Name)
	}
	for _, msg := range validation.IsDNS1123Subdomain(j.Name) {
		t.Errorf("job name: %s", msg)
	}
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != 4 || s.Parallelism == nil || *s.Parallelism != 4 {
		t.Errorf("completions %v parallelism %v, want 4 and 4", s.Completions, s.Parallelism)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v: a retried worker would start late", s.BackoffLimit)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "example.com/etcdperf:1" || !slices.Equal(c.Command, []string{"etcdperf", "k8s", "worker", "--results=stdout", "--"}) {
		t.Errorf("container: image %s command %q", c.Image, c.Command)
	}
	if s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished != 86400 {
		t.Errorf("ttlSecondsAfterFinished %v, want 86400", s.TTLSecondsAfterFinished)
	}
	// Guaranteed QoS: requests equal limits.
	if r := c.Resources; r.Requests.Cpu().String() != "2" || r.Requests.Memory().String() != "1Gi" ||
		!r.Limits.Cpu().Equal(*r.Requests.Cpu()) || !r.Limits.Memory().Equal(*r.Requests.Memory()) {
		t.Errorf("resources %+v", r)
	}
	want := []string{
		"bench", "put", "--endpoints=https://etcd-0.etcd:2379", "--rate", "20000", "--duration", "60s",
		"--workers=4", "--worker-index=$(JOB_COMPLETION_INDEX)", "--start-at=2027-01-15T08:00:00Z",
		"--run-file=/tmp/etcdperf-run.json",
		"--cacert=/etc/etcdperf/tls/ca.crt", "--cert=/etc/etcdperf/tls/tls.crt", "--key=/etc/etcdperf/tls/tls.key",
	}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args:\n got  %q\n want %q", c.Args, want)
	}
	// $(JOB_COMPLETION_INDEX) in args expands only from a variable the container declares.
	if len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil ||
		c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env: %+v", c.Env)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	if m := mounts["tls"]; m.MountPath != "/etc/etcdperf/tls" || !m.ReadOnly {
		t.Errorf("TLS mount %+v: want read-only at /etc/etcdperf/tls", m)
	}
	if m := mounts["scratch"]; m.MountPath != "/tmp" {
		t.Errorf("scratch mount %+v", m)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	if v := vols["tls"]; v.Secret == nil || v.Secret.SecretName != "etcd-client" {
		t.Errorf("TLS volume %+v", v)
	}
	if v := vols["scratch"]; v.EmptyDir == nil {
		t.Errorf("scratch volume %+v", v)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("securityContext %+v", sc)
	}
	// The anti-affinity selects the workers by the label their template carries.
	aa := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].PodAffinityTerm.LabelSelector.MatchLabels["etcdperf.io/job"] != s.Template.Labels["etcdperf.io/job"] {
		t.Errorf("anti-affinity %+v does not select the pods (labels %v)", aa, s.Template.Labels)
	}
	// The merge step, for stdout results, is the comment at the top.
	for _, line := range []string{"kubectl -n perf apply", "wait --for=condition=complete",
		"kubectl -n perf logs -l etcdperf.io/job=etcdperf-run1 --tail=-1 --max-log-requests=4 | etcdperf merge - -o etcdperf-run1.json", "within 24h0m0s"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("merge instructions lack %q", line)
		}
	}
}

func TestManifestPVCResults(t *testing.T) {
	j := testJob()
	j.Results, j.PVC, j.TLSSecret, j.Workers = ResultsPVC, "perf-results", "", 3
	out, err := Manifest(j)
	if err != nil {
		t.Fatal(err)
	}
	jobs := decode(t, out)
	if len(jobs) != 2 {
		t.Fatalf("%d documents, want the workers and the merge", len(jobs))
	}
	w, m := jobs[0], jobs[1]
	c := w.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--run-file=/results/etcdperf-run1/worker-$(JOB_COMPLETION_INDEX).json") {
		t.Errorf("worker args %q", c.Args)
	}
	if !slices.Equal(c.Command, []string{"etcdperf", "k8s", "worker", "--results=pvc", "--"}) {
		t.Errorf("worker command %q", c.Command)
	}
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--cacert") }) {
		t.Errorf("TLS flags without --tls-secret: %q", c.Args)
	}
	for _, jb := range jobs {
		found := false
		for _, v := range jb.Spec.Template.Spec.Volumes {
			found = found || (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "perf-results")
		}
		if !found {
			t.Errorf("%s does not mount the claim", jb.Name)
		}
	}
	if m.Name != "etcdperf-run1-merge" || m.Spec.Suspend == nil || !*m.Spec.Suspend || m.Spec.CompletionMode != nil {
		t.Errorf("merge job %s: suspend %v mode %v", m.Name, m.Spec.Suspend, m.Spec.CompletionMode)
	}
	mc := m.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"merge", "/results/etcdperf-run1/worker-0.json", "/results/etcdperf-run1/worker-1.json",
		"/results/etcdperf-run1/worker-2.json", "-o", "/results/etcdperf-run1/merged.json", "-w", "json"}
	if !slices.Equal(mc.Command, []string{"etcdperf"}) || !slices.Equal(mc.Args, wantArgs) {
		t.Errorf("merge: %q %q", mc.Command, mc.Args)
	}
}

func TestManifestRefusesBadJobs(t *testing.T) {
	cases := []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Workers = 0 }, "--workers must be at least 1"},
		{func(j *Job) { j.Args = nil }, "after --"},
		{func(j *Job) { j.Args = []string{"disk"} }, "bench <workload>"},
		{func(j *Job) { j.Args = []string{"bench", "put", "--rate", "10"} }, "--endpoints"},
		{func(j *Job) { j.Args = append(j.Args, "--worker-index=1") }, "--worker-index after --"},
		{func(j *Job) { j.Args = append(j.Args, "--start-at", "1800000000") }, "--start-at after --"},
		{func(j *Job) { j.Args = append(j.Args, "--cacert=/ca.pem") }, "conflicts with --tls-secret"},
		{func(j *Job) { j.Name = "Etcd_Perf" }, "--name"},
		{func(j *Job) { j.Results = "s3" }, "--results"},
		{func(j *Job) { j.Results, j.PVC = ResultsPVC, "" }, "--pvc"},
		{func(j *Job) { j.CPU = "0" }, "--cpu"},
		{func(j *Job) { j.CPU = "-1" }, "--cpu"},
		{func(j *Job) { j.CPU = "two" }, "--cpu"},
		{func(j *Job) { j.Memory = "0Mi" }, "--memory"},
		{func(j *Job) { j.Memory = "1 GB" }, "--memory"},
		{func(j *Job) { j.TTL = -time.Second }, "--ttl"},
	}
	for _, c := range cases {
		j := testJob()
		c.edit(&j)
		if _, err := Manifest(j); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
}
