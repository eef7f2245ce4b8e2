# tests/profile/module.mk - profiles and traces (docs/profiling.md).
#
# test_profile.sh runs the digits CNN, compiled for the default
# configuration, on the Verilator RTL with --profile, --profile-json and
# --trace, validates the trace with check_trace.py (trace-event format and
# agreement with the hardware counters) and checks the degraded paths
# (fsim without timing, a file without JOBMETA).  A few seconds.

SCRIPT_TESTS += tests/profile/test_profile.sh
TEST_DEPS += $(BUILD)/tsim/default/libloom_tsim.so build/models/digits_manifest.json $(GEMM_REF)
