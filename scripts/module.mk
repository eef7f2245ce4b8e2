# scripts/module.mk - build-machine tools besides loomgen (which the top
# Makefile builds, since everything generated depends on it).
#
#   $(LOOMSTA)   loomsta: logic levels and an estimated Fmax from a Yosys
#                netlist (scripts/loomsta*.c, docs/rtl.md "Timing"); used by
#                `make timing` (hw/module.mk) and `make board-estimates`

# (LOOMSTA itself is set in the top Makefile, before any module.mk uses it.)
LOOMSTA_SRCS := $(wildcard scripts/loomsta*.c)

$(LOOMSTA): $(LOOMSTA_SRCS) scripts/loomsta.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) -g -Wall -Wextra -Werror $(SANFLAGS) -I. -o $@ $(LOOMSTA_SRCS) -ljansson -lm
