# Vitis RTL-kernel flow for the AMD Alveo U250 (XRT).
#
#   make bitstream BOARD=u250
#
# runs, after generating the board parameters and kernel.xml and staging
# the RTL,
#
#   vivado -mode batch -source bitstreams/u250/build.tcl -tclargs GEN SRC OUT JOBS
#
# which packages the Loom IP as an RTL kernel and writes
# build/bitstreams/u250/loom.xo, then bitstreams/common/vitis-link.sh links
# it into the platform named in bitstreams/boards.def:
#
#   v++ -l -t hw --config GEN/boards/vitis_u250.cfg --config bitstreams/u250/link.cfg \
#       -o OUT/loom.xclbin OUT/loom.xo
source [file join [file dirname [file normalize [info script]]] .. common loom_flow.tcl]
loom::build_xo u250 $argv
