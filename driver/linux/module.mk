# driver/linux/module.mk - the kernel driver loom.ko (docs/linux-driver.md).
#
#   make loom-ko        build/linux/<kernel release>/loom.ko, against KDIR
#                       (default: the running kernel's headers, else the newest
#                       /lib/modules/*/build); driver/linux/Makefile does the work
#
# Its tests (make driver-check, make test-qemu) are registered by
# tests/qemu/module.mk, the hardware layer's tsim test by tests/kernel/module.mk.

.PHONY: loom-ko
loom-ko: $(GEN_HEADERS)
	$(MAKE) -C driver/linux $(if $(KDIR),KDIR=$(KDIR))
