package qualify

// Usage is qualify's help text: what it grades, how it steps down the tiers,
// and the exit codes. It lives beside the method it describes so that the two
// change together.
const Usage = `qualify grades this machine against the tiers of etcd's hardware guide
(small, medium, large, xlarge): host facts (CPUs, memory, cgroup limits), the fio-style
fdatasync probe in --data-dir, then an embedded etcd with its data in --data-dir under
the tier's load (its request rate and clients, puts of 1 KiB as etcdctl check perf) for
--duration. It prints one row per criterion with the observed and required values,
the source of the requirement and the margin, and the highest tier the host qualifies
for. Without --tier it starts from the highest tier the host's CPUs, memory and disk
allow and steps down until a load run passes.

Exit 0 when the host qualifies (for --tier, or for some tier), 1 when it does not,
2 when it cannot run (no data dir, a data dir on tmpfs where fdatasync is a no-op).`
