package plan

// Usage is plan's help text: what the ramp, the datascale measurement and the
// Kubernetes search do, and the exit codes. It lives beside the method it
// describes so that the two change together.
const Usage = `plan ramps an open-loop rate of a profile: it doubles the rate from --start-rate
until a step breaks (a p99 over the SLO, errors over --error-budget, or less than 95%
of the offered rate achieved: the cluster or the generator cannot keep up) or
--max-rate is reached, then bisects between the last good and the first broken rate.
It reports the knee (the highest throughput that held the SLO), the bottleneck the
analyzer names at the step that broke, the headroom over --expected-rps, and every
(throughput, p99) point; --report DIR writes them with a plot of the curve.

--datascale instead fills --keys keys of --val-size bytes (like etcdctl check
datascale), measures the db size (Status.DbSize) and the member's memory
(process_resident_memory_bytes) per key, and projects how many keys fit in memory
and in the backend quota.

--kubernetes nodes=N[,pods=P][,churn=R][,apiservers=A] sizes etcd for a Kubernetes
cluster instead: a model (printed, every number with its source or marked as an
assumption; --kube-assume and --kube-model override any) turns the cluster into the
traffic its apiservers send to etcd (node lease renewals and status updates as txns,
pod creates, updates and deletes, events on leases, paginated LISTs, one prefix watch
per apiserver, compaction), and the search scales the cluster: it doubles the nodes
(pods and churn with them) from N until a step breaks the SLO (default p99=100ms;
a whole LIST gets SIG Scalability's 30 s) or --max-nodes is reached, then bisects.
The answer is in nodes and pods, with what runs out first: the bottleneck at the step
that broke, or the quota when the model's db size reaches it sooner.

Exit 0 when the knee covers --expected-rps (or a knee was found; with --kubernetes,
when it covers the nodes asked for), 1 when it does not.`
