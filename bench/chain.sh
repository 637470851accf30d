#!/usr/bin/env bash
# Measures "ctxleak holders" on the chain of issue 38: the global main.chain
# holds N objects of M bytes, each pointing to the next (heap/testdata/piles
# pattern chain:M), so that every object retains all those after it.
# Targets (issue 38, "Linear on chains"):
#   - wall time at most 2 s + 10 s per GB of dump,
#   - peak RSS (GNU time %M) at most 256 MiB + 1.5 x the dump's size,
#   - no group retains more than the live heap (the JSON report's
#     retained_bytes against live_bytes).
# Each of RUNS runs (default 3) is measured; the median is compared. Page
# cache warm after the first run.
#
# Usage: bench/chain.sh                       # 6,000 x 1 MiB: a 6 GB dump
#        N=20000 M=4096 RUNS=5 OUT=/tmp/chain bench/chain.sh
#
# The dump goes to $OUT (default bench/out, ignored by git), mode 0600, with
# the piles executable that wrote it, and is reused; writing the default one
# needs about 6 GB of memory and of disk. It exits 1 when a target is missed.
#
# Measured figures are in the commit messages that change them.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${OUT:-bench/out}
runs=${RUNS:-3}
n=${N:-6000}
m=${M:-1048576}
mkdir -p "$out"
go build -o "$out/piles" ./heap/testdata/piles
go build -o "$out/ctxleak" ./cmd/ctxleak

dump="$out/chain-$n-$m.dump"
if [ ! -f "$dump" ]; then
	"$out/piles" "chain:$m" "$n" "$dump" >/dev/null
fi
size=$(stat -c %s "$dump")

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

walls=() rss=() cpu=()
for _ in $(seq "$runs"); do
	rc=0
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" \
		"$out/ctxleak" holders "$dump" --binary "$out/piles" --min-size "$m" --format json \
		>"$out/chain.json" 2>"$out/stderr" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "ctxleak holders exited $rc:" >&2
		cat "$out/stderr" >&2
		exit 1
	fi
	read -r w u s r < <(tail -n 1 "$out/time") # after "Command exited with non-zero status 1"
	walls+=("$w") rss+=("$r") cpu+=("$(echo "$u + $s" | bc)")
done
wall=$(printf '%s\n' "${walls[@]}" | median)
peak=$(printf '%s\n' "${rss[@]}" | median)
c=$(printf '%s\n' "${cpu[@]}" | median)

limit=$(echo "2 + 10 * $size / 1000000000" | bc -l)
memlimit=$(((256 << 20) + size * 3 / 2))
over=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(g["retained_bytes"] > d["live_bytes"] for g in d["groups"]))' "$out/chain.json")

printf 'chain %d x %d B, dump %d MB: wall %.2fs (target %.1fs), cpu %.2fs, peak RSS %d MiB (target %d MiB), groups over the live heap: %d\n' \
	"$n" "$m" $((size / 1000000)) "$wall" "$limit" "$c" $((peak / 1024)) $((memlimit >> 20)) "$over"
fail=0
if [ "$(echo "$wall > $limit" | bc)" -eq 1 ]; then
	echo "wall time over the target" >&2
	fail=1
fi
if [ $((peak * 1024)) -gt "$memlimit" ]; then
	echo "peak RSS over the target" >&2
	fail=1
fi
if [ "$over" -ne 0 ]; then
	echo "a group retains more than the live heap" >&2
	fail=1
fi
exit "$fail"
