# tests/fuzz/module.mk - libFuzzer targets, their replay programs and the
# regression inputs (docs/reliability.md).
#
#   make fuzz                      every target for FUZZ_SECONDS in total (default 60),
#                                  FUZZ_JOBS at a time (default: the number of CPUs)
#   make fuzz FUZZ_SECONDS=3600    a long run; the working corpora in build-fuzz/corpus/
#                                  persist between runs and start from tests/fuzz/corpus/
#   make fuzz-long                 each target to FUZZ_LONG_RUNS executions (10^7) or
#                                  FUZZ_LONG_SECONDS (4 h) each, niced, one at a time
#                                  (FUZZ_JOBS); FUZZ_LONG_TARGETS picks targets
#   make fuzz-build                only build build-fuzz/fuzz_{onnx,loomfile,npy,asm,hostcode,hwconfig}
#
# The fuzzers are built with clang (FUZZ_CC) and -fsanitize=fuzzer,address,
# undefined; every source they reach (libloom, fsim, the compiler, the
# generated ISA tables and ONNX bindings) is compiled again with the same
# instrumentation into build-fuzz/, apart from the ordinary build.  Crashes
# are written to build-fuzz/artifacts/<target>/ and make the run fail.
#
# The same targets are also linked with tests/fuzz/fuzz_main.c, a plain
# main() that replays files, by the ordinary compiler: $(BUILD)/tests/fuzz/
# replay_<target>.  tests/regress/run-regress.sh (part of `make test` and
# `make test-san`) replays the seed corpora and tests/regress/<target>/
# through them, so every crash ever found stays fixed without clang.

FUZZ_TARGETS := onnx loomfile npy asm hostcode hwconfig
FUZZ_CC ?= clang
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Wno-unused-parameter $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
  -fsanitize-coverage-ignorelist=tests/fuzz/coverage-ignore.txt
FUZZ_CPPFLAGS := -Iinclude -I$(GEN) -I. -D_GNU_SOURCE

# Everything a target can reach, as instrumented objects in one archive (so
# each fuzzer links only what it uses).
FUZZ_LIB_SRCS := $(wildcard driver/core/*.c driver/lib/*.c sim/fsim/*.c) \
  $(wildcard sw_compiler/*.c) tests/hostile/fsim_exact.c
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SRCS)) \
  $(FUZZ_BUILD)/obj/gen/loom_isa_gen.o $(FUZZ_BUILD)/obj/gen/onnx/onnx.pb-c.o
FUZZ_LIB := $(FUZZ_BUILD)/libfuzzdeps.a
FUZZ_BINS := $(foreach t,$(FUZZ_TARGETS),$(FUZZ_BUILD)/fuzz_$(t))

$(FUZZ_BUILD)/obj/%.o: %.c $(GEN_HEADERS) $(ONNX_PB_H) tests/fuzz/coverage-ignore.txt
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/obj/gen/loom_isa_gen.o: $(GEN)/loom_isa_gen.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/obj/gen/onnx/onnx.pb-c.o: $(ONNX_PB_C) $(ONNX_PB_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# Our own sources are held to -Werror; the libraries' are not, so that a
# clang-only warning in someone's file cannot stop the fuzz build.
$(FUZZ_BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h $(GEN_HEADERS) $(ONNX_PB_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -Werror -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) -lprotobuf-c -ldl -lcrypto -lz -lm

FUZZ_LONG_RUNS ?= 10000000
FUZZ_LONG_SECONDS ?= 14400
FUZZ_LONG_TARGETS ?= $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-build fuzz-long
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@tests/fuzz/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) "$(FUZZ_JOBS)" $(FUZZ_TARGETS)

fuzz-long: $(FUZZ_BINS)
	@tests/fuzz/run-fuzz.sh --runs $(FUZZ_LONG_RUNS) $(FUZZ_BUILD) $(FUZZ_LONG_SECONDS) "$(FUZZ_JOBS)" \
	  $(FUZZ_LONG_TARGETS)

-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)

# ---- replay programs and the regression test ----

FUZZ_REPLAYS := $(foreach t,$(FUZZ_TARGETS),$(BUILD)/tests/fuzz/replay_$(t))
FUZZ_REPLAY_OBJS := $(call obj,tests/fuzz/fuzz_main.c tests/hostile/fsim_exact.c)

$(BUILD)/tests/fuzz/replay_%: $(call obj,tests/fuzz/fuzz_%.c) $(FUZZ_REPLAY_OBJS) $(LIBLOOMC) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(FUZZ_REPLAY_OBJS) $(LIBLOOMC) $(LIBLOOM) \
	  $(LOOM_EXTRA_LIBS) $(LDLIBS)

$(call obj,tests/fuzz/fuzz_onnx.c): $(ONNX_PB_H)
# Reached only through the pattern rule above: keep them (not intermediates).
.SECONDARY: $(call obj,$(wildcard tests/fuzz/*.c) tests/hostile/fsim_exact.c)

SCRIPT_TESTS += tests/regress/run-regress.sh
TEST_DEPS += $(FUZZ_REPLAYS)

# tests/unit/test_limits.c packs ONNX models with the generated bindings.
$(BUILD)/tests/test_limits: $(ONNX_PB_H)
