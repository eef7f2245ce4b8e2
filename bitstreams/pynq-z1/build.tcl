# Vivado batch flow for the Digilent PYNQ-Z1 (xc7z020).  Board files: Digilent's vivado-boards (www.digilentinc.com:pynq-z1).
#
#   make bitstream BOARD=pynq-z1
#
# runs, after generating the board parameters and staging the RTL,
#
#   vivado -mode batch -source bitstreams/pynq-z1/build.tcl -tclargs GEN SRC OUT JOBS
#
# and writes build/bitstreams/pynq-z1/: loom.bit, loom.hwh, loom.xsa, loom.bit.bin,
# timing.rpt and utilization.rpt; make compiles loom.dtso into loom.dtbo beside
# them.  The board, its configuration and clock are rows of
# bitstreams/boards.def; the flow itself is bitstreams/common/loom_flow.tcl.
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_zynq pynq-z1 $argv
