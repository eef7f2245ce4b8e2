# tests/qemu/module.mk - the kernel driver's tests (docs/linux-driver.md,
# "Testing without hardware").
#
#   make driver-check   W=1 and sparse on every file of loom.ko, any warning fails
#   make test-qemu      boot Debian's kernel in QEMU and run the ABI test, the
#                       robustness test (wedged device, per-user quotas) and
#                       libloom's linux backend against the software test device
#
# `make test` runs driver-check and the QEMU test when the kernel headers
# (and for QEMU, the matching image, qemu and busybox-static) are installed,
# and says SKIP otherwise; the two targets above fail instead.  Neither runs
# under SAN=1: the module is not built with the user-space sanitizers and
# the QEMU programs are static.
#
# The QEMU test programs are static (they are the only user space in the
# initramfs besides busybox), so they use their own flags, not CFLAGS.

QEMU_OUT := $(BUILD)/tests/qemu
QEMU_ABI_TEST := $(QEMU_OUT)/loom_abi_test
QEMU_ROBUST_TEST := $(QEMU_OUT)/loom_robust_test
QEMU_BACKEND_TEST := $(QEMU_OUT)/loom_backend_test
QEMU_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -static

$(QEMU_ABI_TEST) $(QEMU_ROBUST_TEST): $(QEMU_OUT)/%: tests/qemu/%.c tests/qemu/tap.h \
    tests/qemu/uapi_calls.h include/loom/loom_uapi.h $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(QEMU_CFLAGS) -Iinclude -I$(GEN) -o $@ $<

# glibc warns that a static program calling dlopen (the tsim and xrt
# backends do, at open) needs its shared libraries at run time; the test
# opens neither, so the link log is shown only when the link fails.
$(QEMU_BACKEND_TEST): tests/qemu/loom_backend_test.c tests/qemu/tap.h $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	@echo "$(CC) $(QEMU_CFLAGS) -o $@ $< $(LIBLOOM) -ldl -lcrypto -lz -lm"
	@$(CC) $(QEMU_CFLAGS) -Iinclude -I$(GEN) -I. -o $@ $< $(LIBLOOM) -ldl -lcrypto -lz -lm 2> $@.ld.log \
	  || { cat $@.ld.log >&2; exit 1; }

QEMU_PROGRAMS := $(QEMU_ABI_TEST) $(QEMU_ROBUST_TEST) $(if $(filter 1,$(SAN)),,$(QEMU_BACKEND_TEST))

.PHONY: driver-check test-qemu
driver-check: $(GEN_HEADERS)
	@LOOM_DRIVER_CHECK_REQUIRED=1 $(if $(KDIR),KDIR=$(KDIR)) tests/qemu/check-driver.sh

test-qemu: $(QEMU_PROGRAMS)
	@LOOM_QEMU_REQUIRED=1 BUILD=$(BUILD) tests/qemu/run-qemu-test.sh

SCRIPT_TESTS += tests/qemu/test_backends_absent.sh
ifneq ($(SAN),1)
TEST_DEPS += $(QEMU_PROGRAMS)
SCRIPT_TESTS += tests/qemu/check-driver.sh tests/qemu/run-qemu-test.sh
endif
