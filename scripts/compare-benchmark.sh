#!/usr/bin/env bash
# Side by side with etcd's tools/benchmark, alternating, ROUNDS pairs per op:
#   1. against one separate etcd 3.6.16 process (TOTAL requests a run): throughput and
#      whole-process client CPU per request;
#   2. against the null KV server (cmd/nullkv, answers at once; NULL_TOTAL requests a
#      run): the generators' own cost, as requests per client CPU-second (req/s per core).
# Then a summary of the ratios etcdperf/benchmark (medians of the pairs' ratios) against
# the targets of issue 17. A benchmark, not a test: it exits 0 when every run completed,
# met or not; 1 when a run failed.
#   make compare            ROUNDS=5 TOTAL=20000 NULL_TOTAL=100000 make compare
# Needs the reference tools: ANCHORS_BUILD (default ../shared/anchors/build.sh) builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
total=${TOTAL:-20000}
null_total=${NULL_TOTAL:-100000}
build=${ANCHORS_BUILD:-../shared/anchors/build.sh}
bindir=$(bash "$build" | tail -n 1)
etcdperf=${ETCDPERF:-bin/etcdperf}
nullkv=${NULLKV:-bin/nullkv}
[ -x "$etcdperf" ] || go build -o "$etcdperf" ./cmd/etcdperf
[ -x "$nullkv" ] || go build -o "$nullkv" ./cmd/nullkv
for tool in "$bindir/benchmark" "$bindir/etcd" jq curl; do
  command -v "$tool" >/dev/null || { echo "compare: $tool not found" >&2; exit 1; }
done
[ "$rounds" -ge 1 ] || { echo "compare: ROUNDS must be at least 1" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_health URL: both servers answer /health over HTTP/1 on the client port.
wait_health() {
  for _ in $(seq 100); do curl -fs "$1/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "compare: no server at $1" >&2
  return 1
}

port=$((20000 + RANDOM % 20000))
etcd_ep=127.0.0.1:$port
"$bindir/etcd" --name cmp --data-dir "$work/data" --listen-client-urls "http://$etcd_ep" --advertise-client-urls "http://$etcd_ep" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "cmp=http://127.0.0.1:$((port + 1))" --log-level error >"$work/etcd.log" 2>&1 &
pids+=($!)
wait_health "http://$etcd_ep"
"$nullkv" --listen "127.0.0.1:$((port + 2))" >"$work/nullkv.url" 2>"$work/nullkv.log" &
pids+=($!)
null_ep=127.0.0.1:$((port + 2))
wait_health "http://$null_ep"

# timed CMD...: runs CMD, leaves its stdout in $work/out and prints its user+sys
# CPU-seconds: bash's time, from the kernel's rusage of the child, to the millisecond
# (GNU time rounds to 10 ms, a few percent of a run). etcdperf exits 1 (verdict fail)
# or 3 (invalid, e.g. the generator saturated the 2 cores) after a complete run; only 2
# and above 3 mean it could not run.
timed() {
  local rc=0 TIMEFORMAT='%3U %3S'
  { time "$@" >"$work/out" 2>"$work/err"; } 2>"$work/time" || rc=$?
  if [ "$rc" = 2 ] || [ "$rc" -gt 3 ]; then
    echo "compare: $* exited $rc:" >&2
    tail -n 5 "$work/err" >&2
    return 1
  fi
  tail -n 1 "$work/time" | awk '{print $1 + $2}'
}

# run_benchmark SERVER OP N / run_etcdperf SERVER OP N: one run; appends
# "server op tool round rps p99ms cpu_s n" to $work/rows and prints the row.
run_benchmark() {
  local ep=$1 op=$2 n=$3 server=$4 round=$5 args cpu rps p99
  if [ "$op" = put ]; then
    args=(put --key-size=8 --val-size=256 --total="$n")
  else
    args=(range foo --total="$n" --consistency=l)
  fi
  cpu=$(timed "$bindir/benchmark" --endpoints "$ep" --conns=10 --clients=100 "${args[@]}")
  rps=$(awk '/Requests\/sec:/ {print $2}' "$work/out")
  p99=$(awk '/99% in/ {print $3 * 1000}' "$work/out")
  row "$server" "$op" benchmark "$round" "$rps" "$p99" "$cpu" "$n" ""
}
run_etcdperf() {
  local ep=$1 op=$2 n=$3 server=$4 round=$5 args cpu rps p99 inwin
  if [ "$op" = put ]; then
    args=(put --key-size 8 --val-size 256 --total "$n")
  else
    # benchmark ranges a key that does not exist; the closest etcdperf range is one key with an empty value.
    args=(range --keys 1 --range-width 1 --val-size 0 --total "$n" --consistency l)
  fi
  cpu=$(timed "$etcdperf" bench --endpoints "$ep" --conns 10 --clients 100 -w json --results-dir "$work/results" --force "${args[@]}")
  rps=$(jq -r '.ops[0].throughput_rps' "$work/out")
  p99=$(jq -r '.ops[0].latency_ms.p99' "$work/out")
  inwin=$(jq -r '.client.cpu_seconds' "$work/out")
  row "$server" "$op" etcdperf "$round" "$rps" "$p99" "$cpu" "$n" "$inwin"
}
row() {
  local v
  for v in "$5" "$6" "$7"; do
    if ! awk -v v="$v" 'BEGIN {exit !(v ~ /^[0-9.eE+-]+$/ && v + 0 > 0)}'; then
      echo "compare: $3 against $1 ($2, round $4) printed no usable figures (req/s '$5', p99 '$6', cpu '$7'); its output:" >&2
      tail -n 20 "$work/out" >&2
      return 1
    fi
  done
  echo "$1 $2 $3 $4 $5 $6 $7 $8" >>"$work/rows"
  local inwin=""
  [ -n "$9" ] && inwin=$(awk -v c="$9" -v n="$8" 'BEGIN {printf "%.1f", c / n * 1e6}')
  awk -v s="$1" -v o="$2" -v t="$3" -v r="$4" -v rps="$5" -v p="$6" -v c="$7" -v n="$8" -v iw="$inwin" \
    'BEGIN {printf "%-5s %-6s %-9s %5d %8d %12.0f %9.2f %12.1f %14.0f %12s\n", s, o, t, r, n, rps, p, c / n * 1e6, n / c, iw}'
}

echo "load before: $(uptime)"
printf '%-5s %-6s %-9s %5s %8s %12s %9s %12s %14s %12s\n' server op tool round requests "req/s" "p99 ms" "cpu us/req" "req/cpu-s" "in-window us"
for server in etcd null; do
  ep=$etcd_ep n=$total
  [ "$server" = null ] && ep=$null_ep n=$null_total
  for op in put range; do
    for r in $(seq "$rounds"); do
      # Alternate which tool goes first, so a drift in the machine's load favours neither.
      if [ $((r % 2)) = 1 ]; then
        run_benchmark "$ep" "$op" "$n" "$server" "$r"
        run_etcdperf "$ep" "$op" "$n" "$server" "$r"
      else
        run_etcdperf "$ep" "$op" "$n" "$server" "$r"
        run_benchmark "$ep" "$op" "$n" "$server" "$r"
      fi
    done
  done
done
echo "load after:  $(uptime)"
echo "cpu us/req and req/cpu-s are whole-process user+sys (rusage of the child) for both tools; in-window is etcdperf's own CPU over the measured window."

# Summary: for each server, op and metric, the median over rounds of etcdperf/benchmark
# within a pair, and the median of each tool's own figure.
echo
echo "etcdperf / benchmark, medians of $rounds alternating pairs (issue 17 targets):"
awk -v rounds="$rounds" '
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 " " $2 " " $4; rps[k, $3] = $5; cpu[k, $3] = $7 / $8; keys[k] = 1 }
END {
  for (k in keys) {
    split(k, f, " "); sk = f[1] " " f[2]
    tr[sk] = tr[sk] " " rps[k, "etcdperf"] / rps[k, "benchmark"]
    cr[sk] = cr[sk] " " cpu[k, "etcdperf"] / cpu[k, "benchmark"]
    pc[sk] = pc[sk] " " (cpu[k, "benchmark"] / cpu[k, "etcdperf"])
    be[sk] = be[sk] " " 1 / cpu[k, "benchmark"]; ee[sk] = ee[sk] " " 1 / cpu[k, "etcdperf"]
    bt[sk] = bt[sk] " " rps[k, "benchmark"]; et[sk] = et[sk] " " rps[k, "etcdperf"]
  }
  printf "%-44s %-6s %10s %10s %8s %8s  %s\n", "ratio", "op", "benchmark", "etcdperf", "ratio", "target", "met"
  met = 0; all = 0
  for (i = 1; i <= 2; i++) {
    op = i == 1 ? "put" : "range"
    line("throughput, etcd (req/s)", op, median(bt["etcd " op]), median(et["etcd " op]), median(tr["etcd " op]), ">=", 1.10)
    line("client CPU per request, etcd (us)", op, 1e6 / median(be["etcd " op]), 1e6 / median(ee["etcd " op]), median(cr["etcd " op]), "<=", 0.80)
    line("req/s per client core, null server", op, median(be["null " op]), median(ee["null " op]), median(pc["null " op]), ">=", 1.50)
    info("throughput, null server (req/s)", op, median(bt["null " op]), median(et["null " op]), median(tr["null " op]))
  }
  printf "targets met: %d of %d\n", met, all
}
function info(name, op, b, e, r) {
  printf "%-44s %-6s %10.1f %10.1f %8.2f %8s  %s\n", name, op, b, e, r, "-", "(no target)"
}
function line(name, op, b, e, r, cmp, t,   ok) {
  ok = cmp == ">=" ? r >= t : r <= t
  met += ok; all++
  printf "%-44s %-6s %10.1f %10.1f %8.2f %5s %.2f  %s\n", name, op, b, e, r, cmp, t, ok ? "yes" : "no"
}' "$work/rows"
