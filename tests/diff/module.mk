# tests/diff/module.mk - the fsim-vs-tsim differential test (docs/tsim.md).
#
#   make test                          runs tests/diff/run-diff.sh: ~60 s of seeds on tiny
#   make diff-long SEEDS=N CONFIG=NAME N seeds (default 1000) on NAME (default "default"),
#                                      FIRST=K to start elsewhere, DIFF_ARGS for more flags

DIFF_BIN := $(BUILD)/tests/diff/fsim_vs_tsim

$(DIFF_BIN): tests/diff/fsim_vs_tsim.c $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< \
	  $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

SCRIPT_TESTS += tests/diff/run-diff.sh
TEST_DEPS += $(DIFF_BIN) $(BUILD)/tsim/tiny/libloom_tsim.so

SEEDS ?= 1000
FIRST ?= 1
.PHONY: diff-long
diff-long: $(DIFF_BIN) $(BUILD)/tsim/$(or $(CONFIG),default)/libloom_tsim.so
	$(DIFF_BIN) --config $(or $(CONFIG),default) --seeds $(FIRST):$(SEEDS) --keep-going $(DIFF_ARGS)
