# tests/zoo/module.mk - the model zoo (docs/zoo.md): ~20 modern networks made by
# scripts/models/make_zoo.py (PyTorch, test data only) into build/models/zoo,
# compiled for the accelerator, run on fsim and compared with PyTorch and
# onnxruntime-node (tests/zoo/run_zoo.sh).
#
#   make test-zoo     the whole zoo (making the models takes ~10 min once)
#   make test         runs the quick set of tests/zoo/zoo.list
#                     (tests/zoo/test_zoo_quick.sh)
#   make bench        adds per-network figures (tests/bench/run_bench.sh: bench_zoo,
#                     bench_transformers)

ZOO_COMPARE := $(BUILD)/tests/zoo/zoo_compare
ZOO_GEN := scripts/models/make_zoo.py scripts/models/zoo_nets.py scripts/models/common.py
ZOO_QUICK := $(shell awk '!/^\#/ && NF && $$2 == "quick" {print $$1}' tests/zoo/zoo.list)
zoo_comma := ,
zoo_empty :=
zoo_space := $(zoo_empty) $(zoo_empty)

$(ZOO_COMPARE): tests/zoo/zoo_compare.c $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM) $(LDLIBS)

# Stamps: a model is made once (make_zoo.py skips those present); a change of
# the generators remakes them (--force), a change of the list only adds models.
zoo_force = $(if $(wildcard $@),$(if $(filter-out tests/zoo/zoo.list,$?),--force))

build/models/zoo/.quick.stamp: $(ZOO_GEN) tests/zoo/zoo.list
	$(PY3) scripts/models/make_zoo.py --out build/models $(zoo_force) --models $(subst $(zoo_space),$(zoo_comma),$(ZOO_QUICK))
	@touch $@

# The transformers of issue 17's benchmark (make bench-transformers).
build/models/zoo/.transformers.stamp: $(ZOO_GEN) tests/zoo/zoo.list
	$(PY3) scripts/models/make_zoo.py --out build/models $(zoo_force) --models vit,bert,transformer
	@touch $@

build/models/zoo/.all.stamp: $(ZOO_GEN) tests/zoo/zoo.list
	$(PY3) scripts/models/make_zoo.py --out build/models $(zoo_force)
	@touch $@

ZOO_TEST_DEPS := $(ZOO_COMPARE) $(LOOM) build/models/zoo/.quick.stamp $(BUILD)/tsim/default/libloom_tsim.so
TEST_DEPS += $(ZOO_TEST_DEPS)
SCRIPT_TESTS += tests/zoo/test_zoo_quick.sh

.PHONY: test-zoo
test-zoo: $(ZOO_COMPARE) $(LOOM) build/models/zoo/.all.stamp
	@LOOM=$(LOOM) BUILD=$(BUILD) tests/zoo/run_zoo.sh
