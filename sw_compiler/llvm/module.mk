# sw_compiler/llvm/module.mk - host code generation through LLVM 15's C API.
#
# The sources under sw_compiler/llvm/ go into libloomc.a (the compiler)
# with LLVM's headers; every program linking libloomc.a links libLLVM-15
# through LOOM_EXTRA_LIBS.  libloom.a (the runtime) stays free of LLVM: it
# loads the native code the compiler put in the .loom (driver/lib/hostcode.c).
# docs/hostcode.md explains the choices.

LLVM_CONFIG ?= llvm-config-15
LLVM_CFLAGS := -I$(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBS := $(shell $(LLVM_CONFIG) --ldflags) $(shell $(LLVM_CONFIG) --libs core target x86 aarch64 arm passes)

HOSTGEN_SRCS := $(wildcard sw_compiler/llvm/*.c)
HOSTGEN_OBJS := $(call obj,$(HOSTGEN_SRCS))
LIBLOOMC_EXTRA_OBJS += $(HOSTGEN_OBJS)
LOOM_EXTRA_LIBS += $(LLVM_LIBS)

$(HOSTGEN_OBJS): private CPPFLAGS += $(LLVM_CFLAGS)

# ---- tests ----
#
# test_hostgen compares generated code with the C reference; its model
# tests read build/models (the digits and small nets, or $MODELS), made
# before it.  The directory is shared by build/ and build-san/ (made once,
# as tests/models/module.mk does), so `make SAN=1 test-programs` finds them.
# tests/models/module.mk has the rules that make them; they are repeated
# here only when that file is absent, so two recipes never write the same
# files at once.
HOSTGEN_MODELS := build/models/digits_manifest.json build/models/small/manifest.json
$(BUILD)/tests/test_hostgen: | $(HOSTGEN_MODELS)
ifeq ($(wildcard tests/models/module.mk),)
build/models/digits_manifest.json:
	/usr/bin/python3 scripts/models/make_digits.py --out build/models
build/models/small/manifest.json:
	/usr/bin/python3 scripts/models/make_small_nets.py --out build/models
endif

# Cross targets (tests/llvm/run-cross.sh): make_cross_models builds .loom
# files with native code for aarch64 / armv7 on this machine, and
# tests/llvm/hostcode_harness.c is linked, dynamically and statically,
# against the cross-built runtime of tests/cross/module.mk
# (build-ARCH/libloom.a, with the target's zlib from its fetched sysroot;
# docs/cross.md) and run under qemu-user.  The script builds the harnesses
# itself, as tests/cross/run-cross-tests.sh does, and skips a target whose
# cross compiler, libc or qemu is missing.
HOSTGEN_CROSS_TOOL := $(BUILD)/tests/llvm/make_cross_models
$(HOSTGEN_CROSS_TOOL): tests/llvm/make_cross_models.c $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

# $(1): architecture (CROSS_CC_*, CROSS_LIBS_* and the object rule come
# from tests/cross/module.mk, read after this file: hence the $$).
define hostcode_harness
build-$(1)/llvm/hostcode_harness: build-$(1)/obj/tests/llvm/hostcode_harness.o build-$(1)/libloom.a
	@mkdir -p $$(dir $$@)
	$$(CROSS_CC_$(1)) -o $$@ $$^ $$(CROSS_LIBS_$(1))
build-$(1)/llvm/hostcode_harness-static: build-$(1)/obj/tests/llvm/hostcode_harness.o build-$(1)/libloom.a
	@mkdir -p $$(dir $$@)
	$$(CROSS_CC_$(1)) -static -o $$@ $$^ $$(CROSS_LIBS_$(1))
endef
$(foreach a,aarch64 armv7,$(eval $(call hostcode_harness,$(a))))

.PHONY: test-hostgen-cross
test-hostgen-cross: $(HOSTGEN_CROSS_TOOL) $(HOSTGEN_MODELS)
	LOOM_CROSS_REQUIRED=1 BUILD=$(BUILD) tests/llvm/run-cross.sh

ifneq ($(SAN),1)
TEST_DEPS += $(HOSTGEN_CROSS_TOOL) $(HOSTGEN_MODELS)
SCRIPT_TESTS += tests/llvm/run-cross.sh
endif
