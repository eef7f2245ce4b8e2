# tests/bench/module.mk - the benchmark suite (docs/performance.md).
#
#   make bench            everything below on the default config, about 10 min:
#                         bench/results.json, a table on stdout, bench/roofline.{png,svg}
#   make bench-compiler   the compiler's part only: ResNet-18 compile time and
#                         cycles on tsim, the per-layer table (about 3 min)
#   make bench-doc        rewrites docs/performance.md's tables from bench/results.json
#                         and copies the roofline plot next to it
#   make bench-zoo        the model zoo's figures alone (bench/zoo/results.json);
#                         `make bench` includes them; make bench-zoo-doc puts
#                         its table into docs/performance.md
#   make bench-transformers  issue 17's transformer figures alone (the zoo's vit,
#                         bert, transformer: bench/transformers/results.json);
#                         `make bench` includes them; make bench-transformers-doc
#                         puts their block into docs/performance.md
#
# tests/bench/run_bench.sh drives `loom compile` / `loom run` and the
# programs below; Python only makes the models and measures PyTorch.
# Benchmarks print and save figures; nothing here is a timed test.  Every
# benchmark program of Loom lives in this folder: the component benchmarks
# bench-fsim, bench-rtl and bench-hostgen are defined at the end.  The
# smoke test (tests/bench/test_bench_parse.sh, in `make test`) checks the
# parsers and the JSON assembly on canned tool output.

BENCH_CONFIG_TOOL := $(BUILD)/bench/bench_config
BENCH_GEMM := $(BUILD)/bench/bench_gemm
BENCH_OUT ?= bench
BENCH_TSIM := $(BUILD)/tsim/default/libloom_tsim.so

$(BENCH_CONFIG_TOOL): tests/bench/bench_config.c $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM) $(LDLIBS)

# bench_gemm includes tests/bench/bench_rtl.c (its streams and roofline).
$(BENCH_GEMM): tests/bench/bench_gemm.c tests/bench/bench_rtl.c $(call obj,tests/support/stream.c) $(LIBLOOM) \
    $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,tests/support/stream.c) \
	  $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

# Recursive (=): MODELS_DIR comes from tests/models/module.mk, read after this file.
BENCH_DEPS = $(LOOM) $(BENCH_CONFIG_TOOL) $(BENCH_GEMM) $(BENCH_TSIM) $(BENCH_HOSTGEN) \
  $(MODELS_DIR)/imagenet_manifest.json build/models/zoo/.all.stamp $(ZOO_COMPARE)

.PHONY: bench bench-compiler bench-doc bench-zoo bench-zoo-doc bench-transformers bench-transformers-doc
bench: deps
	@$(MAKE) --no-print-directory $(BENCH_DEPS)
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT) tests/bench/run_bench.sh all

bench-compiler: deps
	@$(MAKE) --no-print-directory $(LOOM) $(BENCH_CONFIG_TOOL) $(BENCH_TSIM) $(MODELS_DIR)/imagenet_manifest.json
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT) tests/bench/run_bench.sh compiler

bench-doc:
	tests/bench/gen_doc.sh $(BENCH_OUT)/results.json docs/performance.md
	cp $(BENCH_OUT)/roofline.svg docs/performance-roofline.svg

# The zoo's part alone (results in $(BENCH_OUT)/zoo/), and its table in docs/performance.md.
bench-zoo: deps
	@$(MAKE) --no-print-directory $(LOOM) $(BENCH_CONFIG_TOOL) build/models/zoo/.all.stamp
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT)/zoo tests/bench/run_bench.sh zoo

bench-zoo-doc:
	tests/bench/gen_doc.sh $(BENCH_OUT)/zoo/results.json docs/performance.md zoo

# The transformers' part alone (results in $(BENCH_OUT)/transformers/), and its block.
bench-transformers: deps
	@$(MAKE) --no-print-directory $(LOOM) $(BENCH_CONFIG_TOOL) $(ZOO_COMPARE) build/models/zoo/.transformers.stamp
	@LOOM=$(LOOM) BUILD=$(BUILD) MODELS=$(MODELS_DIR) OUT=$(BENCH_OUT)/transformers tests/bench/run_bench.sh transformers

bench-transformers-doc:
	tests/bench/gen_doc.sh $(BENCH_OUT)/transformers/results.json docs/performance.md transformers

SCRIPT_TESTS += tests/bench/test_bench_parse.sh
TEST_DEPS += $(LOOM)

# ---- make bench-fsim: fsim throughput (figures in build/bench/fsim.json) ----
FSIM_BENCH := $(BUILD)/bench/bench_fsim

$(FSIM_BENCH): $(call obj,tests/bench/bench_fsim.c tests/support/stream.c) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,tests/bench/bench_fsim.c tests/support/stream.c) $(LIBLOOM) $(LDLIBS)

.PHONY: bench-fsim
bench-fsim: $(FSIM_BENCH)
	$(FSIM_BENCH) $(BUILD)/bench/fsim.json

# ---- benchmarks: make bench-rtl (figures in build/bench/rtl.json) ----
BENCH_RTL := $(BUILD)/bench/bench_rtl
BENCH_RTL_CONFIG ?= default

$(BENCH_RTL): tests/bench/bench_rtl.c $(call obj,tests/support/stream.c) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,tests/support/stream.c) \
	  $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

.PHONY: bench-rtl
bench-rtl: $(BENCH_RTL) $(BUILD)/tsim/$(BENCH_RTL_CONFIG)/libloom_tsim.so \
    $(BUILD)/tsim/$(BENCH_RTL_CONFIG)-mt/libloom_tsim.so
	@$(BENCH_RTL) --config $(BENCH_RTL_CONFIG) --lib $(abspath $(BUILD)/tsim/$(BENCH_RTL_CONFIG)/libloom_tsim.so) \
	  --lib-mt $(abspath $(BUILD)/tsim/$(BENCH_RTL_CONFIG)-mt/libloom_tsim.so) \
	  --json $(BUILD)/bench/rtl.json > $(BUILD)/bench/rtl.txt; st=$$?; cat $(BUILD)/bench/rtl.txt; exit $$st

# ---- benchmark (for `make bench`): host-op time per network, LLVM code
# against the C reference; BENCH_NETS adds resnet18 mobilenetv2. ----
BENCH_HOSTGEN := $(BUILD)/bench/bench_hostgen
BENCH_NETS ?= digits_mlp digits_cnn
$(BENCH_HOSTGEN): tests/bench/bench_hostgen.c $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

.PHONY: bench-hostgen
bench-hostgen: $(BENCH_HOSTGEN) $(HOSTGEN_MODELS)
	$(BENCH_HOSTGEN) --json $(BUILD)/bench/hostgen.json --models build/models $(BENCH_NETS)

# ---- make bench-kernels: host kernel throughput (figures in build/bench/kernels.json) ----
BENCH_KERNELS := $(BUILD)/bench/bench_kernels

$(BENCH_KERNELS): tests/bench/bench_kernels.c $(LIBLOOM_CORE) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM_CORE) $(LDLIBS)

.PHONY: bench-kernels
bench-kernels: $(BENCH_KERNELS)
	$(BENCH_KERNELS) $(BUILD)/bench/kernels.json

# ---- make bench-vrows: V's WGT rows as a V^T job against V's projection
# (fsim timing model; figures in build/bench/vrows.json, docs/lowering.md) ----
BENCH_VROWS := $(BUILD)/bench/bench_vrows

$(BENCH_VROWS): tests/bench/bench_vrows.c $(call obj,tests/support/ref_qconv.c) $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,tests/support/ref_qconv.c) \
	  $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

.PHONY: bench-vrows
bench-vrows: $(BENCH_VROWS)
	$(BENCH_VROWS) $(BUILD)/bench/vrows.json
