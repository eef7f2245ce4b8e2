# Loom top-level build.
#
#   make              build the libraries, the loom CLI and the test programs
#   make test         the default test suite (what CI runs)
#   make demo         compile the digits CNN and run it on the Verilator RTL
#   make bench-fsim   fsim throughput benchmark (tests/bench/module.mk)
#   make check-docs   the generated tables in docs/ match hw/spec/*.def
#   make SAN=1 ...    build with AddressSanitizer and UBSan (into build-san/)
#
# Sources are found by directory, one archive per layer (imports only go
# down: include -> driver/core -> sw_compiler, sim -> driver/lib -> driver/cli):
#   driver/core/*.c        libloom_core.a  the contract: ISA codec, configs,
#                                          .loom, .npy, host-op semantics
#   sw_compiler/*.c        libloomc.a      the compiler
#   sim/fsim/*.c           (in libloom.a)  the functional simulator
#   driver/lib/*.c         libloom.a       the runtime; the archive also holds
#                                          core and fsim, so a program that
#                                          runs models links libloom.a alone
#   driver/cli/*.c         the `loom` binary
# and every tests/unit/test_*.c becomes one cmocka test program.  Components with extra
# rules (generated code, Verilator) add them in their own module.mk.

ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SANFLAGS :=
endif

CC ?= cc
CXX ?= c++
OPT ?= -O2
CPPFLAGS += -Iinclude -I$(BUILD)/gen -I. -D_GNU_SOURCE
CFLAGS += -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wno-unused-parameter $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS += -lz -lm

GEN := $(BUILD)/gen
GEN_HEADERS := $(GEN)/loom_isa_gen.h $(GEN)/loom_isa.vh
GEN_SOURCES := $(GEN)/loom_isa_gen.c
LOOMGEN := $(BUILD)/tools/loomgen
SPEC := $(wildcard hw/spec/*.def)

LIBLOOM_CORE_SRCS := $(wildcard driver/core/*.c)
LIBLOOM_SRCS := $(wildcard driver/lib/*.c sim/fsim/*.c)
LIBLOOMC_SRCS := $(wildcard sw_compiler/*.c)
CLI_SRCS := $(wildcard driver/cli/*.c)
UNIT_TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_SUPPORT_SRCS := $(wildcard tests/support/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIBLOOM_CORE := $(BUILD)/libloom_core.a
LIBLOOM := $(BUILD)/libloom.a
LIBLOOMC := $(BUILD)/libloomc.a
LOOM := $(BUILD)/bin/loom

# module.mk fragments may append to the variables above and add rules.
-include $(wildcard */module.mk */*/module.mk)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_TEST_SRCS))

.PHONY: all deps test test-programs demo check-docs gen clean
.DEFAULT_GOAL := all

all: $(LOOM) $(UNIT_TESTS)

deps:
	@scripts/install-deps.sh

gen: $(GEN_HEADERS) $(GEN_SOURCES)

# loomgen derives the configurations with the runtime's own rules (hwconfig_rules.c).
LOOMGEN_SRCS := $(wildcard scripts/loomgen*.c) driver/core/hwconfig_rules.c

$(LOOMGEN): $(LOOMGEN_SRCS) scripts/loomgen.h include/loom/hwconfig_rules.h $(SPEC) bitstreams/boards.def
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -I. -Iinclude -o $@ $(LOOMGEN_SRCS) -lz

$(GEN)/loom_isa_gen.h: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) c-header $@

$(GEN)/loom_isa_gen.c: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) c-source $@

$(GEN)/loom_isa.vh: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) verilog $(GEN)
	$(LOOMGEN) tcl $(GEN)

$(BUILD)/obj/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

LIBLOOM_CORE_OBJS = $(call obj,$(LIBLOOM_CORE_SRCS) $(GEN_SOURCES:$(BUILD)/%=%))

$(LIBLOOM_CORE): $(LIBLOOM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBLOOM): $(call obj,$(LIBLOOM_SRCS)) $(LIBLOOM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The generated source lives in $(GEN); compile it from there.
$(BUILD)/obj/gen/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBLOOMC): $(call obj,$(LIBLOOMC_SRCS)) $(LIBLOOMC_EXTRA_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(LOOM): $(call obj,$(CLI_SRCS)) $(LIBLOOMC) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRCS)) $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(call obj,$(TEST_SUPPORT_SRCS)) $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,$(TEST_SUPPORT_SRCS)) \
	  $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) -lcmocka $(LDLIBS)

# SCRIPT_TESTS: executables (scripts or programs) run after the unit tests;
# module.mk files append to it and list what they need in TEST_DEPS.  Each is
# run from the top directory with LOOM and BUILD in the environment.
test-programs: $(UNIT_TESTS) $(LOOM) $(TEST_DEPS)
	@LOOM=$(LOOM) BUILD=$(BUILD) scripts/run-tests.sh $(UNIT_TESTS) $(SCRIPT_TESTS)

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-docs
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-programs

# The README's main job: digits CNN compiled to int8 and run on the Verilator RTL.
demo: deps
	@$(MAKE) --no-print-directory $(LOOM) tsim CONFIG=default
	@BUILD=$(BUILD) scripts/demo.sh

check-docs: $(LOOMGEN)
	@scripts/check-docs.sh $(LOOMGEN)

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
