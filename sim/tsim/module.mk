# sim/tsim/module.mk - Verilator builds of loom_top, one shared library per
# configuration and variant (docs/tsim.md).
#
#   make tsim                     build/tsim/{tiny,default}/libloom_tsim.so
#   make tsim CONFIG=large        build/tsim/large/libloom_tsim.so
#   make tsim-mt CONFIG=default   build/tsim/default-mt/  (--threads 2, benchmarks)
#   make tsim-trace CONFIG=tiny   build/tsim/tiny-trace/  (FST tracing compiled in)
#   make tsim TSIM_RTL=stub       build against tests/tsim/stub/loom_top.v
#   make tsim-model ...           a configuration file's model, for the runtime's
#                                 cache (driver/lib/tsim_cache.c; below)
#
# Each library holds the Verilated model, sim/tsim/tsim_harness.cpp and
# sim/tsim/dram_model.cpp, compiled -fPIC -fvisibility=hidden so that only
# the tsim_* C API (sim/tsim/tsim.h) is exported.  FST tracing costs about
# 10% of simulation speed even when switched off (docs/tsim.md), so only
# the -trace variant has it; the backend picks that variant for trace=.
# The RTL source list comes from hw/module.mk (LOOM_RTL_FILES,
# LOOM_RTL_INC_<config>, LOOM_WAIVERS) when hw/rtl/loom_top.v exists;
# TSIM_RTL=stub forces the stub.  The sources and flags used are recorded
# in <dir>/rtl.list, so switching RTL or flags rebuilds the library.
#
# Verilator runs its own make; MAKEFLAGS is cleared so that our
# command-line variables (CONFIG, OPT, SAN...) do not leak into it.  Each
# build happens in a private temporary directory and the library is moved
# into place at the end, so two makes building the same library at once
# (several engineers or test runners in one tree) cannot corrupt it.

TSIM_CONFIGS := tiny default large
TSIM_DEFAULT_CONFIGS := tiny default
TSIM_RTL ?= auto
TSIM_JOBS ?= 2
# -O3: 7% fewer instructions and ~13% less CPU time per simulated cycle than
# -O2 on ResNet-18; -Os (Verilator's own default) was slower (docs/tsim.md).
TSIM_OPT ?= -O3
TSIM_VFLAGS := --cc --exe --build -j $(TSIM_JOBS) -O3 --x-assign fast --x-initial fast --noassert \
  -Wno-fatal --top-module loom_top
TSIM_SRCS := sim/tsim/tsim_harness.cpp sim/tsim/dram_model.cpp
TSIM_HDRS := sim/tsim/tsim.h sim/tsim/dram_model.h
TSIM_STUB := tests/tsim/stub/loom_top.v

tsim_upper = $(shell echo $(1) | tr a-z A-Z)
tsim_real = $(if $(filter stub,$(TSIM_RTL)),,$(if $(filter rtl,$(TSIM_RTL)),1,$(wildcard hw/rtl/loom_top.v)))
tsim_rtl_files = $(if $(tsim_real),$(or $(LOOM_RTL_FILES),$(shell cat hw/rtl/loom_rtl.f 2>/dev/null)),$(TSIM_STUB))
# Include dirs: the per-config dir hw/module.mk names (or our own copy of the
# generated header as loom_cfg.vh), then $(GEN) for loom_isa.vh.
tsim_waivers = $(if $(tsim_real),$(LOOM_WAIVERS))
tsim_rtl_inc = $(if $(and $(tsim_real),$(LOOM_RTL_INC_$(1))),$(LOOM_RTL_INC_$(1)),$(BUILD)/tsim/inc-$(1))

.PHONY: tsim tsim-mt tsim-trace tsim-all
tsim: $(foreach c,$(or $(CONFIG),$(TSIM_DEFAULT_CONFIGS)),$(BUILD)/tsim/$(c)/libloom_tsim.so)
tsim-mt: $(foreach c,$(or $(CONFIG),default),$(BUILD)/tsim/$(c)-mt/libloom_tsim.so)
tsim-trace: $(foreach c,$(or $(CONFIG),$(TSIM_DEFAULT_CONFIGS)),$(BUILD)/tsim/$(c)-trace/libloom_tsim.so)
tsim-all: $(foreach c,$(TSIM_CONFIGS),$(BUILD)/tsim/$(c)/libloom_tsim.so)

# Under SAN=1 (build-san/) the Verilated model, the harness and the DRAM
# model are compiled and linked with the ASan + UBSan flags of the programs
# that load them (a sanitized library needs a sanitized program: the ASan
# runtime must come first).  `make test-san` runs the fault-injection test
# and tsim hostile runs on build-san/tsim/tiny (tests/hostile/module.mk).
ifeq ($(SAN),1)
TSIM_VFLAGS += -CFLAGS "$(SANFLAGS)" -LDFLAGS "$(SANFLAGS)"
endif

# The C++ side of every model (the harness exports only tsim_*).
TSIM_CFLAGS = -fPIC -fvisibility=hidden -fvisibility-inlines-hidden $(TSIM_OPT) -I$(abspath .) -I$(abspath $(GEN))
TSIM_LDFLAGS := -shared -Wl,-Bsymbolic -Wl,--no-undefined -lz -pthread
TSIM_MAKEFLAGS = OPT_FAST=$(TSIM_OPT) OPT_SLOW=-O1 OPT_GLOBAL=$(TSIM_OPT)
TSIM_TRACE_VFLAGS := --trace-fst --trace-structs

# $(1) config, $(2) variant suffix ("", -mt or -trace), $(3) extra verilator flags
define TSIM_template
$(BUILD)/tsim/$(1)$(2)/rtl.list: FORCE_TSIM_LIST
	@mkdir -p $$(dir $$@)
	@echo "$$(abspath $$(call tsim_rtl_files)) $$(abspath $$(call tsim_rtl_inc,$(1))) $(TSIM_VFLAGS) $(3) $(TSIM_OPT)" > $$@.new
	@if cmp -s $$@.new $$@; then rm $$@.new; else mv $$@.new $$@; fi

$(BUILD)/tsim/$(1)$(2)/libloom_tsim.so: $(BUILD)/tsim/$(1)$(2)/rtl.list $$(call tsim_rtl_files) \
    $(TSIM_SRCS) $(TSIM_HDRS) $(GEN_HEADERS) $(GEN)/loom_cfg_$(1).vh $(BUILD)/tsim/inc-$(1)/loom_cfg.vh
	@d=$(BUILD)/tsim/$(1)$(2); t=$$$$(cd $$$$d && pwd)/tmp.$$$$$$$$; rm -rf $$$$t; mkdir -p $$$$t; \
	echo "tsim: verilating $(1)$(2) ($$(if $$(call tsim_real),RTL,stub)), log in $$$$d/build.log"; \
	if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL verilator $(TSIM_VFLAGS) $(3) $$(call tsim_waivers) \
	  -Mdir $$$$t/obj -o $$$$t/libloom_tsim.so \
	  -I$$(call tsim_rtl_inc,$(1)) -I$(GEN) $$(call tsim_rtl_files) $$(abspath $(TSIM_SRCS)) \
	  -CFLAGS "$(TSIM_CFLAGS) -DTSIM_CONFIG=$(1) -DTSIM_CONFIG_HASH=LOOM_CONFIG_$$(call tsim_upper,$(1))_HASH" \
	  -LDFLAGS "$(TSIM_LDFLAGS)" -MAKEFLAGS "$(TSIM_MAKEFLAGS)" > $$$$t/build.log 2>&1; then \
	  mv -f $$$$t/build.log $$$$d/build.log; mv -f $$$$t/libloom_tsim.so $$@; rm -rf $$$$t; \
	else mv -f $$$$t/build.log $$$$d/build.log; rm -rf $$$$t; tail -40 $$$$d/build.log; exit 1; fi
endef

$(foreach c,$(TSIM_CONFIGS),$(eval $(call TSIM_template,$(c),,)))
$(foreach c,$(TSIM_CONFIGS),$(eval $(call TSIM_template,$(c),-mt,--threads 2)))
$(foreach c,$(TSIM_CONFIGS),$(eval $(call TSIM_template,$(c),-trace,$(TSIM_TRACE_VFLAGS))))

# The model of a configuration file, for the runtime's model cache
# (driver/lib/tsim_cache.c, which runs this on first use):
#   make tsim-model TSIM_MODEL_DIR=DIR TSIM_MODEL_NAME=cfg_HASH TSIM_MODEL_HASH=0xHASH [TSIM_MODEL_TRACE=1]
# DIR (absolute) holds inc/loom_cfg.vh (written by `loom config vh`'s code);
# the library lands in DIR/libloom_tsim.so, Verilator's objects in DIR/obj.
.PHONY: tsim-model
tsim-model: $(call tsim_rtl_files) $(TSIM_SRCS) $(TSIM_HDRS) $(GEN_HEADERS)
	@test -f "$(TSIM_MODEL_DIR)/inc/loom_cfg.vh" || { echo "tsim-model: TSIM_MODEL_DIR/inc/loom_cfg.vh missing" >&2; exit 2; }
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL verilator $(TSIM_VFLAGS) \
	  $(if $(filter 1,$(TSIM_MODEL_TRACE)),$(TSIM_TRACE_VFLAGS)) $(call tsim_waivers) \
	  -Mdir $(TSIM_MODEL_DIR)/obj -o $(TSIM_MODEL_DIR)/libloom_tsim.so \
	  -I$(TSIM_MODEL_DIR)/inc -I$(GEN) $(call tsim_rtl_files) $(abspath $(TSIM_SRCS)) \
	  -CFLAGS "$(TSIM_CFLAGS) -DTSIM_CONFIG=$(TSIM_MODEL_NAME) -DTSIM_CONFIG_HASH=$(TSIM_MODEL_HASH)u" \
	  -LDFLAGS "$(TSIM_LDFLAGS)" -MAKEFLAGS "$(TSIM_MAKEFLAGS)"

$(BUILD)/tsim/inc-%/loom_cfg.vh: $(GEN)/loom_cfg_%.vh
	@mkdir -p $(dir $@)
	cp $< $@

$(GEN)/loom_cfg_%.vh: $(GEN)/loom_isa.vh
	@true

.PHONY: FORCE_TSIM_LIST
FORCE_TSIM_LIST:

LOOM_EXTRA_LIBS += -ldl
