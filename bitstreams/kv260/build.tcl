# Vivado batch flow for the AMD Kria KV260 (K26 SOM).  Board files: xilinx.com:kv260_som, in the Vivado
# Board Store.  The PL uses no carrier pins, so no board_connections are set.
#
#   make bitstream BOARD=kv260
#
# runs, after generating the board parameters and staging the RTL,
#
#   vivado -mode batch -source bitstreams/kv260/build.tcl -tclargs GEN SRC OUT JOBS
#
# and writes build/bitstreams/kv260/: loom.bit, loom.hwh, loom.xsa, loom.bit.bin,
# timing.rpt and utilization.rpt; make compiles loom.dtso into loom.dtbo beside
# them.  The board, its configuration and clock are rows of
# bitstreams/boards.def; the flow itself is bitstreams/common/loom_flow.tcl.
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_zynq kv260 $argv
