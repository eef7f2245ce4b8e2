# tests/netlist/module.mk - gate-level and 4-state simulation of the tiny
# configuration (docs/tsim.md "Gate-level and 4-state simulation").
#
#   make test-netlist   the RTL under Icarus Verilog with the X check, and the
#                       Yosys synth_xilinx netlist with Yosys's Xilinx cell
#                       models, each running the assembly examples and a
#                       quantized conv layer to fsim's bytes
#                       (tests/netlist/run_netlist.sh; needs iverilog, yosys)

NL_IMAGE := $(BUILD)/tests/netlist/nl_image

$(NL_IMAGE): tests/netlist/nl_image.c $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBLOOM) $(LDLIBS)

.PHONY: test-netlist
test-netlist: $(NL_IMAGE) $(LOOM) $(GEN)/cfg_tiny/loom_cfg.vh $(GEN)/loom_isa.vh \
    $(MODELS_DIR)/small/manifest.json
	BUILD=$(BUILD) LOOM=$(LOOM) NL_IMAGE=$(NL_IMAGE) tests/netlist/run_netlist.sh
