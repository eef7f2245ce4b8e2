# tests/bench/module.mk - the benchmark suite (docs/performance.md).
#
#   make bench            everything below on the default config, about 10 min:
#                         bench/results.json, a table on stdout, bench/roofline.{png,svg}
#   make bench-compiler   the compiler's part only: ResNet-18 compile time and
#                         cycles on tsim, the per-layer table (about 3 min)
#   make bench-doc        rewrites docs/performance.md's tables from bench/results.json
#                         and copies the roofline plot next to it
#
# tests/bench/run_bench.sh drives `loom compile` / `loom run` and the
# programs below; Python only makes the models and measures PyTorch.
# Benchmarks print and save figures; nothing here is a timed test.  The
# smoke test (tests/bench/test_bench_parse.sh, in `make test`) checks the
# parsers and the JSON assembly on canned tool output.

BENCH_CONFIG_TOOL := $(BUILD)/bench/bench_config
BENCH_GEMM := $(BUILD)/bench/bench_gemm
BENCH_OUT ?= bench
BENCH_TSIM := $(BUILD)/tsim/default/libloom_tsim.so

$(BENCH_CONFIG_TOOL): tests/bench/bench_config.c $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM) $(LDLIBS)

# bench_gemm includes sim/tsim/bench_rtl.c (its streams and roofline).
$(BENCH_GEMM): tests/bench/bench_gemm.c sim/tsim/bench_rtl.c $(call obj,tests/support/stream.c) $(LIBLOOM) \
    $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,tests/support/stream.c) \
	  $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

# Recursive (=): MODELS_DIR comes from tests/models/module.mk, read after this file.
BENCH_DEPS = $(LOOM) $(BENCH_CONFIG_TOOL) $(BENCH_GEMM) $(BENCH_TSIM) $(BENCH_HOSTGEN) \
  $(MODELS_DIR)/imagenet_manifest.json

.PHONY: bench bench-compiler bench-doc
bench: deps
	@$(MAKE) --no-print-directory $(BENCH_DEPS)
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT) tests/bench/run_bench.sh all

bench-compiler: deps
	@$(MAKE) --no-print-directory $(LOOM) $(BENCH_CONFIG_TOOL) $(BENCH_TSIM) $(MODELS_DIR)/imagenet_manifest.json
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT) tests/bench/run_bench.sh compiler

bench-doc:
	tests/bench/gen_doc.sh $(BENCH_OUT)/results.json docs/performance.md
	cp $(BENCH_OUT)/roofline.svg docs/performance-roofline.svg

SCRIPT_TESTS += tests/bench/test_bench_parse.sh
TEST_DEPS += $(LOOM)
