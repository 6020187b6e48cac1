package k8s

// JobUsage is 'k8s job' help text: the Indexed Job it prints and how its pods run.
const JobUsage = `job prints a batch/v1 Job with completionMode Indexed: N pods, each running the
bench or check command given after -- as one worker of N (--workers N, its
completion index as --worker-index, one --start-at for all), so each drives 1/N of
the target rate and all start together. The comment at its top says how to apply
it, wait for it and merge the workers' run files with 'etcdperf merge'.

--endpoints must be among the arguments after --. --tls-secret mounts a Secret
(keys ca.crt, tls.crt, tls.key, as cert-manager writes them) read-only and passes
them as --cacert, --cert and --key. --results stdout makes each pod print its run
file as its log (collect with kubectl logs); --results pvc writes them to the
PersistentVolumeClaim --pvc and adds a suspended Job that merges them there.

The start time is --start-at, or --start-delay from now: apply the manifest before
then (a worker that starts late fails, and the Job with it).

The pods pass Pod Security's restricted profile: they run as uid 65532 with the
runtime's seccomp profile, no capabilities and a read-only root filesystem. Each
requests and is limited to --cpu and --memory (Guaranteed QoS: the generator is
not throttled below what it asked for); --ttl after they finish Kubernetes deletes
the Jobs and pods (and with them the logs that hold stdout results).

The default --image is the one 'make image' builds from this binary's commit
(bin/etcdperf-image.tar, an OCI archive): push it to a registry the cluster pulls
from (skopeo copy oci-archive:bin/etcdperf-image.tar docker://REGISTRY/etcdperf:TAG)
or load it into a kind cluster (kind load image-archive bin/etcdperf-image.tar),
and pass --image when its name differs. Any image with etcdperf on its PATH works.`

// CanaryUsage is 'k8s canary' help text.
const CanaryUsage = `canary prints what runs etcdperf serve in a cluster: a Deployment of one pod (replaced
by stopping it first, so two canaries never probe one prefix at once), a Service in
front of its /metrics on port 9379, a ServiceMonitor and a PrometheusRule for the
Prometheus Operator. serve's flags go after -- (--endpoints among them); the manifest
sets --every, --listen and --results-dir, and --tls-secret mounts a Secret (ca.crt,
tls.crt, tls.key) read-only and passes its files. --web-config-secret mounts a Secret
with serve's web-config.yml and the files it names (tls.crt, tls.key, and ca.crt, the
CA the ServiceMonitor checks the canary's certificate with under
<name>.<namespace>.svc) and passes --web.config.file: the kubelet's probes and the
ServiceMonitor then use https. The kubelet's probes present no credentials: a web
config that asks for basic auth or client certificates fails them.

The PrometheusRule's alerts count in probe periods (--every):
  EtcdperfDiskFail           the disk class graded fail on two probes in a row
  EtcdperfClassFail          any other class graded fail on two probes in a row
  EtcdperfNoSuccessfulProbe  no successful probe for 3 periods
  EtcdperfNoLeader           no leader for 1m (as the etcd mixin's etcdNoLeader)
  EtcdperfProbeLatencyHigh   the probe's p99 over 10 periods (at least 5m) above --p99
Their promtool tests are k8s/testdata/canary-rules-test.yaml. -w json also carries the
rules as a plain rule file, for a Prometheus without the operator.

The pod passes Pod Security's restricted profile (uid 65532, the runtime's seccomp
profile, no capabilities, a read-only root filesystem); its run files live on a
size-limited emptyDir. The light fsync probe needs a member's data dir on the pod's
host, which restricted pods cannot mount: in a cluster the disk is graded from the
members' own WAL fsync and backend commit histograms.`
