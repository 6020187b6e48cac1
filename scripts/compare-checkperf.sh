#!/usr/bin/env bash
# etcdctl check perf side by side with etcdperf check, against ONE separate etcd 3.6.16
# process, alternating (etcdctl, then etcdperf) ROUNDS times for each load in LOADS:
# offered load, achieved throughput, the pass/fail of each tool, and etcdperf's diagnosis.
#   scripts/compare-checkperf.sh              (LOADS="s l" ROUNDS=1; each run is 60 s)
# Needs the reference tools: ANCHORS_BUILD (default ../shared/anchors/build.sh) builds them.
# Each tool uses its own prefix (/etcdctl-check-perf/ and /etcdperf/check/), and both
# delete their keys afterwards, so the runs do not see each other's data.
set -euo pipefail
cd "$(dirname "$0")/.."
loads=${LOADS:-"s l"}
rounds=${ROUNDS:-1}
build=${ANCHORS_BUILD:-../shared/anchors/build.sh}
bindir=$(bash "$build" | tail -n 1)
work=$(mktemp -d)
# Built from this tree unless given: an older bin/etcdperf may predate check.
etcdperf=${ETCDPERF:-$work/etcdperf}
[ -x "$etcdperf" ] || go build -o "$etcdperf" ./cmd/etcdperf
port=$((20000 + RANDOM % 20000))
ep=127.0.0.1:$port
"$bindir/etcd" --name cmp --data-dir "$work/data" --listen-client-urls "http://$ep" --advertise-client-urls "http://$ep" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "cmp=http://127.0.0.1:$((port + 1))" --log-level error >"$work/etcd.log" 2>&1 &
etcd_pid=$!
trap 'kill $etcd_pid 2>/dev/null; wait $etcd_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -fs "http://$ep/health" >/dev/null 2>&1 && break; sleep 0.1; done
echo "etcd $("$bindir/etcd" --version | awk '/etcd Version/ {print $3}') pid $etcd_pid at $ep; $(nproc) cores shared by server and client"

declare -A rate=([s]=150 [m]=1000 [l]=8000 [xl]=15000)
printf '%-4s %-9s %5s %9s %10s  %s\n' load tool round offered "achieved" result
diag=()
for load in $loads; do
  for r in $(seq "$rounds"); do
    # etcdctl prints "PASS: Throughput is N writes/s" or "FAIL: Throughput too low: N writes/s"
    # (int(RPS)+1), then PASS or FAIL; it exits 1 on FAIL.
    "$bindir/etcdctl" --endpoints "$ep" check perf --load="$load" >"$work/ctl.out" 2>&1 || true
    got=$(grep -oE 'Throughput (is|too low:) [0-9]+' "$work/ctl.out" | grep -oE '[0-9]+$' || echo "?")
    res=$(grep -E '^(PASS|FAIL)$' "$work/ctl.out" | tail -n 1 || echo "?")
    why=$(grep -E '^(FAIL|Slowest|Stddev)' "$work/ctl.out" | grep -v '^FAIL$' | tr '\n' ';' || true)
    printf '%-4s %-9s %5d %9s %10s  %s %s\n' "$load" etcdctl "$r" "${rate[$load]}" "$got" "$res" "$why"

    rc=0
    "$etcdperf" check --endpoints "$ep" --load "$load" -w json --results-dir "$work/results" >"$work/ep.json" 2>"$work/ep.err" || rc=$?
    if ! jq -e .verdict >/dev/null 2>&1 <"$work/ep.json"; then
      printf '%-4s %-9s %5d %9s %10s  error (exit %d): %s\n' "$load" etcdperf "$r" "${rate[$load]}" "?" "$rc" "$(tail -n 1 "$work/ep.err")"
      continue
    fi
    printf '%-4s %-9s %5d %9s %10.0f  compat %s, default %s (exit %d); p99 %.1f ms, slowest %.0f ms, stddev %.1f ms\n' "$load" etcdperf "$r" \
      "$(jq -r '.compat.target_rps' "$work/ep.json")" "$(jq -r '.compat.throughput_rps' "$work/ep.json")" \
      "$(jq -r '.compat.status | ascii_upcase' "$work/ep.json")" "$(jq -r '.verdict.status | ascii_upcase' "$work/ep.json")" "$rc" \
      "$(jq -r '[.ops[].latency_ms.p99] | max' "$work/ep.json")" "$(jq -r '.compat.slowest_ms' "$work/ep.json")" "$(jq -r '.compat.stddev_ms' "$work/ep.json")"
    diag+=("--load $load round $r: $(jq -r '"bottleneck " + .verdict.bottleneck + ": " + .verdict.summary' "$work/ep.json")")
    while IFS= read -r line; do diag+=("    $line"); done < <(jq -r '.findings[] | select(.severity == "fail" or .severity == "warn") | "[" + .severity + "] " + .class + ": " + .summary' "$work/ep.json")
  done
done
echo
echo "etcdperf's diagnosis:"
printf '%s\n' "${diag[@]}"
