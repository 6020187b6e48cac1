// Package k8s writes the Kubernetes manifests that run etcdperf from many machines:
// an Indexed Job whose pods are the workers of one load (each takes 1/N of the rate
// and starts at one wall-clock time), and the merge step that combines their run
// files. It writes YAML from a few plain structs that mirror the batch/v1 fields it
// uses, so the binary does not carry the Kubernetes API packages; the tests decode
// the output into the official types.
package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Where results go.
const (
	ResultsStdout = "stdout" // each pod prints its run file; collect with kubectl logs
	ResultsPVC    = "pvc"    // each pod writes its run file to a PersistentVolumeClaim
)

// Paths inside the pods.
const (
	tlsDir     = "/etc/etcdperf/tls"
	resultsDir = "/results"
	scratchDir = "/tmp"
)

// IndexEnv is the environment variable that holds a pod's completion index. The
// Job controller sets it too (Kubernetes ≥ 1.22); it is declared from the pod's
// annotation so that $(JOB_COMPLETION_INDEX) in args expands on any version.
const IndexEnv = "JOB_COMPLETION_INDEX"

// indexAnnotation is where the Job controller writes a pod's completion index.
const indexAnnotation = "batch.kubernetes.io/job-completion-index"

// Job describes the Indexed Job to write.
type Job struct {
	Name      string // Job name; the merge Job is Name-merge
	Namespace string // empty: the namespace kubectl applies to
	Image     string // an etcdperf image: etcdperf on its PATH (make image builds one)
	Workers   int
	// Args are the etcdperf arguments every worker runs: the bench or check
	// command and its flags, --endpoints included. Job adds the worker flags,
	// TLS files and the run file.
	Args      []string
	StartAt   time.Time
	TLSSecret string // Secret with ca.crt, tls.crt and tls.key; empty: no TLS flags
	Results   string // ResultsStdout or ResultsPVC
	PVC       string // claim name for ResultsPVC
	// CPU and Memory are each worker's requests and limits (equal: the Guaranteed
	// QoS class, last to be evicted, and whole cores under the static CPU manager
	// policy, so the generator is not throttled mid-run), in Kubernetes quantities.
	CPU, Memory string
	// TTL is how long the finished Jobs and their pods (whose logs hold the run
	// files with stdout results) stay before Kubernetes deletes them; 0 keeps them.
	TTL time.Duration
}

// The image make image builds (package k8s/image): its name, and its non-root
// user, whom the pods run as. UID is the one distroless calls nonroot.
const (
	Repository = "ghcr.io/etcdperf/etcdperf"
	UID        = 65532
)

// quantity is the Kubernetes resource quantity syntax (a decimal number with an
// optional SI or binary suffix) for the values this package writes.
var quantity = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?|\.[0-9]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)

// flags the manifest sets itself; given in Args they would conflict.
var ownFlags = []string{"workers", "worker-index", "start-at", "run-file", "results-dir"}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate checks the job before writing it.
func (j Job) Validate() error {
	// 63 minus "-merge" and the "-<index>-<suffix>" Kubernetes appends to pod names.
	const maxName = 40
	switch {
	case !dns1123.MatchString(j.Name) || len(j.Name) > maxName:
		return fmt.Errorf("--name %q: want lower-case letters, digits and '-', at most %d characters", j.Name, maxName)
	case j.Namespace != "" && (!dns1123.MatchString(j.Namespace) || len(j.Namespace) > 63):
		return fmt.Errorf("--namespace %q is not a valid namespace name", j.Namespace)
	case j.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", j.Workers)
	case j.Image == "":
		return errors.New("--image must not be empty")
	case j.Results != ResultsStdout && j.Results != ResultsPVC:
		return fmt.Errorf("--results %q: want %s or %s", j.Results, ResultsStdout, ResultsPVC)
	case j.Results == ResultsPVC && !dns1123.MatchString(j.PVC):
		return fmt.Errorf("--pvc %q is not a valid claim name", j.PVC)
	case j.TLSSecret != "" && !dns1123.MatchString(strings.ReplaceAll(j.TLSSecret, ".", "-")):
		return fmt.Errorf("--tls-secret %q is not a valid Secret name", j.TLSSecret)
	case !quantity.MatchString(j.CPU) || strings.Trim(j.CPU, "0.m") == "":
		return fmt.Errorf("--cpu %q: want a positive quantity, e.g. 2 or 1500m", j.CPU)
	case !quantity.MatchString(j.Memory) || strings.Trim(j.Memory, "0.kMGTi") == "":
		return fmt.Errorf("--memory %q: want a positive quantity, e.g. 1Gi or 512Mi", j.Memory)
	case j.TTL < 0:
		return fmt.Errorf("--ttl %s: want 0 (keep) or a positive duration", j.TTL)
	case j.StartAt.IsZero():
		return errors.New("no start time")
	}
	if len(j.Args) == 0 || (j.Args[0] != "bench" && j.Args[0] != "check") {
		return errors.New("give the worker's command after --: bench <workload> [flags] or check [flags]")
	}
	return checkPodArgs(j.Args, ownFlags, j.TLSSecret != "", "each pod would benchmark")
}

// hasFlag reports whether args set --name (as --name=v or --name v).
// checkPodArgs checks the flags given after -- for the pods: --endpoints is
// there (without it, what a pod would do goes to an embedded etcd of its own),
// none of the flags the manifest sets (own), and no TLS files where a Secret
// passes them.
func checkPodArgs(args, own []string, tlsSecret bool, what string) error {
	if !hasFlag(args, "endpoints") {
		return fmt.Errorf("give --endpoints after --: without it %s an embedded etcd of its own", what)
	}
	for _, f := range own {
		if hasFlag(args, f) {
			return fmt.Errorf("--%s after --: the manifest sets it", f)
		}
	}
	if tlsSecret {
		for _, f := range []string{"cacert", "cert", "key"} {
			if hasFlag(args, f) {
				return fmt.Errorf("--%s after -- conflicts with --tls-secret, which passes the Secret's files", f)
			}
		}
	}
	return nil
}

func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "--"+name || strings.HasPrefix(a, "--"+name+"=") })
}

// runFile is a worker's run file inside its pod.
func (j Job) runFile() string {
	if j.Results == ResultsPVC {
		return fmt.Sprintf("%s/%s/worker-$(%s).json", resultsDir, j.Name, IndexEnv)
	}
	return scratchDir + "/etcdperf-run.json"
}

// WorkerArgs are the etcdperf arguments of the worker pods, $(JOB_COMPLETION_INDEX)
// still to be expanded by the kubelet.
func (j Job) WorkerArgs() []string {
	args := slices.Clone(j.Args)
	args = append(args,
		"--workers="+strconv.Itoa(j.Workers),
		"--worker-index=$("+IndexEnv+")",
		"--start-at="+j.StartAt.UTC().Format(time.RFC3339Nano),
		"--run-file="+j.runFile(),
	)
	if j.TLSSecret != "" {
		args = append(args, "--cacert="+tlsDir+"/ca.crt", "--cert="+tlsDir+"/tls.crt", "--key="+tlsDir+"/tls.key")
	}
	return args
}

// WorkerCommand is the container's command: etcdperf's k8s worker, which runs
// the worker's args as a child and decides what the pod reports (see Worker). The
// image needs no shell.
func (j Job) WorkerCommand() []string {
	return []string{"etcdperf", "k8s", "worker", "--results=" + j.Results, "--"}
}

// Manifest returns the YAML: a comment saying how to run it and merge the results,
// the worker Job and, with PVC results, a suspended merge Job to resume afterwards.
func Manifest(j Job) ([]byte, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	j.header(&b)
	for i, d := range j.docs() {
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("k8s manifest: %w", err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("k8s manifest: %w", err)
		}
	}
	return b.Bytes(), nil
}

// docs are the manifest's documents: the worker Job and, with PVC results, the
// suspended merge Job.
func (j Job) docs() []job {
	docs := []job{j.workerJob()}
	if j.Results == ResultsPVC {
		docs = append(docs, j.mergeJob())
	}
	return docs
}

// header is the comment that says how to apply the manifest and merge the results.
func (j Job) header(b *bytes.Buffer) {
	ns := ""
	if j.Namespace != "" {
		ns = " -n " + j.Namespace
	}
	fmt.Fprintf(b, "# etcdperf: %d workers run `etcdperf %s`, each at 1/%d of its rate,\n", j.Workers, strings.Join(j.Args, " "), j.Workers)
	fmt.Fprintf(b, "# all starting at %s. Apply before then:\n", j.StartAt.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(b, "#   kubectl%s apply -f <this file>\n", ns)
	fmt.Fprintf(b, "# then wait for the workers:\n#   kubectl%s wait --for=condition=complete --timeout=1h job/%s\n", ns, j.Name)
	if j.Results == ResultsPVC {
		fmt.Fprintf(b, "# Each worker writes %s on the claim %s (ReadWriteMany when pods land on several nodes).\n", j.runFile(), j.PVC)
		fmt.Fprintf(b, "# Merge: resume the suspended Job %s-merge and read its summary:\n", j.Name)
		fmt.Fprintf(b, "#   kubectl%s patch job %s-merge --type=merge -p '{\"spec\":{\"suspend\":false}}'\n", ns, j.Name)
		fmt.Fprintf(b, "#   kubectl%s wait --for=condition=complete job/%s-merge && kubectl%s logs job/%s-merge\n", ns, j.Name, ns, j.Name)
		fmt.Fprintf(b, "# The merged run file is %s/%s/merged.json on the claim.\n", resultsDir, j.Name)
		return
	}
	b.WriteString("# Each worker prints its run file, and nothing else, as its log. Collect and merge them:\n")
	fmt.Fprintf(b, "#   kubectl%s logs -l etcdperf.io/job=%s --tail=-1 --max-log-requests=%d | etcdperf merge - -o %s.json\n",
		ns, j.Name, j.Workers, j.Name)
	if j.TTL > 0 {
		fmt.Fprintf(b, "# within %s of the end: then Kubernetes deletes the Job, its pods and their logs.\n", j.TTL)
	}
}

func (j Job) workerJob() job {
	labels := map[string]string{"app.kubernetes.io/name": "etcdperf", "etcdperf.io/job": j.Name}
	c := container{
		Name: "worker", Image: j.Image,
		Command:   j.WorkerCommand(),
		Args:      j.WorkerArgs(),
		Resources: j.resources(),
		Env: []envVar{{Name: IndexEnv, ValueFrom: &envSource{FieldRef: &fieldRef{
			FieldPath: "metadata.annotations['" + indexAnnotation + "']"}}}},
		VolumeMounts:    []volumeMount{{Name: "scratch", MountPath: scratchDir}},
		SecurityContext: restricted(),
	}
	vols := []volume{{Name: "scratch", EmptyDir: &struct{}{}}}
	if j.TLSSecret != "" {
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: "tls", MountPath: tlsDir, ReadOnly: true})
		vols = append(vols, volume{Name: "tls", Secret: &secretSource{SecretName: j.TLSSecret}})
	}
	if j.Results == ResultsPVC {
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: "results", MountPath: resultsDir})
		vols = append(vols, volume{Name: "results", PersistentVolumeClaim: &claimSource{ClaimName: j.PVC}})
	}
	return job{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: meta{Name: j.Name, Namespace: j.Namespace, Labels: labels},
		Spec: jobSpec{
			CompletionMode: "Indexed", Completions: ptr(j.Workers), Parallelism: ptr(j.Workers),
			TTLSecondsAfterFinished: j.ttl(),
			// A retried worker would start after --start-at: it fails instead, and
			// the Job with it.
			BackoffLimit: ptr(0),
			Template: podTemplate{
				Metadata: meta{Labels: labels},
				Spec: podSpec{
					RestartPolicy:   "Never",
					SecurityContext: podSecurity(),
					// Spread the workers over nodes: one machine's CPU is what they replace.
					Affinity: &affinity{PodAntiAffinity: &podAntiAffinity{Preferred: []weightedTerm{{
						Weight: 100,
						PodAffinityTerm: affinityTerm{
							LabelSelector: labelSelector{MatchLabels: map[string]string{"etcdperf.io/job": j.Name}},
							TopologyKey:   "kubernetes.io/hostname",
						},
					}}}},
					Containers: []container{c},
					Volumes:    vols,
				},
			},
		},
	}
}

// mergeJob merges the workers' run files on the claim; it is created suspended, to
// be resumed when the workers are done.
func (j Job) mergeJob() job {
	args := []string{"merge"}
	for i := range j.Workers {
		args = append(args, fmt.Sprintf("%s/%s/worker-%d.json", resultsDir, j.Name, i))
	}
	args = append(args, "-o", fmt.Sprintf("%s/%s/merged.json", resultsDir, j.Name), "-w", "json")
	labels := map[string]string{"app.kubernetes.io/name": "etcdperf", "etcdperf.io/job": j.Name + "-merge"}
	return job{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: meta{Name: j.Name + "-merge", Namespace: j.Namespace, Labels: labels},
		Spec: jobSpec{
			Suspend: ptr(true), Completions: ptr(1), Parallelism: ptr(1), BackoffLimit: ptr(0),
			TTLSecondsAfterFinished: j.ttl(),
			Template: podTemplate{
				Metadata: meta{Labels: labels},
				Spec: podSpec{
					RestartPolicy:   "Never",
					SecurityContext: podSecurity(),
					Containers: []container{{
						Name: "merge", Image: j.Image, Command: []string{"etcdperf"}, Args: args,
						Resources:       j.resources(),
						VolumeMounts:    []volumeMount{{Name: "results", MountPath: resultsDir}},
						SecurityContext: restricted(),
					}},
					Volumes: []volume{{Name: "results", PersistentVolumeClaim: &claimSource{ClaimName: j.PVC}}},
				},
			},
		},
	}
}

// restricted is a container security context Pod Security's restricted profile
// admits: no privilege escalation, no capabilities, not root, and a read-only
// root filesystem (the pods write only to their volumes).
func restricted() *securityContext {
	return &securityContext{
		AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true), RunAsNonRoot: ptr(true),
		Capabilities: &capabilities{Drop: []string{"ALL"}},
	}
}

// podSecurity runs the pods as the image's user with the runtime's default
// seccomp profile; fsGroup makes a results claim writable by that user.
func podSecurity() *podSecurityContext {
	return &podSecurityContext{
		RunAsNonRoot: ptr(true), RunAsUser: ptr(UID), RunAsGroup: ptr(UID), FSGroup: ptr(UID),
		SeccompProfile: &seccompProfile{Type: "RuntimeDefault"},
	}
}

func (j Job) resources() *resources {
	r := map[string]string{"cpu": j.CPU, "memory": j.Memory}
	return &resources{Requests: r, Limits: r}
}

func (j Job) ttl() *int {
	if j.TTL == 0 {
		return nil
	}
	return ptr(int(j.TTL.Round(time.Second).Seconds()))
}

func ptr[T any](v T) *T { return &v }

// The subset of batch/v1 and core/v1 this package writes, with the API's field names.

type job struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   meta    `yaml:"metadata"`
	Spec       jobSpec `yaml:"spec"`
}

type meta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type jobSpec struct {
	CompletionMode string `yaml:"completionMode,omitempty"`
	Completions    *int   `yaml:"completions,omitempty"`
	Parallelism    *int   `yaml:"parallelism,omitempty"`
	BackoffLimit   *int   `yaml:"backoffLimit,omitempty"`
	// TTLSecondsAfterFinished deletes the Job and its pods that long after it ends.
	TTLSecondsAfterFinished *int        `yaml:"ttlSecondsAfterFinished,omitempty"`
	Suspend                 *bool       `yaml:"suspend,omitempty"`
	Template                podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata meta    `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy   string              `yaml:"restartPolicy"`
	SecurityContext *podSecurityContext `yaml:"securityContext,omitempty"`
	Affinity        *affinity           `yaml:"affinity,omitempty"`
	Containers      []container         `yaml:"containers"`
	Volumes         []volume            `yaml:"volumes,omitempty"`
}

type affinity struct {
	PodAntiAffinity *podAntiAffinity `yaml:"podAntiAffinity,omitempty"`
}

type podAntiAffinity struct {
	Preferred []weightedTerm `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
}

type weightedTerm struct {
	Weight          int          `yaml:"weight"`
	PodAffinityTerm affinityTerm `yaml:"podAffinityTerm"`
}

type affinityTerm struct {
	LabelSelector labelSelector `yaml:"labelSelector"`
	TopologyKey   string        `yaml:"topologyKey"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type container struct {
	Name            string           `yaml:"name"`
	Image           string           `yaml:"image"`
	Command         []string         `yaml:"command,omitempty"`
	Args            []string         `yaml:"args,omitempty"`
	Env             []envVar         `yaml:"env,omitempty"`
	Resources       *resources       `yaml:"resources,omitempty"`
	VolumeMounts    []volumeMount    `yaml:"volumeMounts,omitempty"`
	SecurityContext *securityContext `yaml:"securityContext,omitempty"`
}

type envVar struct {
	Name      string     `yaml:"name"`
	ValueFrom *envSource `yaml:"valueFrom,omitempty"`
}

type envSource struct {
	FieldRef *fieldRef `yaml:"fieldRef,omitempty"`
}

type fieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type securityContext struct {
	AllowPrivilegeEscalation *bool         `yaml:"allowPrivilegeEscalation,omitempty"`
	ReadOnlyRootFilesystem   *bool         `yaml:"readOnlyRootFilesystem,omitempty"`
	RunAsNonRoot             *bool         `yaml:"runAsNonRoot,omitempty"`
	Capabilities             *capabilities `yaml:"capabilities,omitempty"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type podSecurityContext struct {
	RunAsNonRoot   *bool           `yaml:"runAsNonRoot,omitempty"`
	RunAsUser      *int            `yaml:"runAsUser,omitempty"`
	RunAsGroup     *int            `yaml:"runAsGroup,omitempty"`
	FSGroup        *int            `yaml:"fsGroup,omitempty"`
	SeccompProfile *seccompProfile `yaml:"seccompProfile,omitempty"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type resources struct {
	Requests map[string]string `yaml:"requests,omitempty"`
	Limits   map[string]string `yaml:"limits,omitempty"`
}

type volume struct {
	Name                  string        `yaml:"name"`
	EmptyDir              *struct{}     `yaml:"emptyDir,omitempty"`
	Secret                *secretSource `yaml:"secret,omitempty"`
	PersistentVolumeClaim *claimSource  `yaml:"persistentVolumeClaim,omitempty"`
}

type secretSource struct {
	SecretName string `yaml:"secretName"`
}

type claimSource struct {
	ClaimName string `yaml:"claimName"`
}
