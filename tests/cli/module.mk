# tests/cli/module.mk - the loom CLI's script tests and their helper.
#
# tests/cli/gemm_ref.c writes random inputs and the expected output of the
# example GEMM programs (tests/asm/gemm64*.s); the scripts under tests/cli
# drive the built `loom` binary (test_outputs.sh compiles one of the small
# nets of tests/models, test_native_consent.sh the digits CNN).

GEMM_REF := $(BUILD)/tests/cli/gemm_ref

$(GEMM_REF): tests/cli/gemm_ref.c $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM) $(LDLIBS)

TEST_DEPS += $(GEMM_REF) $(MODELS_DIR)/small/manifest.json $(MODELS_DIR)/digits_manifest.json
SCRIPT_TESTS += tests/cli/test_cli.sh tests/cli/test_gemm64.sh tests/cli/test_outputs.sh \
  tests/cli/test_native_consent.sh tests/cli/test_progress.sh

# `loom --version`: the release (VERSION, $(GEN)/loom_version.h) and the git
# commit, whose header is looked at on every make (the script rewrites it
# only when its text changes, so main.c alone recompiles, and only after a
# commit).  Cross builds share it.
LOOM_COMMIT_H := $(GEN)/loom_commit.h
.PHONY: loom-commit-force
$(LOOM_COMMIT_H): loom-commit-force
	@scripts/gen-commit.sh $@
$(call obj,driver/cli/main.c) build-aarch64/obj/driver/cli/main.o build-armv7/obj/driver/cli/main.o: \
  $(LOOM_COMMIT_H)
