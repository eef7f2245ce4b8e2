# tests/kernel/module.mk - the kernel module's hardware layer in user space
# (tests/kernel/loom_hw_on_tsim.c, docs/linux-driver.md "Testing without
# hardware").
#
# driver/linux/loom_hw.c is compiled unchanged against tests/kernel/shim (a
# few lines for each kernel header it includes) and linked with the tiny
# configuration's Verilated RTL, fsim and the random job generator of the
# differential test.  `make test` runs it.

KHW_TEST := $(BUILD)/tests/kernel/loom_hw_on_tsim
KHW_SHIM := $(wildcard tests/kernel/shim/linux/*.h)
KHW_LIB := $(BUILD)/tsim/tiny/libloom_tsim.so
KHW_CPPFLAGS := -Itests/kernel/shim $(CPPFLAGS) -Itests/support

$(BUILD)/tests/kernel/loom_hw.o: driver/linux/loom_hw.c driver/linux/loom_hw.h driver/lib/hwseq.h \
    $(KHW_SHIM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(KHW_CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(KHW_TEST): tests/kernel/loom_hw_on_tsim.c $(BUILD)/tests/kernel/loom_hw.o \
    $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) $(KHW_LIB) $(KHW_SHIM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(KHW_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/tests/kernel/loom_hw.o \
	  $(call obj,$(RANDSTREAM_SRCS)) $(LIBLOOM) $(abspath $(KHW_LIB)) \
	  -Wl,-rpath,$(abspath $(dir $(KHW_LIB))) $(LOOM_EXTRA_LIBS) -lcmocka $(LDLIBS)

SCRIPT_TESTS += $(KHW_TEST)
