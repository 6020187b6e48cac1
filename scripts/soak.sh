#!/usr/bin/env bash
# soak.sh — does the load generator's memory stay flat?
#
# 1. Requests: drives 1 million and then 10 million no-op requests through bench's
#    engine (pacer, workers, recorder; closed and open loop), each count in a process
#    of its own, and prints each process's peak RSS. Bounded histograms should make
#    the 10M peak about the 1M one (the per-second intervals add a few KiB a second).
# 2. Watchers: runs `etcdperf bench watch` with WATCHERS watchers (10,000) over 100
#    streams on 100 keys, at a modest put rate, against the embedded etcd (a separate
#    process, so the RSS is the generator's own), for a short and a 4x longer window,
#    and prints the generator's peak RSS of each: more time must not mean more memory.
#
# Exits 1 when a longer run (10x the requests, 4x the time) takes more than LIMIT_PCT
# (default 25) percent more memory than the shorter one.
#
# usage: scripts/soak.sh
# env:   REQUESTS_SMALL=1000000 REQUESTS_LARGE=10000000 WATCHERS=10000 WATCH_RATE=50
#        WATCH_SHORT=5s WATCH_LONG=20s LIMIT_PCT=25
set -euo pipefail

small=${REQUESTS_SMALL:-1000000}
large=${REQUESTS_LARGE:-10000000}
watchers=${WATCHERS:-10000}
watch_rate=${WATCH_RATE:-50}
watch_short=${WATCH_SHORT:-5s}
watch_long=${WATCH_LONG:-20s}
limit_pct=${LIMIT_PCT:-25}
repo=$(cd "$(dirname "$0")/.." && pwd)

command -v jq >/dev/null || { echo "soak: jq not found (apt-get install -y jq)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$repo" && go test -c -o "$work/bench.test" ./bench && go build -o "$work/etcdperf" ./cmd/etcdperf)

fail=0
# grew NAME SMALL LARGE: fail when LARGE exceeds SMALL by more than limit_pct percent.
grew() {
	local pct
	pct=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')
	echo "  $1: ${pct}% more memory for the longer run"
	if awk -v p="$pct" -v l="$limit_pct" 'BEGIN { exit !(p > l) }'; then
		echo "  FAIL: over ${limit_pct}%" >&2
		fail=1
	fi
}

echo "== requests through the engine (no-op op, 16 workers)"
for loop in ClosedLoop OpenLoop; do
	declare -A rss=()
	for n in "$small" "$large"; do
		line=$(cd "$repo/bench" && SOAK_REQUESTS=$n "$work/bench.test" -test.run '^$' -test.bench "^BenchmarkSoak${loop}\$" -test.benchtime 1x | grep "^BenchmarkSoak")
		mib=$(awk '{ for (i = 1; i < NF; i++) if ($(i+1) == "maxRSS-MiB") print $i }' <<<"$line")
		rps=$(awk '{ for (i = 1; i < NF; i++) if ($(i+1) == "req/s") print $i }' <<<"$line")
		rss[$n]=$mib
		printf '  %-10s %11d requests: max RSS %6.1f MiB at %.0f req/s\n' "$loop" "$n" "$mib" "$rps"
	done
	grew "$loop" "${rss[$small]}" "${rss[$large]}"
done

echo "== $watchers watchers, $watch_rate puts/s, embedded etcd"
declare -A wrss=()
for d in "$watch_short" "$watch_long"; do
	out=$(cd "$work" && ./etcdperf bench watch --watchers "$watchers" --streams 100 --watched-keys 100 --rate "$watch_rate" \
		--duration "$d" --results-dir "$work/runs" -w json 2>"$work/stderr") || {
		code=$?
		# 1 (a finding failed) and 3 (rate missed) still measured; anything else did not run.
		if [[ $code != 1 && $code != 3 ]]; then cat "$work/stderr" >&2; exit 2; fi
	}
	mib=$(jq '.client.max_rss_bytes / 1048576' <<<"$out")
	wrss[$d]=$mib
	jq -r --arg d "$d" '.ops[] | select(.op == "watch") | "  \($d): \(.events) events to \(.watchers) watchers, \(.missed_events) missed, p99 \(.latency_ms.p99) ms"' <<<"$out"
	printf '  %s: generator max RSS %.1f MiB\n' "$d" "$mib"
done
grew "watchers $watch_short vs $watch_long" "${wrss[$watch_short]}" "${wrss[$watch_long]}"
exit $fail
