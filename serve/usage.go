package serve

// Usage is serve's help text.
const Usage = `serve is a canary: on every tick (--every) it runs one short, bounded probe of the
cluster — the paced put and range load of --load or --profile under --prefix, deleted
after each probe, and a light fsync probe of --disk-dir where a member's data dir is on
this host — scrapes the members' /metrics around it, and grades it as check does. The
verdict goes to Prometheus series on /metrics, with a status page at / (the latest
verdict and the probe latency of the last hours) and /healthz.

  --load tiny (default) 10 req/s (half 256-byte puts, half linearizable gets) for 5 s
  --load s|m|l|xl       etcdctl check perf's loads (give --every of at least 2 minutes)

Safe by construction: the load is what the profile says and no more; serve refuses to
start when --prefix holds keys; it sends no load while the cluster has no leader
(etcdperf_cluster_has_leader 0); it backs off (doubling up to --max-backoff) while
probes fail; probes never overlap; SIGTERM stops the probe in progress, deletes its
keys and exits 0. The newest --keep run files stay in --results-dir (analyze or report them).

Series (see the README for the alert rules of etcdperf k8s canary):
  etcdperf_verdict_class{class}          0 ok, 1 warn, 2 fail, -1 unknown
  etcdperf_verdict_status                0 pass, 1 fail, 2 invalid (or the probe could not run)
  etcdperf_bottleneck_info{bottleneck,status}
  etcdperf_probe_latency_seconds{op}     histogram, etcd's 1 ms × 2^k buckets
  etcdperf_last_probe_timestamp_seconds, etcdperf_last_success_timestamp_seconds
  etcdperf_probes_total{result}, etcdperf_probe_errors_total{code}, etcdperf_probe_skipped_total{reason}
  etcdperf_cluster_has_leader, etcdperf_build_info{version,revision,goversion}

With --config.file (modules, as blackbox_exporter's) serve probes no --endpoints of
its own: each scrape of /probe?target=<endpoints>&module=<name>[&cluster=<name>] runs
one probe of that cluster, bounded by Prometheus's scrape timeout, and answers with its
series labelled cluster (default: the target) and member. Probes of one target never
overlap; each target keeps its own key and lease under <prefix><instance>/. SIGHUP or
POST /-/reload rereads the file. See docs/canary.md for the scrape_config.

It listens on 127.0.0.1:9379 by default (no etcd port: 2379, 2380, 2381); give
--listen :9379 to be scraped from elsewhere. With no --endpoints it probes an embedded
etcd, as every command does.`
