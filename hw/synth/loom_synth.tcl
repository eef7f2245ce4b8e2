# loom_synth.tcl - Yosys synthesis of loom_top for 7-series (xc7) parts.
# Run by hw/synth/synth.sh:  yosys -c hw/synth/loom_synth.tcl
# Environment: LOOM_RTL_FILES (sources), LOOM_INC (include dirs, space
# separated), LOOM_SYNTH_OUT (output directory).
yosys -import

set incs ""
foreach d [split [string trim $::env(LOOM_INC)]] {
  if {$d ne ""} { append incs " -I$d" }
}
foreach f [split [string trim $::env(LOOM_RTL_FILES)]] {
  if {$f ne ""} { eval read_verilog -sv $incs $f }
}
hierarchy -check -top loom_top
# Block RAMs from loom_sram, DSP48E1 from the multipliers, distributed RAM
# from the queues; everything else in LUTs.
synth_xilinx -family xc7 -top loom_top
tee -q -o $::env(LOOM_SYNTH_OUT)/stat.txt stat
