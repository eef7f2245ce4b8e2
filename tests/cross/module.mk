# tests/cross/module.mk - the runtime and the CLI cross-compiled for the
# boards' ARM cores, and the fsim part of the test suite run under qemu-user
# (docs/cross.md).
#
#   make cross ARCH=aarch64     build-aarch64/: libloom.a, bin/loom, tests/
#   make cross ARCH=armv7       build-armv7/   (arm-linux-gnueabihf, hard float)
#   make test-cross             both, then tests/cross/run-cross-tests.sh
#
# What is built: libloom (driver/core, driver/lib, sim/fsim: the runtime with the fsim,
# linux and xrt backends -- xrt without XRT, tsim loads its library at run
# time and simply finds none), the loom CLI without the compiler (the
# compiler needs protobuf-c and LLVM; tests/cross/cmd_host_stubs.c takes
# the place of `loom compile` and `loom dse`), and the cmocka programs test_isa,
# test_fsim_ops, test_fsim_alu, test_fsim_sched, test_fsim_bounds,
# test_runtime and test_runtime_models.
#
# zlib and cmocka for the target come from Debian's archive, unpacked into
# build-ARCH/sysroot by tests/cross/fetch-sysroot.sh (no multiarch install,
# nothing changes on the machine); the C library is Debian's cross libc
# (libc6-dev-arm64-cross, libc6-dev-armhf-cross).  The generated headers
# are the host's $(GEN) (they hold no host-dependent values).
#
# `make test` runs tests/cross/run-cross-tests.sh, which does `make cross`
# for both architectures and runs the programs (SKIP when the cross
# compilers or qemu-user are missing).

CROSS_ARCHES := aarch64 armv7
CROSS_CC_aarch64 := aarch64-linux-gnu-gcc
CROSS_CC_armv7 := arm-linux-gnueabihf-gcc
CROSS_DEBARCH_aarch64 := arm64
CROSS_DEBARCH_armv7 := armhf
CROSS_TRIPLET_aarch64 := aarch64-linux-gnu
CROSS_TRIPLET_armv7 := arm-linux-gnueabihf
CROSS_PACKAGES := zlib1g zlib1g-dev libssl3 libssl-dev libcmocka0 libcmocka-dev
CROSS_TESTS := test_isa test_fsim_ops test_fsim_alu test_fsim_sched test_fsim_bounds test_runtime \
  test_runtime_models
# 32-bit size_t: a check such as `(uint64_t)size > LIMIT` that can only
# fail on 64-bit hosts is right, not a bug; -Wtype-limits says otherwise.
CROSS_WFLAGS_armv7 := -Wno-type-limits

# 32-bit ARM has no __int128: the test helpers that use it are left out
# there, and with them the tests that need ref_ops.c (docs/cross.md).
CROSS_INT128_SRCS := $(shell grep -l __int128 $(TEST_SUPPORT_SRCS) /dev/null 2>/dev/null)
CROSS_SUPPORT_aarch64 := $(TEST_SUPPORT_SRCS)
CROSS_SUPPORT_armv7 := $(filter-out $(CROSS_INT128_SRCS),$(TEST_SUPPORT_SRCS))
CROSS_TESTS_aarch64 := $(CROSS_TESTS)
CROSS_TESTS_armv7 := $(if $(filter tests/support/ref_ops.c,$(CROSS_INT128_SRCS)),\
  $(filter-out test_fsim_%,$(CROSS_TESTS)),$(CROSS_TESTS))

# Deferred (=): other module.mk files still edit these lists after us.
cross_lib_srcs = $(LIBLOOM_SRCS) $(LIBLOOM_CORE_SRCS)
cross_cli_srcs = $(filter-out driver/cli/cmd_compile.c driver/cli/cmd_dse.c driver/cli/dse_%.c,$(CLI_SRCS)) tests/cross/cmd_host_stubs.c
cross_obj = $(patsubst %.c,build-$(1)/obj/%.o,$(2))

# $(1): architecture
define CROSS_template
CROSS_SYSROOT_$(1) := build-$(1)/sysroot
CROSS_FLAGS_$(1) := -std=c11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE $(CROSS_WFLAGS_$(1)) \
  -Iinclude -I$(GEN) -I. -isystem build-$(1)/sysroot/usr/include \
  -isystem build-$(1)/sysroot/usr/include/$(CROSS_TRIPLET_$(1))
CROSS_LIBS_$(1) := -Lbuild-$(1)/sysroot/usr/lib/$(CROSS_TRIPLET_$(1)) \
  -Wl,-rpath-link,build-$(1)/sysroot/usr/lib/$(CROSS_TRIPLET_$(1)) -lcrypto -lz -lm -ldl

# Fetched again when the script or the package list (CROSS_PACKAGES, above) changes.
build-$(1)/sysroot/.stamp: tests/cross/fetch-sysroot.sh tests/cross/module.mk
	tests/cross/fetch-sysroot.sh $(CROSS_DEBARCH_$(1)) $$(abspath build-$(1)/sysroot) $(CROSS_PACKAGES)
	@touch $$@

build-$(1)/obj/%.o: %.c $(GEN_HEADERS) build-$(1)/sysroot/.stamp
	@mkdir -p $$(dir $$@)
	$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) -MMD -MP -c -o $$@ $$<

build-$(1)/obj/gen/%.o: $(GEN)/%.c $(GEN_HEADERS) build-$(1)/sysroot/.stamp
	@mkdir -p $$(dir $$@)
	$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) -c -o $$@ $$<

build-$(1)/libloom.a: $$(call cross_obj,$(1),$$(cross_lib_srcs)) build-$(1)/obj/gen/loom_isa_gen.o
	$(CROSS_TRIPLET_$(1))-ar rcs $$@ $$^

build-$(1)/bin/loom: $$(call cross_obj,$(1),$$(cross_cli_srcs)) build-$(1)/libloom.a
	@mkdir -p $$(dir $$@)
	$(CROSS_CC_$(1)) -o $$@ $$^ $$(CROSS_LIBS_$(1))

# The test helpers as an archive: a test links only the helpers it uses
# (ref_qconv.c needs the compiler, which is not here).
build-$(1)/libtestsupport.a: $$(call cross_obj,$(1),$$(CROSS_SUPPORT_$(1)))
	$(CROSS_TRIPLET_$(1))-ar rcs $$@ $$^

build-$(1)/tests/%: tests/unit/%.c build-$(1)/libtestsupport.a build-$(1)/libloom.a
	@mkdir -p $$(dir $$@)
	$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) -Itests/support -o $$@ $$^ $$(CROSS_LIBS_$(1)) -lcmocka

.PHONY: cross-$(1)
cross-$(1): build-$(1)/bin/loom $(CROSS_TESTS_$(1):%=build-$(1)/tests/%)
	@echo "$(CROSS_TESTS_$(1))" > build-$(1)/tests/list
	@echo "cross: built build-$(1)/bin/loom and $(words $(CROSS_TESTS_$(1))) test programs for $(1)"
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call CROSS_template,$(a))))

.PHONY: cross test-cross
cross:
	@case "$(ARCH)" in aarch64|armv7) ;; \
	  *) echo "usage: make cross ARCH=aarch64|armv7 (got ARCH='$(ARCH)')" >&2; exit 1;; esac
	@$(MAKE) --no-print-directory cross-$(ARCH)

test-cross: $(GEN_HEADERS)
	@LOOM_CROSS_REQUIRED=1 tests/cross/run-cross-tests.sh

ifneq ($(SAN),1)
SCRIPT_TESTS += tests/cross/run-cross-tests.sh
TEST_DEPS += $(GEN_HEADERS)
endif

-include $(foreach a,$(CROSS_ARCHES),$(shell find build-$(a)/obj -name '*.d' 2>/dev/null))
