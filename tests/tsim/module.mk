# tests/tsim/module.mk - directed tests of the RTL through tsim (docs/tsim.md).
#
# test_tsim_directed links the tiny simulator library directly (for the
# DRAM model's fault hooks) and libloom (hwregs.c, the tsim backend).

TSIM_DIRECTED := $(BUILD)/tests/tsim/test_tsim_directed
TSIM_DIRECTED_LIB := $(BUILD)/tsim/tiny/libloom_tsim.so

$(TSIM_DIRECTED): tests/tsim/test_tsim_directed.c $(call obj,tests/support/stream.c) $(LIBLOOM) \
    $(TSIM_DIRECTED_LIB) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,tests/support/stream.c) \
	  $(LIBLOOM) $(abspath $(TSIM_DIRECTED_LIB)) -Wl,-rpath,$(abspath $(dir $(TSIM_DIRECTED_LIB))) \
	  $(LOOM_EXTRA_LIBS) -lcmocka $(LDLIBS)

SCRIPT_TESTS += $(TSIM_DIRECTED)

# The DRAM model alone, against a scripted AXI master (no Verilator needed).
TSIM_DRAM_TEST := $(BUILD)/tests/tsim/test_dram_model
$(TSIM_DRAM_TEST): tests/tsim/test_dram_model.cpp sim/tsim/dram_model.cpp sim/tsim/dram_model.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++14 -O1 -g -Wall -Wextra -Werror $(SANFLAGS) -I. -o $@ tests/tsim/test_dram_model.cpp \
	  sim/tsim/dram_model.cpp

SCRIPT_TESTS += $(TSIM_DRAM_TEST)

# Every example of the repository gives the same bytes on tsim as on fsim.
SCRIPT_TESTS += tests/tsim/test_examples.sh
TEST_DEPS += $(BUILD)/tsim/tiny/libloom_tsim.so $(BUILD)/tsim/default/libloom_tsim.so $(GEMM_REF) \
  build/models/digits_manifest.json
