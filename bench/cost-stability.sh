#!/usr/bin/env bash
# Runs "ctxleak cost" three times (or RUNS times) with the given flags and
# checks that every figure is stable: each run's median inside every other
# run's printed 95% interval (bench/coststable). Prints the load average
# before and after, each run's wall time, and the figures that are not.
#
#   bench/cost-stability.sh              # the default run, three times
#   bench/cost-stability.sh --quick
#   RUNS=5 bench/cost-stability.sh --count 10
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d /tmp/ctxleak-cost-stability.XXXX)}
go build -o "$out/ctxleak" ./cmd/ctxleak
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
files=()
for i in $(seq 1 "${RUNS:-3}"); do
  s=$(date +%s.%N)
  "$out/ctxleak" cost --format json "$@" > "$out/run$i.json"
  e=$(date +%s.%N)
  printf 'run %d: %.1f s\n' "$i" "$(echo "$e - $s" | bc)"
  files+=("$out/run$i.json")
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./bench/coststable "${files[@]}"
