#!/bin/sh
# assemble.sh PARTS_DIR - joins the JSON parts run_bench.sh wrote (one per
# step; `make bench-compiler` writes only some) into one object keyed by
# part name, and derives the figures with tests/bench/results.jq.  Writes
# results.json to stdout.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
for f in "$1"/*.json; do
  jq -c --arg k "$(basename "$f" .json)" '{($k): .}' "$f"
done | jq -s 'add' | jq -f "$HERE/results.jq"
