#!/bin/sh
# regen.sh rebuilds the per-Go-version heap dump fixtures: for each Go
# release below it builds fixture/ (its own module, "go 1.22") with that
# toolchain, runs it, and stores the dump and the executable that wrote it,
# gzipped, as go1.NN/dump.gz and go1.NN/binary.gz.
#
# Usage (from anywhere):   sh testdata/regen.sh [go1.NN.P ...]
#
# With no arguments it rebuilds every version in VERSIONS. The toolchains
# come through the module proxy (GOTOOLCHAIN=go1.NN.P), so the first run
# downloads them. Then regenerate the goldens from the new dumps:
#
#   go test ./cmd/ctxleak -run TestGoVersions -update
#
# and check the reports (go1.NN/*.golden) still name the three holders.
set -eu

VERSIONS="go1.22.12 go1.23.12 go1.24.13 go1.25.14 go1.26.11 go1.27.3"

here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] && VERSIONS="$*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for v in $VERSIONS; do
	dir="$here/$(echo "$v" | cut -d. -f1,2)"   # go1.22.12 -> go1.22
	mkdir -p "$dir"
	echo "$v -> $dir" >&2
	# -trimpath and -buildvcs=false keep the checkout's path and commit out
	# of the binary; symbols and DWARF stay, the analysis needs them.
	(cd "$here/fixture" && GOTOOLCHAIN="$v" GOWORK=off GOFLAGS= CGO_ENABLED=0 \
		go build -trimpath -buildvcs=false -o "$tmp/binary" .)
	rm -f "$tmp/dump"
	"$tmp/binary" "$tmp/dump"
	gzip -9 -n -c "$tmp/binary" >"$dir/binary.gz"
	gzip -9 -n -c "$tmp/dump" >"$dir/dump.gz"
	echo "$v" >"$dir/VERSION"
	rm -f "$tmp/binary" "$tmp/dump"
done
