# tests/profile/module.mk - profiles and traces (docs/profiling.md).
#
# test_profile.sh runs the digits CNN, compiled for the default
# configuration, on the Verilator RTL with --profile, --profile-json and
# --trace, validates the trace with check_trace.py (trace-event format and
# agreement with the hardware counters) and checks the degraded paths
# (fsim without timing, a file without JOBMETA).  A few seconds.

SCRIPT_TESTS += tests/profile/test_profile.sh
TEST_DEPS += $(BUILD)/tsim/default/libloom_tsim.so build/models/digits_manifest.json $(GEMM_REF)

# test_timeline: random legal jobs (the differential test's generator) on
# the tiny RTL, each timeline against its counters; seeds 1..20, seconds.
TIMELINE_TEST := $(BUILD)/tests/profile/test_timeline

$(TIMELINE_TEST): tests/profile/test_timeline.c \
    $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< \
	  $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) \
	  $(LOOM_EXTRA_LIBS) $(LDLIBS)

SCRIPT_TESTS += $(TIMELINE_TEST)
TEST_DEPS += $(BUILD)/tsim/tiny/libloom_tsim.so
