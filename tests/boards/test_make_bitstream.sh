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
# 3. CONFIG=FILE: a configuration file replaces a Zynq board's own; the
#    overlay gets its clock; a Vitis board refuses it.
LOOM=${LOOM:-${BUILD:-build}/bin/loom}
"$LOOM" config show default | sed -e 's/^name = default/name = kv_file/' -e 's/^clock_mhz = 100/clock_mhz = 150/' \
  > "$tmp/kv.cfg"
out=$tmp/out/kv260-file
if PATH=$fake:$PATH $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD=kv260 CONFIG="$tmp/kv.cfg" \
    BOARD_OUT="$out" > "$tmp/kv-file.log" 2>&1; then
  grep -q '^`define LOOM_CFG_NAME "kv_file"$' "$out/src/loom_cfg.vh" || fail "kv260 CONFIG=FILE: staged loom_cfg.vh is not the file's"
  grep -q "configuration kv_file" "$out/vivado.log" 2>/dev/null || grep -q "configuration kv_file" "$tmp/kv-file.log" ||
    fail "kv260 CONFIG=FILE: the flow did not take the file's parameters"
  grep -q "assigned-clock-rates = <150000000>" "$out/loom.dtso" || fail "kv260 CONFIG=FILE: overlay clock is not 150 MHz"
  [ -f "$out/loom.dtbo" ] || fail "kv260 CONFIG=FILE: no loom.dtbo"
else
  tail -n 20 "$tmp/kv-file.log" >&2
  fail "kv260: make bitstream CONFIG=FILE failed with the stand-in tools"
fi
PATH=$fake:$PATH $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD=u250 CONFIG="$tmp/kv.cfg" \
  BOARD_OUT="$tmp/out/u250-file" > "$tmp/u250-file.log" 2>&1 && fail "u250 accepted CONFIG=FILE"
grep -q "CONFIG=FILE is for the Zynq boards" "$tmp/u250-file.log" || fail "u250 CONFIG=FILE: no message: $(tail -n 3 "$tmp/u250-file.log")"
sed 's/^block_in = 16/block_in = 64/; s/^block_out = 16/block_out = 64/' "$tmp/kv.cfg" > "$tmp/big.cfg"
PATH=$fake:$PATH $MAKE --no-print-directory BUILD="${BUILD:-build}" bitstream BOARD=pynq-z1 CONFIG="$tmp/big.cfg" \
  BOARD_OUT="$tmp/out/big" > "$tmp/big.log" 2>&1 && fail "pynq-z1 accepted a configuration that does not fit"
grep -q "key 'part': DSP budget" "$tmp/big.log" || fail "pynq-z1 CONFIG=FILE too big: no budget message"

[ $status -eq 0 ] && echo "test_make_bitstream: stop message and the make plumbing of every board"
exit $status
