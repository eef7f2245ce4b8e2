#!/bin/sh
# test_wrapper.sh - bitstreams/common/loom_vitis_top.v still wraps loom_top:
# Verilator lints the wrapper with the RTL for every configuration (the bus
# width changes the master's ports), and fails on any error or on a warning
# in the wrapper itself.  A port renamed in hw/rtl/loom_top.v shows up here
# rather than in a Vivado run.  `interrupt` is the name Vitis requires,
# whatever Verilator thinks of it as a C++ word.
set -u
BUILD=${BUILD:-build}
gen=$BUILD/gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
rtl=$(cat hw/rtl/loom_rtl.f)
for vh in "$gen"/loom_cfg_*.vh; do
  cfg=$(basename "$vh" .vh)
  cfg=${cfg#loom_cfg_}
  mkdir -p "$tmp/$cfg"
  cp "$vh" "$tmp/$cfg/loom_cfg.vh"
  # shellcheck disable=SC2086
  verilator --lint-only -Wall -Wno-SYMRSVDWORD -Wno-fatal -I"$tmp/$cfg" -I"$gen" \
    --top-module loom_vitis_top bitstreams/common/loom_vitis_top.v $rtl > "$tmp/$cfg.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] || grep -q '^%Error' "$tmp/$cfg.log" || grep -q '^%Warning.*loom_vitis_top\.v' "$tmp/$cfg.log"; then
    grep -E '^%(Error|Warning.*loom_vitis_top\.v)' "$tmp/$cfg.log" | head -n 20 >&2
    echo "test_wrapper: loom_vitis_top does not lint cleanly with configuration $cfg" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "test_wrapper: loom_vitis_top lints with every configuration"
exit $status
