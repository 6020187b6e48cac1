package report

// Usage is the help text of 'etcdperf report'.
const Usage = `report renders a run file: the command, target, validity, per-op requests, errors,
throughput, response and service time percentiles, the disk probe, and, when an
analysis is given, the verdict, findings, latency budget and hardware grade.

Formats: text (default), markdown, html (one self-contained file: CSS inline, plots
embedded, opens offline), json (the report object), openmetrics (the figures as
OpenMetrics text for CI systems and a Pushgateway: per-op response and service time
quantiles in seconds, requests, errors, throughput, the verdict and one
etcdperf_class_severity gauge per class: 0 ok, 1 warn, 2 fail, -1 unknown).
-w json implies --format json.

--plots DIR writes PNG and SVG plots: spectrum (latency by percentile, response and
service time of every op), timeline (per-second p50/p99/max and throughput, with the
members' WAL fsync and backend commit p99 per scrape interval on the same time
axis), disk (the probe's fdatasync by percentile against the 10 ms guideline) and
curve (plan's latency versus throughput, knee marked).

Exit 0 rendered, 2 could not read the run file or write the plots.`

// CompareUsage is the help text of 'etcdperf compare'.
const CompareUsage = `compare reads two run files of the same command and ops and shows, for each op,
the change from A to B of the p50, p90, p99 and p99.9 of response time and of
throughput, over the whole measured window; -w table prints the rows alone, with
B/A and bare numbers, for scripts.

` + CompareNoiseMethod + `

Exit 0 no regression, 1 at least one regression (worse than --threshold and beyond
the noise), 2 could not compare (unreadable run file, different commands or ops).`
