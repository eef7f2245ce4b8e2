# driver/xrt/module.mk - the "xrt" backend's build (docs/xrt.md).
#
# driver/lib/backend_xrt.c is always part of libloom.  When XRT's headers
# are found it is compiled with LOOM_HAVE_XRT and loads libxrt_coreutil with
# dlopen() at open time (libloom never links XRT, so it runs on machines
# without it); otherwise it compiles to a backend that says how to get one.
#
# The headers are looked for, first match wins, in:
#   1. pkg-config's xrt includedir (and its xrt/ subdirectory): only if the
#      header really is there -- Debian's xrt.pc says /usr/usr/include;
#   2. $XILINX_XRT/include;
#   3. /opt/xilinx/xrt/include (AMD's packages);
#   4. /usr/include/xrt (Debian's libxrt-dev).
# XRT_INC=DIR forces a directory, XRT=0 builds without XRT (cross builds).
#
# When the library is found too, $(BUILD)/xrt/xrt_linkcheck links every XRT
# function the backend uses against it and runs in `make test`.

XRT ?= auto
xrt_has_header = $(wildcard $(1)/xrt/xrt_device.h)
xrt_has_lib = $(wildcard $(1)/libxrt_coreutil.so)

ifneq ($(XRT),0)
XRT_PC_INC := $(shell pkg-config --variable=includedir xrt 2>/dev/null)
XRT_PC_LIB := $(shell pkg-config --variable=libdir xrt 2>/dev/null)
XRT_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ifeq ($(origin XRT_INC),undefined)
XRT_INC := $(firstword $(foreach d,$(XRT_PC_INC) $(XRT_PC_INC:%=%/xrt) \
  $(XILINX_XRT:%=%/include) /opt/xilinx/xrt/include /usr/include/xrt,$(if $(call xrt_has_header,$(d)),$(d))))
endif
ifeq ($(origin XRT_LIB),undefined)
XRT_LIB := $(firstword $(foreach d,$(XRT_PC_LIB) $(XILINX_XRT:%=%/lib) /opt/xilinx/xrt/lib \
  $(XRT_MULTIARCH:%=/usr/lib/%) /usr/lib64 /usr/lib,$(if $(call xrt_has_lib,$(d)),$(d))))
endif
else
XRT_INC :=
XRT_LIB :=
endif

XRT_FLAGS := $(if $(XRT_INC),-DLOOM_HAVE_XRT=1 -isystem $(XRT_INC))
XRT_FLAGS_STAMP := $(BUILD)/xrt/flags
XRT_OBJ := $(BUILD)/obj/driver/lib/backend_xrt.o

# The object depends on the flags it was built with, so installing or
# removing XRT rebuilds it.
$(XRT_FLAGS_STAMP): FORCE_XRT_FLAGS
	@mkdir -p $(dir $@)
	@echo "$(XRT_FLAGS)" > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(XRT_OBJ): CPPFLAGS += $(XRT_FLAGS)
$(XRT_OBJ): $(XRT_FLAGS_STAMP)

.PHONY: FORCE_XRT_FLAGS xrt-info
FORCE_XRT_FLAGS:

ifneq ($(XRT_INC),)
LOOM_EXTRA_LIBS += -ldl

ifneq ($(XRT_LIB),)
XRT_LINKCHECK := $(BUILD)/xrt/xrt_linkcheck
$(XRT_LINKCHECK): driver/xrt/xrt_linkcheck.c driver/xrt/xrt_api.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -isystem $(XRT_INC) $(SANFLAGS) \
	  -o $@ $< -L$(XRT_LIB) -Wl,-rpath,$(XRT_LIB) -lxrt_coreutil
SCRIPT_TESTS += $(XRT_LINKCHECK)
endif
endif

xrt-info:
	@echo "XRT headers: $(or $(XRT_INC),not found (backend_xrt.c built without XRT))"
	@echo "XRT library: $(or $(XRT_LIB),not found (no link check))"
