#!/usr/bin/env bash
# Times the default catalogue ("ctxleak run", 50 MiB payload) and checks the
# targets: at most 15 s wall per run, no child above 2 x payload + 64 MiB
# peak RSS, every verdict (the holders named at each phase included) as
# expected. Extra arguments go to the timer:
#
#   bench/run-catalogue.sh                  # one run
#   bench/run-catalogue.sh -runs 20         # the 20/20 verdict check
#   bench/run-catalogue.sh -payload 512KiB  # other payload sizes
#   bench/run-catalogue.sh -holders=false   # without heap dumps and holders
#   bench/run-catalogue.sh -ldflags '-s -w' # stripped, as go run builds it
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/catalogue "$@"
