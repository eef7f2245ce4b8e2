# tests/timing/module.mk - fsim's timing model against the RTL (docs/fsim-timing.md).
#
#   make test          runs tests/timing/run-agree.sh: timing_agree with the twelve
#                      ResNet-18 convolutions, the GEMM sweep and 100 random jobs on
#                      tsim and on fsim timing=1, default config; fails beyond +-5%
#   make timing-agree  the same, by itself (TIMING_ARGS for more flags, e.g.
#                      TIMING_ARGS="--tsim-cache build/timing.cache --verbose")

TIMING_AGREE := $(BUILD)/tests/timing/timing_agree
TIMING_SUPPORT := tests/support/stream.c $(RANDSTREAM_SRCS)

$(TIMING_AGREE): tests/timing/timing_agree.c $(call obj,$(TIMING_SUPPORT)) $(LIBLOOMC) $(LIBLOOM) \
    $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,$(TIMING_SUPPORT)) \
	  $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

SCRIPT_TESTS += tests/timing/run-agree.sh
TEST_DEPS += $(TIMING_AGREE) $(BUILD)/tsim/default/libloom_tsim.so

.PHONY: timing-agree
timing-agree: $(TIMING_AGREE) $(BUILD)/tsim/default/libloom_tsim.so
	BUILD=$(BUILD) tests/timing/run-agree.sh $(TIMING_ARGS)
