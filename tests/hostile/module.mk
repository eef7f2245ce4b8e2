# tests/hostile/module.mk - hostile binaries, fault injection and the
# sanitizer test target (docs/reliability.md).
#
#   make hostile                        mutants of tests/asm/*.s (and compiled models) on fsim
#                                       and tsim for HOSTILE_SECONDS (default 60), seed HOSTILE_SEED
#   make hostile HOSTILE_SECONDS=3600 HOSTILE_SEED=7
#   make test-san                       unit, fsim, CLI, limit and regression tests, fault
#                                       injection and a hostile run on fsim and tsim, under
#                                       ASan + UBSan (build-san/, tsim's C++ included)
#
# `make test` runs tests/hostile/run-hostile.sh (a 60 s bounded run) and
# the fault-injection test of the tsim backend.

HOSTILE := $(BUILD)/tests/hostile/hostile
HOSTILE_OBJS := $(call obj,tests/hostile/hostile.c tests/hostile/hostile_mutate.c \
  tests/hostile/hostile_run.c tests/hostile/hostile_race.c tests/hostile/fsim_exact.c)
HOSTILE_SECONDS ?= 60
HOSTILE_SEED ?= 1

$(HOSTILE): $(HOSTILE_OBJS) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(HOSTILE_OBJS) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

.PHONY: hostile
hostile: $(HOSTILE) $(LOOM)
	@LOOM=$(LOOM) BUILD=$(BUILD) HOSTILE_SECONDS=$(HOSTILE_SECONDS) HOSTILE_SEED=$(HOSTILE_SEED) \
	  tests/hostile/run-hostile.sh

SCRIPT_TESTS += tests/hostile/run-hostile.sh
TEST_DEPS += $(HOSTILE)

# Fault injection on tsim through the runtime: the program reaches the
# backend's simulator instance with loom_tsim_instance (driver/lib/backend.h).
FAULTS := $(BUILD)/tests/hostile/test_faults
FAULTS_OBJS := $(call obj,tests/hostile/test_faults.c tests/hostile/hostile_run.c)

$(FAULTS): $(FAULTS_OBJS) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(FAULTS_OBJS) $(LIBLOOM) $(LOOM_EXTRA_LIBS) -lcmocka $(LDLIBS)

SCRIPT_TESTS += $(FAULTS)
TEST_DEPS += $(BUILD)/tsim/tiny/libloom_tsim.so

# ---- make test-san ----
#
# The sanitizer build (ASan + UBSan, build-san/): the unit tests (fsim's
# and the host kernels' included), the CLI scripts, the limit and
# regression tests, ONNX's node tests through the host kernels, the
# fault-injection test and a 30 s hostile run on fsim and tsim.  tsim runs
# build-san/tsim/tiny/libloom_tsim.so, whose Verilated model, harness and
# DRAM model are compiled with the same sanitizers (sim/tsim/module.mk), so
# the C++ side of every tsim job is checked too.  Recursive, so that SAN=1
# selects build-san/ and its flags.  test_hostgen and test_hostgen_ops are
# left out: they need LLVM (and test_hostgen the trained models of
# build/models: Python, torch), which are not what a sanitizer job is for;
# `make SAN=1 test-programs` still runs them.
SAN_UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(filter-out tests/unit/test_hostgen%.c,$(UNIT_TEST_SRCS)))
SAN_PROGRAMS = $(SAN_UNIT_TESTS) $(filter tests/cli/%,$(SCRIPT_TESTS)) tests/regress/run-regress.sh \
  tests/hostile/run-hostile.sh $(FAULTS) tests/kernels/test_kernel_nodes.sh

.PHONY: test-san test-san-programs
test-san:
	@$(MAKE) --no-print-directory SAN=1 test-san-programs

test-san-programs: $(SAN_UNIT_TESTS) $(LOOM) $(GEMM_REF) $(FUZZ_REPLAYS) $(HOSTILE) $(FAULTS) \
    $(BUILD)/tsim/tiny/libloom_tsim.so $(BUILD)/tests/kernels/kernel_node_runner $(BUILD)/onnx-node-tests/.generated
	@LOOM=$(LOOM) BUILD=$(BUILD) HOSTILE_SECONDS=30 UBSAN_OPTIONS=print_stacktrace=1 \
	  scripts/run-tests.sh $(SAN_PROGRAMS)
