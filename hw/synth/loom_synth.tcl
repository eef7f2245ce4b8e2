# loom_synth.tcl - Yosys synthesis of loom_top for Xilinx parts.
# Run by hw/synth/synth.sh and hw/synth/estimate.sh:  yosys -c hw/synth/loom_synth.tcl
# Environment: LOOM_RTL_FILES (sources), LOOM_INC (include dirs, space
# separated), LOOM_SYNTH_OUT (output directory); optional LOOM_FAMILY
# (synth_xilinx -family: xc7, the default, or xcup) and LOOM_PRE_SYNTH (Yosys
# commands run between `hierarchy` and `synth_xilinx`, e.g. the ram_style
# attributes that put buffers in UltraRAM).
# With LOOM_JSON=1 it also writes the flattened netlist as
# LOOM_SYNTH_OUT/netlist.json for the timing estimate (scripts/loomsta.c,
# docs/rtl.md "Timing").
yosys -import

set incs ""
foreach d [split [string trim $::env(LOOM_INC)]] {
  if {$d ne ""} { append incs " -I$d" }
}
foreach f [split [string trim $::env(LOOM_RTL_FILES)]] {
  if {$f ne ""} { eval read_verilog -sv $incs $f }
}
hierarchy -check -top loom_top
set family xc7
if {[info exists ::env(LOOM_FAMILY)] && $::env(LOOM_FAMILY) ne ""} { set family $::env(LOOM_FAMILY) }
if {[info exists ::env(LOOM_PRE_SYNTH)] && $::env(LOOM_PRE_SYNTH) ne ""} { eval $::env(LOOM_PRE_SYNTH) }
# Block RAMs from loom_sram, DSP48 from the multipliers, distributed RAM
# from the queues; everything else in LUTs.
synth_xilinx -family $family -top loom_top
tee -q -o $::env(LOOM_SYNTH_OUT)/stat.txt stat
# The timing estimate follows register-to-register paths across module
# boundaries, so it reads one flat module; stat above keeps the hierarchy.
if {[info exists ::env(LOOM_JSON)] && $::env(LOOM_JSON) eq "1"} {
  flatten
  write_json $::env(LOOM_SYNTH_OUT)/netlist.json
}
