#!/bin/sh
# hw/synth/synth.sh CONFIG GEN OUTDIR - Yosys synth_xilinx of loom_top.
# CONFIG is a configuration name or a configuration file (whose header
# `loom config vh` writes; LOOM names the loom binary).
#
# Prints the resources Yosys maps to (LUTs, with distributed RAM and shift
# registers counted in LUTs; flip-flops; DSP48E1; RAMB36E1; RAMB18E1) and,
# for the configurations sized for the PYNQ-Z1/Z2 (part xc7z020 in
# hw/spec/loom_configs.def: tiny, default), fails when they exceed the
# xc7z020: 53,200 LUTs, 106,400 FFs, 220 DSP48E1, 140 RAMB36E1 (a
# RAMB18E1 counts as half).  The full log is OUTDIR/yosys.log, the summary
# OUTDIR/utilization.txt.
set -eu
cfg=$1
gen=$2
out=$3
mkdir -p "$out"
LOOM_RTL_FILES=$(cat hw/rtl/loom_rtl.f | tr '\n' ' ')
LOOM_INC="$gen/cfg_$cfg $gen"
if [ -f "$cfg" ]; then
  # a configuration file (docs/configs.md): its header from `loom config vh`
  mkdir -p "$out/inc"
  "${LOOM:-build/bin/loom}" config vh "$cfg" > "$out/inc/loom_cfg.vh" || exit 1
  LOOM_INC="$out/inc $gen"
fi
LOOM_SYNTH_OUT=$out
export LOOM_RTL_FILES LOOM_INC LOOM_SYNTH_OUT
start=$(date +%s)
if ! yosys -q -l "$out/yosys.log" -c hw/synth/loom_synth.tcl > /dev/null 2>&1; then
  grep -i "error" "$out/yosys.log" | head -20
  echo "synth $cfg: Yosys failed (see $out/yosys.log)"
  exit 1
fi
secs=$(( $(date +%s) - start ))

# The last "design hierarchy" section of `stat` holds the totals.
count() {
  awk -v cell="$1" '/=== design hierarchy ===/ { n = 0; f = 1 } f && $1 == cell { n = $2 } END { print n + 0 }' \
    "$out/stat.txt"
}
lut=0
for c in LUT1 LUT2 LUT3 LUT4 LUT5 LUT6; do lut=$((lut + $(count $c))); done
lutram=$(( 4 * $(count RAM32M) + 4 * $(count RAM64M) + 2 * $(count RAM32X1D) + 2 * $(count RAM64X1D) ))
srl=$(( $(count SRL16E) + $(count SRLC32E) ))
ff=0
for c in FDRE FDSE FDCE FDPE; do ff=$((ff + $(count $c))); done
dsp=$(count DSP48E1)
b36=$(count RAMB36E1)
b18=$(count RAMB18E1)
luts=$((lut + lutram + srl))
bram2=$((2 * b36 + b18))   # in RAMB18 units

{
  echo "config $cfg, Yosys $(yosys -V | awk '{print $2}') synth_xilinx -family xc7, ${secs}s"
  printf "%-10s %8s %10s\n" resource used "xc7z020"
  printf "%-10s %8s %10s   (logic %d, distributed RAM %d, shift registers %d)\n" LUT "$luts" 53200 "$lut" "$lutram" "$srl"
  printf "%-10s %8s %10s\n" FF "$ff" 106400
  printf "%-10s %8s %10s\n" DSP48E1 "$dsp" 220
  printf "%-10s %8s %10s\n" RAMB36E1 "$b36" 140
  printf "%-10s %8s %10s   (%d.%d RAMB36 equivalents in all)\n" RAMB18E1 "$b18" 280 $((bram2 / 2)) $((5 * (bram2 % 2)))
} | tee "$out/utilization.txt"

case $cfg in
  tiny|default)
    fail=0
    [ "$luts" -le 53200 ] || { echo "synth $cfg: $luts LUTs exceed the xc7z020's 53,200"; fail=1; }
    [ "$ff" -le 106400 ] || { echo "synth $cfg: $ff FFs exceed the xc7z020's 106,400"; fail=1; }
    [ "$dsp" -le 220 ] || { echo "synth $cfg: $dsp DSP48E1 exceed the xc7z020's 220"; fail=1; }
    [ "$bram2" -le 280 ] || { echo "synth $cfg: block RAM exceeds the xc7z020's 140 RAMB36E1"; fail=1; }
    [ "$fail" = 0 ] || exit 1
    echo "synth $cfg: fits the xc7z020"
    ;;
  *)
    echo "synth $cfg: no capacity check (not an xc7z020 configuration; see loom config check," \
      "make board-estimates CONFIG=...)"
    ;;
esac
