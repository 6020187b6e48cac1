#!/usr/bin/env bash
# make compare's restart scenario (issue 31 item 5): three etcd processes, an
# open-loop put load at RESTART_RATE req/s to all three endpoints, a follower
# killed (SIGKILL) RESTART_KILL s into the load and started again RESTART_DOWN s
# later; lean and grpc (clientv3's client) alternating, RESTART_PAIRS pairs.
# Each member's puts are counted from its own grpc_server_handled_total (all
# codes), scraped at the phases' bounds:
#   before   from 1 s into the load to the kill
#   during   from the kill to RESTART_SETTLE s after the restart (the member
#            down, started, and dialled again after gRPC's backoff)
#   after    from then to the end of the load
# and the run's errors from its run file. cmd/fidelity judges each count of
# lean against grpc's by a Mann-Whitney test, with the gap and its interval.
#   scripts/compare-restart.sh    (make compare runs it last)
# Needs etcd from the reference tools: BINDIR, or ANCHORS_BUILD builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${RESTART_PAIRS:-4}
rate=${RESTART_RATE:-300}
kill_at=${RESTART_KILL:-7}
down=${RESTART_DOWN:-3}
settle=${RESTART_SETTLE:-6}
after=${RESTART_AFTER:-10}
bindir=${BINDIR:-$(bash "${ANCHORS_BUILD:-../shared/anchors/build.sh}" | tail -n 1)}
etcdperf=${ETCDPERF:-bin/etcdperf}
[ -x "$etcdperf" ] || go build -o "$etcdperf" ./cmd/etcdperf
for tool in "$bindir/etcd" jq curl; do
  command -v "$tool" >/dev/null || { echo "compare-restart: $tool not found" >&2; exit 1; }
done
[ "$pairs" -ge 2 ] || { echo "compare-restart: RESTART_PAIRS must be at least 2 (4 to reach 5%)" >&2; exit 1; }

work=$(mktemp -d)
declare -A pid
cleanup() {
  for i in "${!pid[@]}"; do kill "${pid[$i]}" 2>/dev/null || true; done
  for i in "${!pid[@]}"; do wait "${pid[$i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

base=$((20000 + RANDOM % 20000))
cluster="" eps=""
for i in 0 1 2; do
  cluster+="${cluster:+,}m$i=http://127.0.0.1:$((base + 2 * i + 1))"
  eps+="${eps:+,}127.0.0.1:$((base + 2 * i))"
done
# start I: member I, with its data dir kept across a restart.
start() {
  local c=127.0.0.1:$((base + 2 * $1)) p=http://127.0.0.1:$((base + 2 * $1 + 1))
  "$bindir/etcd" --name "m$1" --data-dir "$work/m$1" --listen-client-urls "http://$c" --advertise-client-urls "http://$c" \
    --listen-peer-urls "$p" --initial-advertise-peer-urls "$p" --initial-cluster "$cluster" \
    --initial-cluster-token cmp-restart --log-level error >>"$work/m$1.log" 2>&1 &
  pid[$1]=$!
}
# metric I: member I's /metrics.
metric() { curl -fs "http://127.0.0.1:$((base + 2 * $1))/metrics"; }
# healthy I: member I answers /health with a leader.
healthy() {
  for _ in $(seq 300); do
    curl -fs "http://127.0.0.1:$((base + 2 * $1))/health" 2>/dev/null | grep -q '"health":"true"' && return 0
    sleep 0.1
  done
  echo "compare-restart: member $1 not healthy; its log:" >&2
  tail -n 5 "$work/m$1.log" >&2
  return 1
}
# puts I: member I's puts handled so far, all codes (0 while it is down).
puts() { metric "$1" 2>/dev/null | awk '/^grpc_server_handled_total\{.*grpc_method="Put"/ {s += $NF} END {printf "%d", s}'; }
for i in 0 1 2; do start "$i"; done
for i in 0 1 2; do healthy "$i"; done

# run TRANSPORT PAIR: one run; appends "figure transport pair count" to $work/counts.
run() {
  local transport=$1 pair=$2 leader="" victim="" other="" i rc=0 t0 load
  for i in 0 1 2; do
    if [ "$(metric "$i" | awk '$1 == "etcd_server_is_leader" {print $2}')" = 1 ]; then leader=$i
    elif [ -z "$victim" ]; then victim=$i
    else other=$i; fi
  done
  [ -n "$leader" ] && [ -n "$victim" ] && [ -n "$other" ] || { echo "compare-restart: no leader and two followers" >&2; return 1; }
  local names=("$leader" "$victim" "$other") labels=(leader restarted follower)
  local total=$((kill_at + down + settle + after + 2))
  "$etcdperf" bench put --endpoints "$eps" --conns 10 --clients 100 -w json --results-dir "$work/results" --force \
    --transport "$transport" --key-size 8 --val-size 256 --rate "$rate" --duration "${total}s" >"$work/out" 2>"$work/err" &
  load=$!
  # The load has begun once the members' puts move.
  t0=$(( $(puts 0) + $(puts 1) + $(puts 2) ))
  for _ in $(seq 600); do
    [ $(( $(puts 0) + $(puts 1) + $(puts 2) )) -gt "$t0" ] && break
    sleep 0.05
  done
  sleep 1
  local -a s0 s1 s2 s3
  for i in 0 1 2; do s0[i]=$(puts "${names[i]}"); done
  sleep $((kill_at - 1))
  for i in 0 1 2; do s1[i]=$(puts "${names[i]}"); done
  kill -KILL "${pid[$victim]}"
  wait "${pid[$victim]}" 2>/dev/null || true
  sleep "$down"
  start "$victim"
  sleep "$settle"
  for i in 0 1 2; do s2[i]=$(puts "${names[i]}"); done
  sleep "$after"
  for i in 0 1 2; do s3[i]=$(puts "${names[i]}"); done
  wait "$load" || rc=$?
  if [ "$rc" = 2 ] || [ "$rc" -gt 3 ]; then
    echo "compare-restart: etcdperf --transport $transport exited $rc:" >&2
    tail -n 5 "$work/err" >&2
    return 1
  fi
  local got errs
  got=$(jq -r '.client.transport' "$work/out")
  [ "$got" = "$transport" ] || { echo "compare-restart: asked for --transport $transport, the run used $got" >&2; return 1; }
  errs=$(jq -r '[.ops[].errors] | add' "$work/out")
  # The restarted member's counter starts again at 0: its "during" is what it served since.
  local b d a
  printf '%-5s %4d' "$transport" "$pair"
  for i in 0 1 2; do
    b=$((s1[i] - s0[i])) a=$((s3[i] - s2[i]))
    if [ "${s2[i]}" -lt "${s1[i]}" ]; then d=${s2[i]}; else d=$((s2[i] - s1[i])); fi
    printf ' %8d %8d %8d' "$b" "$d" "$a"
    printf 'before-%s %s %d %d\nduring-%s %s %d %d\nafter-%s %s %d %d\n' "${labels[i]}" "$transport" "$pair" "$b" \
      "${labels[i]}" "$transport" "$pair" "$d" "${labels[i]}" "$transport" "$pair" "$a" >>"$work/counts"
  done
  printf ' %6d\n' "$errs"
  echo "errors $transport $pair $errs" >>"$work/counts"
  healthy "$victim"
}

echo "restart scenario: 3 etcd members, puts at $rate req/s to all three endpoints; a follower killed ${kill_at}s into the load,"
echo "started again ${down}s later; puts each member served (its grpc_server_handled_total) before the kill, from the kill to"
echo "${settle}s after the restart, and the last ${after}s; lean and grpc (clientv3's client) alternating, $pairs pairs"
echo "load before: $(uptime)"
printf '%-5s %4s %26s %26s %26s %6s\n' tool pair "leader b/d/a" "restarted b/d/a" "follower b/d/a" errors
for p in $(seq "$pairs"); do
  if [ $((p % 2)) = 1 ]; then run lean "$p"; run grpc "$p"; else run grpc "$p"; run lean "$p"; fi
done
echo "load after:  $(uptime)"
echo
echo "restart scenario: each member's puts and the errors, lean against grpc:"
go run ./cmd/fidelity counts <"$work/counts"
