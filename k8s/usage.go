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
