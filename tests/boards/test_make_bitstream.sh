#!/bin/sh
# test_make_bitstream.sh - `make bitstream` end to end, without Vivado:
#
#   1. with no Vivado on PATH it stops with the install message, naming the
#      version the flows were written for, and builds nothing;
#   2. with the stand-ins of tests/boards/fake-tools on PATH (the Tcl runs
#      under tclsh with Vivado's commands stubbed; v++ only checks its
#      inputs), every board's make plumbing runs: staging of the RTL,
#      argument order, the overlay, the v++ link.
#
# Outputs go to a temporary BOARD_OUT, never to build/bitstreams.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "test_make_bitstream: $*" >&2; status=1; }
MAKE=${MAKE:-make}

# 1. The stop message.  PATH keeps the system tools, minus anything Xilinx.
nopath=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i xilinx | paste -sd: -)
if command -v vivado > /dev/null 2>&1 && [ "$(PATH=$nopath command -v vivado)" ]; then
  echo "test_make_bitstream: vivado is installed system-wide; skipping the stop-message check"
else
  PATH=$nopath $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD=pynq-z1 BOARD_OUT="$tmp/none" > "$tmp/stop.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] || fail "make bitstream without Vivado succeeded"
  grep -q "Vivado not found on PATH; nothing was built" "$tmp/stop.log" || fail "no stop message: $(cat "$tmp/stop.log")"
  grep -q "Vivado 2022.2" "$tmp/stop.log" || fail "stop message does not name the Vivado version"
  [ ! -e "$tmp/none" ] || fail "make bitstream without Vivado created $tmp/none"
  PATH=$nopath $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD=no-such-board > "$tmp/bad.log" 2>&1 &&
    fail "make bitstream accepted an unknown board"
  grep -q "unknown board 'no-such-board'" "$tmp/bad.log" || fail "unknown board not named: $(cat "$tmp/bad.log")"
fi

# 2. Every board through the stand-ins.
fake=$(cd tests/boards/fake-tools && pwd)
for build in bitstreams/*/build.tcl; do
  board=$(basename "$(dirname "$build")")
  out=$tmp/out/$board
  if ! PATH=$fake:$PATH $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD="$board" BOARD_OUT="$out" > "$tmp/$board.log" 2>&1; then
    tail -n 20 "$tmp/$board.log" >&2
    fail "$board: make bitstream failed with the stand-in tools"
    continue
  fi
  if [ -f "bitstreams/$board/loom.dtso" ]; then
    want="loom.bit loom.bit.bin loom.hwh loom.xsa loom.dtbo src/loom_cfg.vh src/loom_vitis_top.v src/loom_top.v"
  else
    want="loom.xo loom.xclbin src/loom_cfg.vh"
  fi
  for f in $want; do
    [ -f "$out/$f" ] || fail "$board: $f missing from BOARD_OUT"
  done
  cfg=$(awk -v b="$board" '$1 == b { print $2 }' "${BUILD:-build}/gen/boards/boards.txt")
  grep -q "^\`define LOOM_CFG_NAME \"$cfg\"$" "$out/src/loom_cfg.vh" ||
    fail "$board: staged loom_cfg.vh is not configuration $cfg"
done
[ $status -eq 0 ] && echo "test_make_bitstream: stop message and the make plumbing of every board"
exit $status
