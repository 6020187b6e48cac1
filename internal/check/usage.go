package check

// Usage is check's help text: the two verdicts it gives and how they are reached.
const Usage = `check runs a load against the cluster and gives two verdicts, both shown:

  compat   etcdctl check perf's rule, exactly: no errors, throughput above 90% of the
           target, slowest request ≤ 500 ms, stddev ≤ 100 ms (service time, as etcdctl
           times its requests).
  default  etcdperf's rule: every op's p99 response time (from the intended start, so
           queueing counts) within the profile's SLO (100 ms unless it states one), no
           errors, at least 95% of the target rate, and no signal the analyzer grades
           fail (a disk whose fdatasync p99 is 10x the guideline fails even when the
           light load of --load s still passes etcdctl's rule). A failure names the
           bottleneck and its evidence.

--load s|m|l|xl runs etcdctl check perf's load (150/1000/8000/15000 puts/s of 1 KiB
values to 256-byte random keys from 50/200/500/1000 clients, one connection each, for
60 s); --profile runs any profile (etcdperf profiles list) or a YAML file. Keys go
under --prefix, never etcdctl's /etcdctl-check-perf/, and are deleted afterwards.

Exit codes follow the chosen verdict (the default one, or etcdctl's with --compat):
0 pass, 1 fail, 2 could not run, 3 invalid (the load generator was saturated).`
