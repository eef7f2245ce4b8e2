# tests/sta/module.mk - loomsta, the timing estimate of a Yosys netlist
# (docs/rtl.md "Timing"), on hand-written netlists of Xilinx primitives.
#
#   make test     runs tests/sta/test_loomsta.sh (a few seconds: Yosys reads
#                 each netlist, loomsta times it)

SCRIPT_TESTS += tests/sta/test_loomsta.sh
TEST_DEPS += $(LOOMSTA)
