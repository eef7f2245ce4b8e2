# tests/models/module.mk - model-level tests of the compiler: whole networks
# compiled, run on fsim, and checked against the reference interpreter and
# the float model.
#
#   model_check   compiles an ONNX model in memory, runs samples on fsim and
#                 compares (bit-exact against the int8 reference, accuracy or
#                 cosine against the float model): tests/models/model_check.c
#
# The models come from scripts/models (Python, test data only): the rules
# below make them once into build/models, which the SAN build shares.  `make test` runs the digits
# and small-net checks (a few seconds); `make test-nets` adds ResNet-18 and
# MobileNetV2 on fsim (under a minute each; making the models takes ~4 min once).

MODEL_CHECK := $(BUILD)/tests/models/model_check
# shared by build/ and build-san/: made once
MODELS_DIR := build/models
PY3 := /usr/bin/python3

$(MODEL_CHECK): tests/models/model_check.c $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

$(MODELS_DIR)/digits_manifest.json:
	$(PY3) scripts/models/make_digits.py --out $(MODELS_DIR)

$(MODELS_DIR)/small/manifest.json:
	$(PY3) scripts/models/make_small_nets.py --out $(MODELS_DIR)

# remade (--force) when the generator changes: the seeded networks are its output
$(MODELS_DIR)/imagenet_manifest.json: scripts/models/make_imagenet_nets.py
	$(PY3) scripts/models/make_imagenet_nets.py --out $(MODELS_DIR) --force

MODEL_TEST_DEPS := $(MODEL_CHECK) $(LOOM) $(MODELS_DIR)/digits_manifest.json $(MODELS_DIR)/small/manifest.json
TEST_DEPS += $(MODEL_TEST_DEPS)
SCRIPT_TESTS += tests/models/test_small_nets.sh tests/models/test_digits.sh

.PHONY: test-nets
test-nets: $(MODEL_TEST_DEPS) $(MODELS_DIR)/imagenet_manifest.json
	@BUILD=$(BUILD) tests/models/test_imagenet.sh
