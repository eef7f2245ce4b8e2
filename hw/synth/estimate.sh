#!/bin/sh
# hw/synth/estimate.sh - one Yosys synth_xilinx of loom_top, and the
# resource totals of its result.  Shared by the board estimates
# (bitstreams/common/yosys-estimate.sh, `make board-estimates`) and the
# design-space exploration (`loom dse`, driver/cli/dse_synth.c), which cache
# the results; this script only runs and counts.
#
#   hw/synth/estimate.sh CFG.vh FAMILY "URAM BUFFERS" OUTDIR
#       synthesizes with CFG.vh as loom_cfg.vh for FAMILY (xc7, xcup), with
#       ram_style "ultra" on the listed loom_top buffer instances (e.g.
#       "u_inp u_acc"; "" for none), into OUTDIR: yosys.log, stat.txt and
#       resources.txt ("lut ff dsp bram36 uram").  Run from the top of the
#       tree; GEN (default build/gen) holds loom_isa.vh, LOOM_RTL_FILES
#       overrides hw/rtl/loom_rtl.f's list; LOOM_JSON=1 also writes the
#       flattened netlist.json for the timing estimate (scripts/loomsta.c).
#   hw/synth/estimate.sh --count STAT
#       prints "lut ff dsp bram36 uram" for a Yosys `stat` output:
#
#   LUT     LUT1..LUT6 plus the LUTs inside LUT RAMs and shift registers
#   FF      FDRE, FDSE, FDCE, FDPE
#   DSP     DSP48E1 / DSP48E2
#   BRAM36  RAMB36 + RAMB18 / 2
#   URAM    URAM288
#
# (the last "design hierarchy" section when the design kept its hierarchy,
# else the one flattened module).  A buffer goes to UltraRAM through the
# module each instance uses, so the design keeps its hierarchy, exactly as
# the Vivado flow's XDC gives it RAM_STYLE ULTRA; Yosys's -uram alone picks
# block RAM by cost and would not match.
set -u

count() {
  awk '
    /=== design hierarchy ===/ { split("", n); hier = 1 }
    /Number of cells:/ { if (!hier) split("", n); on = 1; next }
    on && NF == 2 && $2 ~ /^[0-9]+$/ { n[$1] += $2 }
    END {
      lut = n["LUT1"] + n["LUT2"] + n["LUT3"] + n["LUT4"] + n["LUT5"] + n["LUT6"] \
          + 4 * (n["RAM32M"] + n["RAM64M"] + n["RAM128X1D"] + n["RAM256X1S"]) \
          + 8 * (n["RAM32M16"] + n["RAM64M8"] + n["RAM256X1D"]) \
          + 2 * (n["RAM32X1D"] + n["RAM64X1D"] + n["RAM128X1S"]) \
          + n["RAM32X1S"] + n["RAM64X1S"] + n["SRL16E"] + n["SRLC16E"] + n["SRLC32E"]
      ff = n["FDRE"] + n["FDSE"] + n["FDCE"] + n["FDPE"]
      dsp = n["DSP48E1"] + n["DSP48E2"]
      bram = n["RAMB36E1"] + n["RAMB36E2"] + (n["RAMB18E1"] + n["RAMB18E2"]) / 2
      printf "%d %d %d %.1f %d\n", lut, ff, dsp, bram, n["URAM288"]
    }' "$1"
}

if [ "${1:-}" = --count ]; then
  [ $# -eq 2 ] && [ -f "$2" ] || { echo "estimate.sh: --count needs a Yosys stat file" >&2; exit 2; }
  count "$2"
  exit 0
fi
[ $# -eq 4 ] || { echo "usage: hw/synth/estimate.sh CFG.vh FAMILY \"URAM BUFFERS\" OUTDIR" >&2; exit 2; }
vh=$1 family=$2 uram=$3 out=$4
GEN=${GEN:-build/gen}
rtl=${LOOM_RTL_FILES:-$(cat hw/rtl/loom_rtl.f)}
[ -f "$vh" ] || { echo "estimate.sh: $vh: no such file" >&2; exit 2; }
[ -f "$GEN/loom_isa.vh" ] || { echo "estimate.sh: $GEN/loom_isa.vh missing (make gen)" >&2; exit 2; }
mkdir -p "$out/inc" || exit 2
cp "$vh" "$out/inc/loom_cfg.vh" && cp "$GEN/loom_isa.vh" "$out/inc/loom_isa.vh" || exit 2
pre=""
# loom_sram's array sits in a generate block (g_auto.mem or g_block.mem):
# the pattern takes either, and the run fails unless it finds exactly one
# array per buffer (an attribute that matches nothing would silently leave
# the buffer in block RAM).
for buf in $uram; do
  sel="loom_top/$buf %M m:*mem %i"
  pre="$pre${pre:+; }select -assert-count 1 $sel; setattr -set ram_style {\"ultra\"} $sel"
done
rm -f "$out/stat.txt" "$out/resources.txt" "$out/netlist.json"
if ! LOOM_RTL_FILES=$(echo $rtl) LOOM_INC="$out/inc" LOOM_SYNTH_OUT="$out" LOOM_FAMILY=$family \
    LOOM_PRE_SYNTH="$pre" yosys -q -l "$out/yosys.log" -c hw/synth/loom_synth.tcl > /dev/null 2>&1 ||
    [ ! -f "$out/stat.txt" ]; then
  echo "estimate.sh: yosys failed; tail of $out/yosys.log:" >&2
  tail -n 20 "$out/yosys.log" >&2
  exit 1
fi
count "$out/stat.txt" > "$out/resources.txt"
