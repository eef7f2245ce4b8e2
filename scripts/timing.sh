#!/bin/sh
# scripts/timing.sh CONFIG [BOARD] - `make timing CONFIG=NAME [BOARD=...]`:
# the timing estimate of one configuration (docs/rtl.md "Timing").
#
# With a board (BOARD, or else the first board of bitstreams/boards.def that
# has CONFIG on the configuration's own part, or else any board that has
# CONFIG), this is `make board-estimates` for that board alone: the same
# Yosys run, cached in BUILD/boards/<family>-<config>[-uram]/, and the same
# check of the board's clock.  A configuration no board uses (tiny) goes
# through the same script's CONFIG=NAME run against its own part.  Then loomsta
# prints the worst paths with the first three broken down cell by cell; the
# report stays beside the netlist (timing-<board>.txt).
#
# Exit status: 0, or 1 when Yosys or loomsta fail or the estimated Fmax is
# below the configuration's clock.
set -u
BUILD=${BUILD:-build}
GEN=${GEN:-$BUILD/gen}
LOOMSTA=${LOOMSTA:-$BUILD/tools/loomsta}
LOOM=${LOOM:-$BUILD/bin/loom}
LOOMGEN=${LOOMGEN:-$BUILD/tools/loomgen}
[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: scripts/timing.sh CONFIG [BOARD]" >&2; exit 2; }
cfg=$1 board=${2:-}
boards=$GEN/boards/boards.txt
vh=$GEN/loom_cfg_$cfg.vh
tcl=$GEN/loom_cfg_$cfg.tcl
[ -f "$vh" ] && [ -f "$tcl" ] || { echo "timing: no configuration $cfg ($vh missing; make gen)" >&2; exit 2; }
[ -f "$boards" ] || { echo "timing: $boards missing (make board-files)" >&2; exit 2; }
part=$(sed -n 's/.* part \([^] ]*\).*/\1/p' "$tcl")

if [ -n "$board" ]; then
  line=$(awk -v b="$board" '$1 == b' "$boards")
  [ -n "$line" ] || { echo "timing: no board $board in bitstreams/boards.def" >&2; exit 2; }
  set -- $line
  [ "$2" = "$cfg" ] || { echo "timing: board $board has configuration $2, not $cfg" >&2; exit 2; }
else
  board=$(awk -v c="$cfg" -v p="$part" '$2 == c && $4 == p { print $1; exit }' "$boards")
  [ -n "$board" ] || board=$(awk -v c="$cfg" '$2 == c { print $1; exit }' "$boards")
fi

if [ -n "$board" ]; then
  echo "timing: configuration $cfg on board $board"
  CONFIG= ESTIMATE_BOARDS=$board BUILD=$BUILD GEN=$GEN LOOMSTA=$LOOMSTA \
    bitstreams/common/yosys-estimate.sh $(cat hw/rtl/loom_rtl.f) > "$BUILD/timing-$board.log" 2>&1
  rc=$?
  grep -v '^yosys-estimate: [^:]*: \(up to date\|synth_xilinx\|[0-9]* s\)' "$BUILD/timing-$board.log" | grep '^yosys-estimate' >&2
  set -- $(awk -v b="$board" '$1 == b' "$boards")
  key=$5-$2$( [ "$6" = 1 ] && echo -uram)
  report=$BUILD/boards/$key/timing-$board.txt
  [ -f "$report" ] || { echo "timing: no report (see $BUILD/timing-$board.log)" >&2; exit 1; }
  cat "$report"
  [ $rc -eq 0 ] || exit 1
  exit 0
fi

# No board has this configuration: `make board-estimates CONFIG=NAME`'s run
# against the configuration's own part (its fit, UltraRAM if the part needs
# it, the clock check), cached in BUILD/boards/config-<config>-<family>*/.
echo "timing: configuration $cfg (no board) on its part $part"
CONFIG=$cfg BUILD=$BUILD GEN=$GEN LOOM=$LOOM LOOMGEN=$LOOMGEN LOOMSTA=$LOOMSTA \
  bitstreams/common/yosys-estimate.sh $(cat hw/rtl/loom_rtl.f) > "$BUILD/timing-$cfg.log" 2>&1
rc=$?
grep '^yosys-estimate: .*Fmax\|does not fit\|failed' "$BUILD/timing-$cfg.log" >&2
# The report of this run, as yosys-estimate.sh names it (not the newest file
# of a matching name: an earlier run's, left when this one stops before
# loomsta, or another family's when the configuration's part changed).
report=$(sed -n 's/^yosys-estimate: .*; report \(.*\))$/\1/p' "$BUILD/timing-$cfg.log")
[ -n "$report" ] && [ -f "$report" ] || { echo "timing: no report (see $BUILD/timing-$cfg.log)" >&2; exit 1; }
cat "$report"
[ $rc -eq 0 ] || exit 1
