# Vivado batch flow for the Avnet Ultra96-V2 (ZU3EG).  Board files: avnet.com:ultra96v2, in the
# Vivado Board Store or Avnet's bdf repository.
#
#   make bitstream BOARD=ultra96v2
#
# runs, after generating the board parameters and staging the RTL,
#
#   vivado -mode batch -source bitstreams/ultra96v2/build.tcl -tclargs GEN SRC OUT JOBS
#
# and writes build/bitstreams/ultra96v2/: loom.bit, loom.hwh, loom.xsa, loom.bit.bin,
# timing.rpt and utilization.rpt; make compiles loom.dtso into loom.dtbo beside
# them.  The board, its configuration and clock are rows of
# bitstreams/boards.def; the flow itself is bitstreams/common/loom_flow.tcl.
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_zynq ultra96v2 $argv
