#!/usr/bin/env bash
# compare-fio.sh — does `etcdperf disk --pattern fio` agree with fio on the same disk?
#
# Runs fio's etcd job and etcdperf's fio pattern on the same folder, alternating, RUNS times
# each, and compares the medians: fdatasync p50 within ±20%, p99 within ±35%, IOPS within ±20%,
# and etcdperf's wall time at most 1.2× fio's. Exits 0 when all hold, 1 otherwise.
#
# usage: scripts/compare-fio.sh [DIR]      (DIR defaults to a temp folder under the current one)
# env:   RUNS=3 SIZE=22m BS=2300 FIO=fio ETCDPERF=<binary; built from this repo when unset>
set -euo pipefail

runs=${RUNS:-3}
size=${SIZE:-22m}
bs=${BS:-2300}
fio=${FIO:-fio}
repo=$(cd "$(dirname "$0")/.." && pwd)

for tool in "$fio" jq awk; do
	command -v "$tool" >/dev/null || { echo "compare-fio: $tool not found (apt-get install -y fio jq)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/compare-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT
dir=${1:-}
if [[ -z $dir ]]; then
	dir=$(mktemp -d "$PWD/.compare-fio-dir.XXXXXX")
	trap 'rm -rf "$work" "$dir"' EXIT
fi

etcdperf=${ETCDPERF:-}
if [[ -z $etcdperf ]]; then
	etcdperf=$work/etcdperf
	(cd "$repo" && go build -o "$etcdperf" ./cmd/etcdperf)
fi

now() { date +%s.%N; }

# Each line of results: tool p50_ms p99_ms iops wall_s
results=$work/results
for ((i = 1; i <= runs; i++)); do
	jobdir=$(mktemp -d "$dir/fio.XXXXXX")
	t0=$(now)
	"$fio" --rw=write --ioengine=sync --fdatasync=1 --directory="$jobdir" --size="$size" --bs="$bs" \
		--name=etcdperf --output-format=json >"$work/fio.json"
	t1=$(now)
	rm -rf "$jobdir"
	jq -r --arg wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
		'.jobs[0] | "fio \(.sync.lat_ns.percentile["50.000000"]/1e6) \(.sync.lat_ns.percentile["99.000000"]/1e6) \(.write.iops) \($wall)"' \
		"$work/fio.json" >>"$results"

	t0=$(now)
	"$etcdperf" disk --pattern fio --dir "$dir" --size "$size" --block-size "$bs" -w json \
		--results-dir "$work/runs" >"$work/etcdperf.json" || [[ $? == 1 ]] # exit 1 is a failed grade, still a result
	t1=$(now)
	jq -r --arg wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
		'"etcdperf \(.fdatasync_ms.p50) \(.fdatasync_ms.p99) \(.iops) \($wall)"' "$work/etcdperf.json" >>"$results"
done

echo "run  tool      fdatasync_p50_ms  fdatasync_p99_ms  iops      wall_s"
awk '{ n[$1]++; printf "%-4d %-9s %-17.3f %-17.3f %-9.0f %.2f\n", n[$1], $1, $2, $3, $4, $5 }' "$results"

# Medians per tool, then the agreement checks.
awk -v runs="$runs" '
function median(tool, col,    a, n, i, j, t) {
	n = 0
	for (i = 1; i <= NR; i++) if (tool_of[i] == tool) a[++n] = val[i, col]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function check(name, ours, theirs, tol,    d, ok) {
	d = theirs ? (ours - theirs) / theirs * 100 : 0
	ok = (d <= tol && d >= -tol)
	printf "%-18s fio %-10.3f etcdperf %-10.3f diff %+6.1f%% (±%d%%)  %s\n", name, theirs, ours, d, tol, ok ? "ok" : "OUT OF RANGE"
	return ok
}
{ tool_of[NR] = $1; for (c = 2; c <= 5; c++) val[NR, c] = $c }
END {
	print ""
	print "medians of " runs " runs each:"
	ok = check("fdatasync p50 ms", median("etcdperf", 2), median("fio", 2), 20)
	ok = check("fdatasync p99 ms", median("etcdperf", 3), median("fio", 3), 35) && ok
	ok = check("IOPS", median("etcdperf", 4), median("fio", 4), 20) && ok
	fw = median("fio", 5); ew = median("etcdperf", 5)
	wall = ew <= 1.2 * fw
	printf "%-18s fio %-10.2f etcdperf %-10.2f ratio %.2f (≤ 1.20)  %s\n", "wall time s", fw, ew, ew / fw, wall ? "ok" : "TOO SLOW"
	exit !(ok && wall)
}' "$results"
