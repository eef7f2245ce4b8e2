#!/bin/sh
# test_tcl_flows.sh - the Vivado/Vitis Tcl of every board, without Vivado:
#
#   1. tcl_syntax.tcl parses each script command by command (and each proc
#      body), as `source` would;
#   2. tcl_dryrun.tcl runs each board's build.tcl under tclsh with Vivado's
#      commands stubbed, once without and once with board files installed,
#      and checks the part, PL clock, addresses, interrupt, kernel packaging
#      and output files against the board's generated parameters.
set -u
BUILD=${BUILD:-build}
gen=$BUILD/gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

tclsh tests/boards/tcl_syntax.tcl bitstreams/*/*.tcl tests/boards/*.tcl || status=1

# Stage sources the way `make bitstream` does (the stubs check they exist).
mkdir -p "$tmp/src"
cp hw/rtl/*.v bitstreams/common/loom_vitis_top.v "$gen/loom_isa.vh" "$tmp/src/"
cp "$gen/loom_cfg_default.vh" "$tmp/src/loom_cfg.vh"

n=0
for build in bitstreams/*/build.tcl; do
  board=$(basename "$(dirname "$build")")
  for variant in bare board-files; do
    out=$tmp/out/$board-$variant
    if tclsh tests/boards/tcl_dryrun.tcl "$board" "$gen" "$tmp/src" "$out" "$variant" > "$tmp/log" 2>&1; then
      n=$((n + 1))
    else
      cat "$tmp/log" >&2
      echo "test_tcl_flows: $board ($variant) failed" >&2
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "test_tcl_flows: syntax clean, $n dry runs passed"
exit $status
