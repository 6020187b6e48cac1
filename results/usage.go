package results

// MergeUsage is merge's help text: which run files combine and how exactly.
const MergeUsage = `merge combines the run files that several workers (bench or check with --workers,
--worker-index and --start-at, e.g. the pods of 'etcdperf k8s job') wrote for one
load against one cluster. Latency histograms are merged bucket by bucket, so the
merged percentiles are those of one histogram fed every request (never averages of
percentiles); per-second intervals are aligned on their wall-clock second; requests,
errors, bytes, target rates and client CPU are summed; throughput is recomputed over
the union of the workers' measured windows; scrapes of one member at one time are
kept once. The merged run is valid when every worker's was and the workers together
achieved 95% of the summed target rate over the union window.

merge refuses run files of different clusters, commands, op sets or workload flags
(flags that say which worker it was, its share of --rate and --total, its files
and its connection may differ). analyze, report and compare read the merged file as
one run. It prints the same summary and diagnosis as bench (-w json: the same object).
"-" reads run files from standard input, one JSON document after the other (the
logs of a k8s job's workers).

Exit 0 merged and the verdict passes, 1 the verdict is fail, 2 could not merge
(unreadable or unlike run files), 3 the merged run is invalid.`
