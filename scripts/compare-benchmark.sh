#!/usr/bin/env bash
# Three load generators side by side, alternating, ROUNDS rounds per op:
#   lean        etcdperf bench --transport lean (internal/leanrpc, the default)
#   grpc-tuned  etcdperf bench --transport grpc-tuned (gRPC-go without clientv3's interceptors)
#   benchmark   etcd's tools/benchmark
#   1. against one separate etcd 3.6.16 process (TOTAL requests a run): throughput and
#      whole-process client CPU per request;
#   2. against the null KV server (cmd/nullkv, answers at once; NULL_TOTAL requests a
#      run): the generators' own cost, as requests per client CPU-second (req/s per core).
# Then the medians of each generator and the ratios against issue 17's and 22's targets,
# and a fidelity table: p50 and p99 of lean against grpc (clientv3's own client, what
# an application sees) on the same etcd at a fixed rate (FID_RATE req/s for FID_DURATION),
# FID_PAIRS alternating pairs per op, judged by a Mann-Whitney test with the gap's
# confidence interval (cmd/fidelity; 5 pairs at least for a 5% test). The rate is
# one the server keeps up with, so the latencies are the requests', not a queue's;
# the same pairs against the null server tell what each client adds of its own.
# Last, the restart scenario (scripts/compare-restart.sh): three members, a follower
# killed and started again mid-run, each member's puts before, during and after and
# the errors, lean against grpc, judged the same way (RESTART_PAIRS pairs, default 4).
# A benchmark, not a test: it exits 0 when every run completed, met or not; 1 when a run
# failed.
#   make compare            ROUNDS=5 TOTAL=20000 NULL_TOTAL=100000 FID_PAIRS=5 RESTART_PAIRS=4 make compare
# Needs the reference tools: ANCHORS_BUILD (default ../shared/anchors/build.sh) builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
total=${TOTAL:-20000}
null_total=${NULL_TOTAL:-100000}
fid_pairs=${FID_PAIRS:-5}
fid_rate=${FID_RATE:-500}
fid_duration=${FID_DURATION:-10s}
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
[ "$fid_pairs" -ge 2 ] || { echo "compare: FID_PAIRS must be at least 2 (the test needs two runs of each; 4 to reach 5%)" >&2; exit 1; }

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

# run_benchmark EP OP N SERVER ROUND / run_etcdperf EP OP N SERVER ROUND TRANSPORT: one
# run; appends "server op tool round rps p99ms cpu_s n" to $work/rows and prints the row.
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
  local ep=$1 op=$2 n=$3 server=$4 round=$5 transport=$6 cpu rps p99 inwin
  cpu=$(timed "$etcdperf" bench --endpoints "$ep" --conns 10 --clients 100 -w json --results-dir "$work/results" --force \
    --transport "$transport" $(etcdperf_op "$op") --total "$n")
  check_transport "$transport"
  rps=$(jq -r '.ops[0].throughput_rps' "$work/out")
  p99=$(jq -r '.ops[0].latency_ms.p99' "$work/out")
  inwin=$(jq -r '.client.cpu_seconds' "$work/out")
  row "$server" "$op" "$transport" "$round" "$rps" "$p99" "$cpu" "$n" "$inwin"
}
# etcdperf_op OP: etcdperf's flags for the request benchmark makes.
etcdperf_op() {
  if [ "$1" = put ]; then
    echo put --key-size 8 --val-size 256
  else
    # benchmark ranges a key that does not exist; the closest etcdperf range is one key with an empty value.
    echo range --keys 1 --range-width 1 --val-size 0 --consistency l
  fi
}
# check_transport T: the run went through T, not a fallback to clientv3's connection.
check_transport() {
  local got
  got=$(jq -r '.client.transport' "$work/out")
  [ "$got" = "$1" ] || { echo "compare: asked for --transport $1, the run used $got" >&2; return 1; }
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
  echo "$1 $2 $3 $4 $5 $6 $7 $8 ${9:--}" >>"$work/rows"
  local inwin=""
  [ -n "$9" ] && inwin=$(awk -v c="$9" -v n="$8" 'BEGIN {printf "%.1f", c / n * 1e6}')
  awk -v s="$1" -v o="$2" -v t="$3" -v r="$4" -v rps="$5" -v p="$6" -v c="$7" -v n="$8" -v iw="$inwin" \
    'BEGIN {printf "%-5s %-6s %-10s %5d %8d %12.0f %9.2f %12.1f %14.0f %12s\n", s, o, t, r, n, rps, p, c / n * 1e6, n / c, iw}'
}

# run_fidelity SERVER OP PAIR TRANSPORT: one open-loop run at FID_RATE on SERVER
# (etcd or null); appends "op transport pair p50ms p99ms" to $work/fid-SERVER
# and prints it.
run_fidelity() {
  local server=$1 op=$2 pair=$3 transport=$4 p50 p99 rps ep=$etcd_ep
  [ "$server" = null ] && ep=$null_ep
  timed "$etcdperf" bench --endpoints "$ep" --conns 10 --clients 100 -w json --results-dir "$work/results" --force \
    --transport "$transport" $(etcdperf_op "$op") --rate "$fid_rate" --duration "$fid_duration" >/dev/null
  check_transport "$transport"
  p50=$(jq -r '.ops[0].latency_ms.p50' "$work/out")
  p99=$(jq -r '.ops[0].latency_ms.p99' "$work/out")
  rps=$(jq -r '.ops[0].throughput_rps' "$work/out")
  echo "$op $transport $pair $p50 $p99" >>"$work/fid-$server"
  printf '%-5s %-6s %-5s %4d %10.0f %9.3f %9.3f\n' "$server" "$op" "$transport" "$pair" "$rps" "$p50" "$p99"
}

generators=(lean grpc-tuned benchmark)
echo "load before: $(uptime)"
printf '%-5s %-6s %-10s %5s %8s %12s %9s %12s %14s %12s\n' server op tool round requests "req/s" "p99 ms" "cpu us/req" "req/cpu-s" "in-window us"
for server in etcd null; do
  ep=$etcd_ep n=$total
  [ "$server" = null ] && ep=$null_ep n=$null_total
  for op in put range; do
    for r in $(seq "$rounds"); do
      # Rotate which generator goes first, so a drift in the machine's load favours none.
      for i in 0 1 2; do
        g=${generators[$(((r + i) % 3))]}
        if [ "$g" = benchmark ]; then
          run_benchmark "$ep" "$op" "$n" "$server" "$r"
        else
          run_etcdperf "$ep" "$op" "$n" "$server" "$r" "$g"
        fi
      done
    done
  done
done
echo "load after:  $(uptime)"
echo "cpu us/req and req/cpu-s are whole-process user+sys (rusage of the child) for every generator; in-window is etcdperf's own CPU over the measured window (no start-up, fill, scrapes or analysis)."

echo
echo "fidelity runs: open loop at $fid_rate req/s for $fid_duration on etcd and on the null server, lean and grpc (clientv3's client) alternating"
printf '%-5s %-6s %-5s %4s %10s %9s %9s\n' server op tool pair "req/s" "p50 ms" "p99 ms"
for server in etcd null; do
  for op in put range; do
    for p in $(seq "$fid_pairs"); do
      if [ $((p % 2)) = 1 ]; then
        run_fidelity "$server" "$op" "$p" lean
        run_fidelity "$server" "$op" "$p" grpc
      else
        run_fidelity "$server" "$op" "$p" grpc
        run_fidelity "$server" "$op" "$p" lean
      fi
    done
  done
done
echo "load after fidelity: $(uptime)"

# Summary: for each server, op and generator, the median over rounds of its own figure,
# and the medians of the within-round ratios.
echo
echo "generators side by side, medians of $rounds rounds (ratios: medians of the within-round ratios):"
awk '
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 " " $2 " " $4; rps[k, $3] = $5; cpu[k, $3] = $7 / $8; win[k, $3] = $9 / $8; keys[k] = 1 }
END {
  for (k in keys) {
    split(k, f, " "); sk = f[1] " " f[2]
    for (g = 1; g <= 3; g++) {
      t = g == 1 ? "lean" : g == 2 ? "grpc-tuned" : "benchmark"
      th[sk, t] = th[sk, t] " " rps[k, t]; cu[sk, t] = cu[sk, t] " " cpu[k, t] * 1e6; pc[sk, t] = pc[sk, t] " " 1 / cpu[k, t]
      if (t != "benchmark") wi[sk, t] = wi[sk, t] " " win[k, t] * 1e6
    }
    wt[sk] = wt[sk] " " win[k, "grpc-tuned"] / win[k, "lean"]
    # Ratios within a round, so a drift in the machine load cancels.
    rl[sk] = rl[sk] " " cpu[k, "lean"] / cpu[k, "benchmark"]
    rt[sk] = rt[sk] " " cpu[k, "grpc-tuned"] / cpu[k, "lean"]
    ql[sk] = ql[sk] " " cpu[k, "benchmark"] / cpu[k, "lean"]
    qt[sk] = qt[sk] " " cpu[k, "lean"] / cpu[k, "grpc-tuned"]
    tl[sk] = tl[sk] " " rps[k, "lean"] / rps[k, "benchmark"]
  }
  printf "%-40s %-6s %10s %10s %10s %11s %11s\n", "figure", "op", "lean", "grpc-tuned", "benchmark", "lean/bench", "tuned/lean"
  for (i = 1; i <= 2; i++) {
    op = i == 1 ? "put" : "range"
    row("throughput, etcd (req/s)", op, th, "etcd " op, median(tl["etcd " op]), "-")
    row("client CPU per request, etcd (us)", op, cu, "etcd " op, median(rl["etcd " op]), median(rt["etcd " op]))
    row("client CPU per request, etcd, in-window", op, wi, "etcd " op, "-", median(wt["etcd " op]))
    row("req/s per client core, null server", op, pc, "null " op, median(ql["null " op]), median(qt["null " op]))
    row("throughput, null server (req/s)", op, th, "null " op, "-", "-")
  }
  print ""
  print "targets (ratios above):"
  for (i = 1; i <= 2; i++) {
    op = i == 1 ? "put" : "range"
    target("issue 17: lean throughput / benchmark, etcd", op, median(tl["etcd " op]), ">=", 1.10)
    target("issue 17: lean CPU per request / benchmark, etcd", op, median(rl["etcd " op]), "<=", 0.80)
    target("issue 22: lean CPU per request / benchmark, etcd", op, median(rl["etcd " op]), "<=", 0.60)
    target("issue 17: lean req per core / benchmark, null", op, median(ql["null " op]), ">=", 1.50)
  }
  # Issue 22 item 7: tuned gRPC-go within 15% of lean on both figures, for both ops.
  within = 1
  for (i = 1; i <= 2; i++) {
    op = i == 1 ? "put" : "range"
    c = median(rt["etcd " op]); q = median(qt["null " op])
    printf "issue 22 item 7, %-5s: grpc-tuned CPU per request %.2fx lean (within 15%%: %s), req per core %.2fx lean (within 15%%: %s)\n",
      op, c, (c <= 1.15 ? "yes" : "no"), q, (q >= 1 / 1.15 ? "yes" : "no")
    if (c > 1.15 || q < 1 / 1.15) within = 0
  }
  if (within) print "item 7: grpc-tuned comes within 15% of lean on both figures, for put and range: the issue asks to make it the default and delete leanrpc"
  else print "item 7: grpc-tuned does not come within 15% of lean on both figures, for put and range: lean stays the default"
}
function row(name, op, a, sk, r1, r2,   b) {
  b = a[sk, "benchmark"] ~ /[0-9]/ ? sprintf("%.1f", median(a[sk, "benchmark"])) : "-"
  printf "%-40s %-6s %10.1f %10.1f %10s %11s %11s\n", name, op, median(a[sk, "lean"]), median(a[sk, "grpc-tuned"]), b, fmt(r1), fmt(r2)
}
function fmt(r) { return r == "-" ? r : sprintf("%.2f", r) }
function target(name, op, r, cmp, t,   ok) {
  ok = cmp == ">=" ? r >= t : r <= t
  printf "  %-50s %-5s %6.3f %s %.2f  %s\n", name, op, r, cmp, t, ok ? "met" : "NOT met"
}' "$work/rows"

# Fidelity: does lean measure what a clientv3 application sees? For each op and
# percentile, a Mann-Whitney test on the per-run values of lean against grpc, and the
# gap with its confidence interval (cmd/fidelity, internal/fidelity).
echo
echo "fidelity: lean against grpc (clientv3's client) on one etcd, $fid_pairs alternating pairs at $fid_rate req/s:"
go run ./cmd/fidelity <"$work/fid-etcd"
# The same against the null server, which answers at once: the gap there is what
# the two clients add of their own, so a gap on etcd of the same size is the
# clients' and not a difference in what they measure of the server.
echo
echo "the same on the null server (what each client adds of its own):"
go run ./cmd/fidelity <"$work/fid-null"

# Failover: does lean move its load as clientv3 does when a member dies and comes back?
echo
BINDIR=$bindir ETCDPERF=$etcdperf scripts/compare-restart.sh
