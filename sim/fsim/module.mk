# sim/fsim/module.mk - the fsim benchmark.
#
# fsim itself needs no rules: the top-level Makefile puts sim/fsim/*.c into
# libloom.a.  bench_fsim.c is a program, not library code, so it is taken
# out of libloom and linked on its own (with the test stream helpers).
#
#   make bench-fsim      prints a table, writes $(BUILD)/bench/fsim.json

LIBLOOM_SRCS := $(filter-out sim/fsim/bench_fsim.c,$(LIBLOOM_SRCS))

FSIM_BENCH := $(BUILD)/bench/bench_fsim

$(FSIM_BENCH): $(call obj,sim/fsim/bench_fsim.c tests/support/stream.c) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,sim/fsim/bench_fsim.c tests/support/stream.c) $(LIBLOOM) $(LDLIBS)

.PHONY: bench-fsim
bench-fsim: $(FSIM_BENCH)
	$(FSIM_BENCH) $(BUILD)/bench/fsim.json
