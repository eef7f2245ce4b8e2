# hw/module.mk - the accelerator RTL (docs/rtl.md).
#
#   make lint            Verilator --lint-only -Wall of loom_top, every configuration
#   make lint-CONFIG     one configuration (tiny, default, large)
#   make synth           Yosys synth_xilinx (xc7) of the default configuration; prints
#                        LUT/FF/DSP48E1/RAMB36E1/RAMB18E1 and fails beyond the xc7z020;
#                        CONFIG=NAME|FILE another configuration, or a configuration file
#   make synth-CONFIG    the same for another configuration (no capacity check)
#   make timing CONFIG=NAME [BOARD=B]   logic levels and estimated Fmax of a configuration
#                        (scripts/timing.sh, loomsta; docs/rtl.md "Timing"): the Yosys run of
#                        the board that has it (BOARD, or the first on its part; cached with
#                        make board-estimates), the worst paths, and a failure when the
#                        estimate is below the configuration's clock
#   make rtl-cells       the cell testbenches (tests/rtl/run_cells.sh)
#   make rtl-top         loom_top against fsim on random programs (tests/rtl/run_top.sh)
#
# For other makefiles (tsim, board flows):
#   LOOM_RTL_FILES            the sources, in dependency order (hw/rtl/loom_rtl.f)
#   LOOM_RTL_INC_<config>     the directory holding that configuration's loom_cfg.vh
#   $(call loom_rtl_incdirs,<config>)   +incdir+ flags for both include directories
#   $(GEN)/cfg_<config>/loom_cfg.vh     the rule that makes the per-config header
# loom_top.v includes "loom_cfg.vh" and "loom_isa.vh"; a build selects the
# configuration by putting $(GEN)/cfg_<config> on the include path, next to $(GEN).

LOOM_CONFIGS := tiny default large
LOOM_RTL_FILES := $(shell cat hw/rtl/loom_rtl.f)
loom_rtl_incdirs = +incdir+$(GEN) +incdir+$(GEN)/cfg_$(1)
$(foreach c,$(LOOM_CONFIGS),$(eval LOOM_RTL_INC_$(c) := $(GEN)/cfg_$(c)))
LOOM_CFG_HEADERS := $(foreach c,$(LOOM_CONFIGS),$(GEN)/cfg_$(c)/loom_cfg.vh)
LOOM_WAIVERS := hw/lint/verilator_waivers.vlt

# loomgen writes every loom_cfg_<name>.vh together with loom_isa.vh.
$(GEN)/cfg_%/loom_cfg.vh: $(GEN)/loom_isa.vh
	@mkdir -p $(dir $@)
	cp $(GEN)/loom_cfg_$*.vh $@

gen: $(LOOM_CFG_HEADERS)

# tsim builds read LOOM_RTL_INC_<config>; make sure the header is there.
$(foreach c,$(LOOM_CONFIGS),$(eval $(BUILD)/tsim/$(c)/libloom_tsim.so $(BUILD)/tsim/$(c)-mt/libloom_tsim.so: $(GEN)/cfg_$(c)/loom_cfg.vh))

.PHONY: lint synth timing rtl-cells rtl-top $(foreach c,$(LOOM_CONFIGS),lint-$(c) synth-$(c))

lint: $(foreach c,$(LOOM_CONFIGS),lint-$(c))

$(foreach c,$(LOOM_CONFIGS),lint-$(c)): lint-%: $(GEN)/cfg_%/loom_cfg.vh $(GEN)/loom_isa.vh
	verilator --lint-only -Wall $(LOOM_WAIVERS) -I$(GEN)/cfg_$* -I$(GEN) $(LOOM_RTL_FILES) \
	  --top-module loom_top
	@echo "lint $*: clean"

# CONFIG=NAME or CONFIG=FILE (a configuration file, docs/configs.md) instead of default.
ifeq ($(CONFIG),)
synth: synth-default
else
synth: $(LOOM) $(GEN)/loom_isa.vh $(LOOM_CFG_HEADERS)
	LOOM=$(LOOM) hw/synth/synth.sh $(CONFIG) $(GEN) $(BUILD)/synth/$(notdir $(basename $(CONFIG)))
endif

$(foreach c,$(LOOM_CONFIGS),synth-$(c)): synth-%: $(GEN)/cfg_%/loom_cfg.vh $(GEN)/loom_isa.vh
	hw/synth/synth.sh $* $(GEN) $(BUILD)/synth/$*

timing: $(GEN)/boards/stamp $(LOOMSTA) $(LOOM) $(LOOM_CFG_HEADERS)
	@BUILD=$(BUILD) GEN=$(GEN) LOOM=$(LOOM) LOOMGEN=$(LOOMGEN) LOOMSTA=$(LOOMSTA) \
	  scripts/timing.sh $(or $(CONFIG),default) $(BOARD)

rtl-cells: $(GEN)/loom_isa.vh
	BUILD=$(BUILD) tests/rtl/run_cells.sh

rtl-top: $(LOOM_CFG_HEADERS) $(GEN_SOURCES)
	BUILD=$(BUILD) tests/rtl/run_top.sh tiny default

SCRIPT_TESTS += tests/rtl/run_cells.sh tests/rtl/run_top.sh
TEST_DEPS += $(GEN)/loom_isa.vh $(GEN_SOURCES) $(LOOM_CFG_HEADERS)
