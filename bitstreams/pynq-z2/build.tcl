# Vivado batch flow for the TUL PYNQ-Z2 (xc7z020), the PYNQ-Z1 flow with the Z2's board presets
# (tul.com.tw:pynq-z2, in the Vivado Board Store).
#
#   make bitstream BOARD=pynq-z2
#
# runs, after generating the board parameters and staging the RTL,
#
#   vivado -mode batch -source bitstreams/pynq-z2/build.tcl -tclargs GEN SRC OUT JOBS
#
# and writes build/bitstreams/pynq-z2/: loom.bit, loom.hwh, loom.xsa, loom.bit.bin,
# timing.rpt and utilization.rpt; make compiles loom.dtso into loom.dtbo beside
# them.  The board, its configuration and clock are rows of
# bitstreams/boards.def; the flow itself is bitstreams/common/loom_flow.tcl.
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_zynq pynq-z2 $argv
