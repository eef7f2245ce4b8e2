# Vivado batch flow for the AMD ZCU104 (ZU7EV), configuration `large` with the small buffers in
# UltraRAM (boards.def uram 1).  Board files ship with Vivado.
#
#   make bitstream BOARD=zcu104
#
# runs, after generating the board parameters and staging the RTL,
#
#   vivado -mode batch -source bitstreams/zcu104/build.tcl -tclargs GEN SRC OUT JOBS
#
# and writes build/bitstreams/zcu104/: loom.bit, loom.hwh, loom.xsa, loom.bit.bin,
# timing.rpt and utilization.rpt; make compiles loom.dtso into loom.dtbo beside
# them.  The board, its configuration and clock are rows of
# bitstreams/boards.def; the flow itself is bitstreams/common/loom_flow.tcl.
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_zynq zcu104 $argv
