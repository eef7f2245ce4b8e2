#!/bin/sh
# Runs the cell testbenches (tests/rtl/loom_*_tb.sv under loom_cells_tb.sv):
# FIFOs, token queues and the skid buffer with parameter sweeps, the
# AXI4-Lite slave, the packed int8 multiplier, an ALU lane, and the DMA
# cells (burst generator, bounds check, row assembly) and the DMA-read
# engine with sweeps of bus and row widths.  One Verilator --binary build
# (iverilog with SIM=iverilog); prints each testbench's line and ends with
# PASS or FAIL.
set -eu
BUILD=${BUILD:-build}
SIM=${SIM:-verilator}
GEN=$BUILD/gen
out=$BUILD/rtl_tb/cells
cells="hw/rtl/loom_fifo.v hw/rtl/loom_tokq.v hw/rtl/loom_skid.v hw/rtl/loom_axil_slave.v
       hw/rtl/loom_mul2.v hw/rtl/loom_alu_lane.v hw/rtl/loom_seg_sel.v hw/rtl/loom_mem_check.v
       hw/rtl/loom_burst_gen.v hw/rtl/loom_rd_rows.v hw/rtl/loom_pad_walk.v
       hw/rtl/loom_dma_xfer.v hw/rtl/loom_dma_rd.v"
tbs="tests/rtl/loom_fifo_tb.sv tests/rtl/loom_tokq_tb.sv tests/rtl/loom_skid_tb.sv
     tests/rtl/loom_axil_slave_tb.sv tests/rtl/loom_mul2_tb.sv tests/rtl/loom_alu_lane_tb.sv
     tests/rtl/loom_burst_gen_tb.sv tests/rtl/loom_mem_check_tb.sv tests/rtl/loom_rd_rows_tb.sv
     tests/rtl/loom_dma_rd_tb.sv tests/rtl/loom_cells_tb.sv"
mkdir -p "$out"
if [ "$SIM" = iverilog ]; then
  iverilog -g2012 -I"$GEN" -s loom_cells_tb -o "$out/cells.vvp" $cells $tbs
  vvp -n "$out/cells.vvp" | tee "$out/log.txt"
else
  stamp="$out/loom_cells_tb"
  rebuild=0
  [ -x "$stamp" ] || rebuild=1
  for f in $cells $tbs "$GEN/loom_isa.vh"; do
    [ "$rebuild" = 1 ] || [ ! "$f" -nt "$stamp" ] || rebuild=1
  done
  if [ "$rebuild" = 1 ]; then
    verilator --binary --timing -j 2 -Wno-fatal -Wno-lint -Wno-style -I"$GEN" -Mdir "$out/obj" \
      --top-module loom_cells_tb $cells $tbs -o loom_cells_tb > "$out/build.log" 2>&1 ||
      { tail -30 "$out/build.log"; echo FAIL; exit 1; }
    cp "$out/obj/loom_cells_tb" "$stamp"
  fi
  "$stamp" | grep -v '^- ' | tee "$out/log.txt"
fi
tail -1 "$out/log.txt" | grep -qx PASS
