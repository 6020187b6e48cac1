#!/usr/bin/env bash
# Side by side with etcd's tools/benchmark against the SAME separate etcd 3.6.16 process,
# alternating, ROUNDS times each: throughput and client CPU-seconds per request.
#   scripts/compare-benchmark.sh            (make compare)
# Needs the reference tools: ANCHORS_BUILD (default ../shared/anchors/build.sh) builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
total=${TOTAL:-20000}
build=${ANCHORS_BUILD:-../shared/anchors/build.sh}
bindir=$(bash "$build" | tail -n 1)
etcdperf=${ETCDPERF:-bin/etcdperf}
[ -x "$etcdperf" ] || go build -o "$etcdperf" ./cmd/etcdperf

work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
ep=127.0.0.1:$port
"$bindir/etcd" --name cmp --data-dir "$work/data" --listen-client-urls "http://$ep" --advertise-client-urls "http://$ep" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "cmp=http://127.0.0.1:$((port + 1))" --log-level error >"$work/etcd.log" 2>&1 &
etcd_pid=$!
trap 'kill $etcd_pid 2>/dev/null; wait $etcd_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -fs "http://$ep/health" >/dev/null 2>&1 && break; sleep 0.1; done

# cpu: user+sys seconds of the command (GNU time), so both tools are measured the same way.
# etcdperf exits 1 (verdict fail) or 3 (invalid: e.g. the generator saturated the
# 2 cores) after a complete run; only 2 and above 3 mean it could not run.
timed() {
  local rc=0
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" = 2 ] || [ "$rc" -gt 3 ]; then cat "$work/err" >&2; return 1; fi
  tail -n 1 "$work/time" | awk '{print $1 + $2}'  # GNU time puts 'Command exited with non-zero status' first
}

common_bm=(--endpoints "$ep" --conns=10 --clients=100)
common_ep=(--endpoints "$ep" --conns 10 --clients 100 -w json --results-dir "$work/results")
# cpu µs/req is the whole process (GNU time, both tools alike); etcdperf also records
# its own CPU over the measured window (in-window), without start-up, scrapes and analysis.
printf '%-6s %-9s %5s %12s %10s %14s %18s\n' op tool round "req/s" "p99 ms" "cpu µs/req" "in-window µs/req"
for op in put range; do
  if [ "$op" = put ]; then
    bm=("${common_bm[@]}" put --key-size=8 --val-size=256 --total="$total")
    me=("${common_ep[@]}" put --key-size 8 --val-size 256 --total "$total" --force)
  else
    bm=("${common_bm[@]}" range foo --total="$total" --consistency=l)
    # benchmark ranges a key that does not exist; the closest etcdperf range is one key with an empty value.
    me=("${common_ep[@]}" range --keys 1 --range-width 1 --val-size 0 --total "$total" --consistency l --force)
  fi
  for r in $(seq "$rounds"); do
    cpu=$(timed "$bindir/benchmark" "${bm[@]}")
    rps=$(awk '/Requests\/sec:/ {print $2}' "$work/out")
    p99=$(awk '/99% in/ {print $3 * 1000}' "$work/out")
    printf '%-6s %-9s %5d %12.0f %10.2f %14.1f\n' "$op" benchmark "$r" "$rps" "$p99" "$(echo "$cpu $total" | awk '{print $1 / $2 * 1e6}')"
    cpu=$(timed "$etcdperf" bench "${me[@]}")
    rps=$(jq -r '.ops[0].throughput_rps' "$work/out")
    p99=$(jq -r '.ops[0].latency_ms.p99' "$work/out")
    inwin=$(jq -r '.client.cpu_seconds' "$work/out")
    printf '%-6s %-9s %5d %12.0f %10.2f %14.1f %18.1f\n' "$op" etcdperf "$r" "$rps" "$p99" "$(echo "$cpu $total" | awk '{print $1 / $2 * 1e6}')" "$(echo "$inwin $total" | awk '{print $1 / $2 * 1e6}')"
  done
done
