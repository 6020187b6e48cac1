#!/usr/bin/env bash
# compare-before.sh: the lean transport's CPU per request in this tree against an
# earlier commit's, on one etcd, runs interleaved (before, after, after, before, ...)
# so that a drift of the machine weighs on both: a transport change must not cost
# more CPU per request than before it (issue 31's target).
#   make compare-before BEFORE=<commit>      ROUNDS=5 TOTAL=20000 make compare-before BEFORE=...
# The requests are make compare's (the ones etcd's benchmark makes): puts of 256-byte
# values, linearizable ranges of one key; 10 connections, 100 clients, closed loop.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${BEFORE:?BEFORE=<commit> names the build to compare against}
rounds=${ROUNDS:-5}
total=${TOTAL:-20000}
build=${ANCHORS_BUILD:-../shared/anchors/build.sh}
bindir=$(bash "$build" | tail -n 1)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  git worktree remove --force "$work/src" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

git worktree add --detach -q "$work/src" "$before"
(cd "$work/src" && go build -o "$work/before" ./cmd/etcdperf)
go build -o "$work/after" ./cmd/etcdperf

port=$((20000 + RANDOM % 20000))
ep=127.0.0.1:$port
"$bindir/etcd" --name cmp --data-dir "$work/data" --listen-client-urls "http://$ep" --advertise-client-urls "http://$ep" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "cmp=http://127.0.0.1:$((port + 1))" --log-level error >"$work/etcd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -fs "http://$ep/health" >/dev/null 2>&1 && break; sleep 0.1; done

# run BUILD OP: one closed-loop run; prints the whole process's user+sys CPU
# microseconds per request (bash's time: the kernel's rusage of the child) and
# etcdperf's own over the measured window (client.cpu_seconds: no start-up, fill,
# scrapes or analysis).
run() {
  local bin=$1 op=$2 args rc=0 TIMEFORMAT='%3U %3S'
  if [ "$op" = put ]; then
    args=(put --key-size 8 --val-size 256)
  else
    args=(range --keys 1 --range-width 1 --val-size 0 --consistency l)
  fi
  { time "$work/$bin" bench --endpoints "$ep" --conns 10 --clients 100 -w json --results-dir "$work/results" --force \
    --transport lean "${args[@]}" --total "$total" >"$work/out" 2>"$work/err"; } 2>"$work/time" || rc=$?
  if [ "$rc" = 2 ] || [ "$rc" -gt 3 ]; then
    echo "compare-before: $bin $op exited $rc:" >&2
    tail -n 5 "$work/err" >&2
    return 1
  fi
  local inwin
  inwin=$(jq -r '.client.cpu_seconds // 0' "$work/out")
  tail -n 1 "$work/time" | awk -v n="$total" -v iw="$inwin" '{printf "%.1f %.1f\n", ($1 + $2) / n * 1e6, iw / n * 1e6}'
}

echo "lean, $total requests a run, $rounds rounds: before = $before, after = this tree ($(git rev-parse --short HEAD))"
echo "load before: $(uptime)"
printf '%-6s %5s %14s %14s %18s %18s\n' op round "before us/req" "after us/req" "before in-window" "after in-window"
for op in put range; do
  for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
      b=$(run before "$op"); a=$(run after "$op")
    else
      a=$(run after "$op"); b=$(run before "$op")
    fi
    read -r b bw <<<"$b"
    read -r a aw <<<"$a"
    printf '%-6s %5d %14s %14s %18s %18s\n' "$op" "$r" "$b" "$a" "$bw" "$aw"
    echo "$op $b $a $bw $aw" >>"$work/rows"
  done
done
echo "load after:  $(uptime)"
awk '
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ b[$1] = b[$1] " " $2; a[$1] = a[$1] " " $3; r[$1] = r[$1] " " ($3 / $2)
  if ($4 > 0 && $5 > 0) { bw[$1] = bw[$1] " " $4; aw[$1] = aw[$1] " " $5; rw[$1] = rw[$1] " " ($5 / $4) } }
END {
  print ""
  print "medians of the rounds (ratio: median of the within-round after/before):"
  for (op in b) {
    printf "%-6s whole process: before %6.1f after %6.1f us/req, after/before %.2f", op, median(b[op]), median(a[op]), median(r[op])
    if (op in rw) printf "; in-window: before %6.1f after %6.1f us/req, after/before %.2f", median(bw[op]), median(aw[op]), median(rw[op])
    print ""
  }
}' "$work/rows"
