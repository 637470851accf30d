#!/usr/bin/env bash
# Measures reading a heap dump and building its object graph (heapdump.Load):
# writes benchmark dumps with bench/heapgen (N linked 80-byte nodes, a map
# holding half of them, a 50 MiB payload held through a context by a blocked
# goroutine), then runs bench/heapread on each RUNS times and prints the
# median wall time, user+sys CPU time and peak RSS (GNU time).
#
# Usage: bench/heapread.sh            # 1.5M, 3M and 15M nodes, 5 runs each
#        NODES="3000000" RUNS=9 bench/heapread.sh
#
# Dumps go to $OUT (default bench/out, ignored by git), mode 0600, and are
# reused on later runs; the three default ones take about 2.5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${OUT:-bench/out}
runs=${RUNS:-5}
nodes=${NODES:-"1500000 3000000 15000000"}
mkdir -p "$out"
go build -o "$out/heapgen" ./bench/heapgen
go build -o "$out/heapread" ./bench/heapread

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf '%-10s %-10s %-10s %-9s %-9s %-9s\n' nodes objects dump wall cpu peak_rss
for n in $nodes; do
	dump="$out/heap-$n.dump"
	if [ ! -f "$dump" ]; then
		"$out/heapgen" -n "$n" -o "$dump" >/dev/null
	fi
	cat "$dump" >/dev/null # from the page cache, as the runs below
	: >"$out/times"
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$out/heapread" "$dump" >"$out/result"
		cat "$out/time" >>"$out/times"
	done
	objects=$(awk '/^objects/ {print $2}' "$out/result")
	size=$(stat -L -c %s "$dump")
	wall=$(awk '{print $1}' "$out/times" | median)
	cpu=$(awk '{print $2 + $3}' "$out/times" | median)
	rss=$(awk '{print $4}' "$out/times" | median)
	printf '%-10s %-10s %-10s %-9s %-9s %-9s\n' "$n" "$objects" "$((size / 1000000))MB" "${wall}s" "${cpu}s" "$((rss / 1024))MiB"
done
