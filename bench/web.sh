#!/usr/bin/env bash
# Measures the web view of "ctxleak holders --http" on the benchmark dump
# (bench/heapgen: N linked 80-byte nodes, a map holding every other one, a
# 50 MiB payload held through a context): bench/webload starts ctxleak,
# waits for the URL (the analysis has finished), and times over real HTTP
# the first page, the other pages, 200 node expansions of the dominator
# tree, the widest node's next pages, and two object pages. Targets (issue
# 13): the first page within 1 s of the analysis finishing, every expansion
# within 200 ms.
#
# Usage: bench/web.sh                 # 15M nodes
#        NODES=1500000 bench/web.sh
#
# The dump is written to $OUT (default bench/out, ignored by git) as
# bench/holders.sh names it, and reused; delete it when done.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/out}
n=${NODES:-15000000}
mkdir -p "$out"
go build -o "$out/heapgen" ./bench/heapgen
go build -o "$out/ctxleak" ./cmd/ctxleak
go build -o "$out/webload" ./bench/webload
dump="$out/heap-$n.dump"
exe="$out/heap-$n.heapgen"
if [ ! -f "$dump" ] || [ ! -f "$exe" ]; then
	rm -f "$dump" "$exe"
	"$out/heapgen" -n "$n" -o "$dump" >/dev/null
	cp "$out/heapgen" "$exe"
fi
cat "$dump" >/dev/null # from the page cache
"$out/webload" -ctxleak "$out/ctxleak" -dump "$dump" -binary "$exe"
