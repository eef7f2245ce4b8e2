# netlist.tcl - the gate-level netlist of loom_top for tests/netlist/run_netlist.sh:
# hw/synth/loom_synth.tcl (the one Yosys synth_xilinx script, with its
# environment: LOOM_RTL_FILES, LOOM_INC, LOOM_SYNTH_OUT), then the flattened
# result as plain Verilog of Xilinx primitives, LOOM_SYNTH_OUT/loom_top_netlist.v,
# which simulates with Yosys's own cell models (xilinx/cells_sim.v).
source hw/synth/loom_synth.tcl
flatten
write_verilog -noattr $::env(LOOM_SYNTH_OUT)/loom_top_netlist.v
