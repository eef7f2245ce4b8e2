#!/bin/sh
# run_netlist.sh - what a board would run, checked without a board
# (`make test-netlist`, docs/tsim.md "Gate-level and 4-state simulation"):
#
#   rtl      the RTL of the tiny configuration under Icarus Verilog, a
#            4-state simulator: every program gives fsim's bytes, and no X
#            or Z reaches an output of loom_top or a control signal inside
#            it (tests/netlist/loom_nl_tb.sv names them);
#   netlist  the Yosys synth_xilinx netlist of the same configuration
#            (hw/synth/loom_synth.tcl through tests/netlist/netlist.tcl),
#            simulated with Yosys's own Xilinx cell models
#            (/usr/share/yosys/xilinx/cells_sim.v; the block RAMs from
#            tests/netlist/loom_nl_bram.v): the same bytes, and no X on an
#            output.
#
#   tests/netlist/run_netlist.sh [rtl] [netlist]    (default: both)
#
# The programs: the assembly examples for tiny (tests/asm/gemm_tiny.s,
# store_fault.s, which must stop with SEGMENT as fsim does, and gemm64.s),
# and two network layers through `loom compile --config tiny`: conv_tiny,
# an int8 QLinearConv 8 -> 8 channels 3x3 on 4x4 (tests/netlist/
# make_conv_tiny.py, 9,216 MACs) and the small nets' qlinear_conv, 16 -> 16
# channels on 8x8 (147,456 MACs).  The netlist runs gemm_tiny, store_fault
# and conv_tiny; gemm64 and qlinear_conv take the RTL seconds but the
# netlist a quarter of an hour or more each (DSP48E1 models), so they run
# on the RTL only.  RTL_PROGS / NETLIST_PROGS name other sets.
# tests/netlist/nl_image.c lays out each job's DRAM image and runs fsim on
# it for the expected bytes.  Prints one line per run and PASS or FAIL;
# exits 1 on any mismatch or X.
#
# Environment: BUILD (default build), LOOM (default $BUILD/bin/loom), PY3,
# NL_IMAGE (default $BUILD/tests/netlist/nl_image), YOSYS_CELLS (default
# /usr/share/yosys/xilinx).  The netlist is rebuilt when an RTL source or
# the configuration header is newer than it (Yosys takes minutes).
set -eu
BUILD=${BUILD:-build}
LOOM=${LOOM:-$BUILD/bin/loom}
NL_IMAGE=${NL_IMAGE:-$BUILD/tests/netlist/nl_image}
CELLS=${YOSYS_CELLS:-/usr/share/yosys/xilinx}
GEN=$BUILD/gen
CFG=tiny
out=$BUILD/netlist/$CFG
modes=${*:-rtl netlist}
PY3=${PY3:-/usr/bin/python3}
RTL_PROGS=${RTL_PROGS:-gemm_tiny store_fault conv_tiny qlinear_conv gemm64}
NETLIST_PROGS=${NETLIST_PROGS:-gemm_tiny store_fault conv_tiny}
failed=0
mkdir -p "$out/progs"
cmp -s "$GEN/loom_cfg_$CFG.vh" "$GEN/cfg_$CFG/loom_cfg.vh" 2>/dev/null ||
  { mkdir -p "$GEN/cfg_$CFG"; cp "$GEN/loom_cfg_$CFG.vh" "$GEN/cfg_$CFG/loom_cfg.vh"; }
rtl_files=$(cat hw/rtl/loom_rtl.f)
tb="tests/netlist/loom_nl_mem.sv tests/netlist/loom_nl_tb.sv"

# ---- the programs: NAME -> $out/progs/NAME/jN.{mem,job,exp}
prog_loom() {
  case $1 in
    qlinear_conv)
      "$LOOM" compile "$BUILD/models/small/qlinear_conv.onnx" --config $CFG -o "$2" -q ;;
    conv_tiny)
      "$PY3" tests/netlist/make_conv_tiny.py "${2%.loom}.onnx" &&
        "$LOOM" compile "${2%.loom}.onnx" --config $CFG -o "$2" -q ;;
    *) "$LOOM" asm "tests/asm/$1.s" -o "$2" ;;
  esac
}
progs=""
for mode in $modes; do
  case $mode in rtl) progs="$progs $RTL_PROGS" ;; netlist) progs="$progs $NETLIST_PROGS" ;; esac
done
for p in $(echo $progs | tr ' ' '\n' | sort -u); do
  d=$out/progs/$p
  rm -rf "$d" && mkdir -p "$d"
  prog_loom "$p" "$d/$p.loom" > "$d/build.log" 2>&1 && "$NL_IMAGE" "$d/$p.loom" "$d" >> "$d/build.log" 2>&1 ||
    { sed 's/^/  | /' "$d/build.log"; echo "FAIL: $p: could not build the program"; exit 1; }
done

# run MODE VVP PROG: every job of PROG on one simulation, compared with fsim.
run() {
  for job in "$out/progs/$3"/j*.job; do
    j=$(basename "$job" .job)
    d=$(dirname "$job")
    start=$(date +%s)
    res=$(vvp -n "$2" +job="$job" +mem="$d/$j.mem" +out="$d/$j.$1" 2>&1 | grep -E '^(PASS|FAIL)' | head -1)
    secs=$(( $(date +%s) - start ))
    if [ "${res%% *}" != PASS ]; then
      echo "$1 $3 $j: ${res:-FAIL: no result} (${secs}s)"
      failed=$((failed + 1))
    elif ! cmp -s "$d/$j.$1" "$d/$j.exp"; then
      first=$(cmp "$d/$j.$1" "$d/$j.exp" | sed -n 's/.*line \([0-9]*\).*/\1/p')
      echo "$1 $3 $j: FAIL: DRAM differs from fsim's, first at image byte 0x$(printf %x $((first - 1))) (${secs}s)"
      failed=$((failed + 1))
    else
      echo "$1 $3 $j: PASS (${res#PASS }, ${secs}s)"
    fi
  done
}

for mode in $modes; do
  case $mode in
    rtl)
      mkdir -p "$out/rtl"
      iverilog -g2012 -DLOOM_NL_RTL -I"$GEN/cfg_$CFG" -I"$GEN" -s loom_nl_tb -o "$out/rtl/tb.vvp" \
        $rtl_files $tb
      for p in $RTL_PROGS; do run rtl "$out/rtl/tb.vvp" "$p"; done
      ;;
    netlist)
      # Yosys 0.23's xc7 block-RAM map writes the parity bits 4-7 of a 72-bit
      # RAMB36E1 from bits 0-3 (brams_xc6v_map.v: "PORT_W_WIDTH == 71", fixed
      # upstream in YosysHQ/yosys#5833): the accumulator's netlist would lose
      # 12 bits of every row.  With a share directory that has the typo,
      # Yosys runs from a copy of itself beside a copy of the share directory
      # with the one-character fix (Yosys finds ../share/yosys next to its
      # binary).  NETLIST_STOCK_YOSYS=1 keeps the stock one (the run fails).
      yosys_bin=$(readlink -f "$(command -v yosys)")
      share=$(dirname "$yosys_bin")/../share/yosys
      [ -f "$share/xilinx/brams_xc6v_map.v" ] || share=/usr/share/yosys
      variant=stock
      if [ -z "${NETLIST_STOCK_YOSYS:-}" ] && grep -q 'PORT_W_WIDTH == 71' "$share/xilinx/brams_xc6v_map.v"; then
        variant=fixed
        fix=$out/yosys-fixed
        if [ ! -x "$fix/bin/yosys" ] || [ "$yosys_bin" -nt "$fix/bin/yosys" ]; then
          rm -rf "$fix" && mkdir -p "$fix/bin" "$fix/share"
          cp "$yosys_bin" "$fix/bin/yosys" && cp -r "$share" "$fix/share/yosys"
          sed -i 's/PORT_W_WIDTH == 71 ? DIP\[7:4\]/PORT_W_WIDTH == 72 ? DIP[7:4]/' \
            "$fix/share/yosys/xilinx/brams_xc6v_map.v"
        fi
        yosys_bin=$fix/bin/yosys
        echo "netlist: Yosys $(yosys -V | awk '{print $2}') with the RAMB36E1 SDP parity fix of YosysHQ/yosys#5833"
      fi
      syn=$out/synth-$variant
      net=$syn/loom_top_netlist.v
      stale=0
      [ -f "$net" ] || stale=1
      for f in $rtl_files "$GEN/cfg_$CFG/loom_cfg.vh" "$GEN/loom_isa.vh" hw/synth/loom_synth.tcl \
          tests/netlist/netlist.tcl "$yosys_bin"; do
        [ "$stale" = 1 ] || [ ! "$f" -nt "$net" ] || stale=1
      done
      if [ "$stale" = 1 ]; then
        mkdir -p "$syn"
        start=$(date +%s)
        LOOM_RTL_FILES=$(echo $rtl_files) LOOM_INC="$GEN/cfg_$CFG $GEN" LOOM_SYNTH_OUT="$syn" \
          "$yosys_bin" -q -l "$syn/yosys.log" -c tests/netlist/netlist.tcl > /dev/null 2>&1 ||
          { rm -f "$net"; tail -20 "$syn/yosys.log"; echo "FAIL: Yosys failed"; exit 1; }
        echo "netlist: Yosys synth_xilinx of $CFG in $(( $(date +%s) - start ))s"
      fi
      # Yosys's own cell models, except its RAMB18E1/RAMB36E1, which are
      # timing-only stubs in 0.23 (outputs undriven): tests/netlist/
      # loom_nl_bram.v stands in for them.  cells_xtra.v holds only black
      # boxes (and does not parse in Icarus); nothing in the netlist needs it.
      awk '/^module RAMB(18|36)E1 *\(/ { skip = 1 } !skip { print } skip && /^endmodule/ { skip = 0 }' \
        "$CELLS/cells_sim.v" > "$syn/cells_sim_nobram.v"
      iverilog -g2012 -I"$GEN/cfg_$CFG" -I"$GEN" -s loom_nl_tb -o "$syn/tb.vvp" \
        "$net" "$syn/cells_sim_nobram.v" tests/netlist/loom_nl_bram.v $tb > "$syn/iverilog.log" 2>&1 ||
        { tail -20 "$syn/iverilog.log"; echo "FAIL: iverilog of the netlist failed"; exit 1; }
      for p in $NETLIST_PROGS; do run netlist "$syn/tb.vvp" "$p"; done
      ;;
    *) echo "run_netlist.sh: unknown mode '$mode' (rtl, netlist)"; exit 2 ;;
  esac
done
[ "$failed" -eq 0 ] || { echo "test-netlist: $failed run(s) failed"; echo FAIL; exit 1; }
echo PASS
