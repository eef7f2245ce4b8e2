# bitstreams/module.mk - board flows: bitstreams, xclbins, device-tree
# overlays and Yosys resource estimates (docs/boards.md, docs/deploy.md).
#
#   make bitstream BOARD=pynq-z1   Vivado (Zynq) or Vivado + v++ (XRT) build of
#                                  one board, into build/bitstreams/<board>/;
#                                  stops first, with what to install, when the
#                                  tools are not on PATH.  CONFIG=FILE: a
#                                  configuration file instead of the board's
#                                  own (Zynq boards)
#   make dtbo                      compile every board's overlay with dtc -@
#   make board-files               the generated board files in build/gen/boards
#   make board-files-fix           rewrite bitstreams/*/loom.dtso from boards.def
#   make board-estimates           Yosys (hw/synth/estimate.sh) once per
#                                  distinct (family, config, uram) of the
#                                  boards, checked against each board's part,
#                                  and loomsta's timing estimate of each board
#                                  checked against its clock; writes
#                                  build/boards/estimates.md and timing.md.
#                                  Minutes per run, so not part of `make test`.
#                                  CONFIG=FILE [PART=part]: a configuration
#                                  file instead, against its part
#
# The board -> configuration table is bitstreams/boards.def; loomgen reads
# it (so it is a prerequisite of loomgen) and generates everything else.

BOARDS_DEF := bitstreams/boards.def
BOARD_DTSO := $(wildcard bitstreams/*/loom.dtso)
BOARD_GEN := $(GEN)/boards
BOARD_OUT = $(BUILD)/bitstreams/$(BOARD)
VIVADO ?= vivado
BOARD_JOBS ?= 2

$(LOOMGEN): $(BOARDS_DEF)

# RTL for the board flows: hw/module.mk's list when it has one, else
# hw/rtl/loom_rtl.f (the RTL engineer's file list, in dependency order).
BOARD_RTL = $(or $(LOOM_RTL_FILES),$(shell cat hw/rtl/loom_rtl.f 2>/dev/null))
BOARD_WRAPPER := bitstreams/common/loom_vitis_top.v

.PHONY: bitstream bitstream-run board-files board-files-fix dtbo board-estimates

# ---------------------------------------------------------------- generated board files

# $(GEN)/loom_isa.vh's rule also writes loom_cfg_<config>.vh and .tcl.
$(BOARD_GEN)/stamp: $(LOOMGEN) $(GEN)/loom_isa.vh bitstreams/module.mk
	@mkdir -p $(BOARD_GEN)
	$(LOOMGEN) board-tcl $(BOARD_GEN)
	$(LOOMGEN) boards > $(BOARD_GEN)/boards.txt
	@while read -r name cfg flow rest; do \
	  case $$flow in \
	    vitis) $(LOOMGEN) kernel-xml $$cfg $(BOARD_GEN)/kernel_$$cfg.xml && \
	           $(LOOMGEN) vitis-cfg $$name $(BOARD_GEN)/vitis_$$name.cfg ;; \
	    *) $(LOOMGEN) dtso $$name $(BOARD_GEN)/$$name.dtso ;; \
	  esac || exit 1; \
	done < $(BOARD_GEN)/boards.txt
	@touch $@

board-files: $(BOARD_GEN)/stamp

board-files-fix: $(BOARD_GEN)/stamp
	@for f in $(BOARD_GEN)/*.dtso; do \
	  b=$$(basename $$f .dtso); mkdir -p bitstreams/$$b; \
	  cmp -s $$f bitstreams/$$b/loom.dtso || { cp $$f bitstreams/$$b/loom.dtso; echo "board-files-fix: rewrote bitstreams/$$b/loom.dtso"; }; \
	done

# ---------------------------------------------------------------- overlays

DTBO := $(patsubst bitstreams/%/loom.dtso,$(BUILD)/bitstreams/%/loom.dtbo,$(BOARD_DTSO))
dtbo: $(DTBO)

$(BUILD)/bitstreams/%/loom.dtbo: bitstreams/%/loom.dtso
	@mkdir -p $(dir $@)
	dtc -@ -q -I dts -O dtb -o $@ $<

# ---------------------------------------------------------------- bitstreams

# The tool check runs before anything is built: no point generating and
# staging for a flow that cannot run here.
bitstream:
	@bitstreams/common/require-tools.sh "$(BOARD)"
	@$(MAKE) --no-print-directory bitstream-run BOARD=$(BOARD)

# Stage the RTL flat, with the board's configuration header as loom_cfg.vh,
# so every `include resolves beside the including file in Vivado.
# CONFIG=FILE (a configuration file, docs/configs.md) replaces the board's
# own configuration on a Zynq board: its header and Tcl parameters come from
# `loom config vh/tcl` (the flow reads LOOM_CFG_TCL), it is checked against
# the board's part first, and the overlay gets its clock.
bitstream-run: $(BOARD_GEN)/stamp $(if $(CONFIG),$(LOOM))
	@cfg=$$(awk -v b=$(BOARD) '$$1 == b { print $$2 }' $(BOARD_GEN)/boards.txt); \
	flow=$$(awk -v b=$(BOARD) '$$1 == b { print $$3 }' $(BOARD_GEN)/boards.txt); \
	part=$$(awk -v b=$(BOARD) '$$1 == b { print $$4 }' $(BOARD_GEN)/boards.txt); \
	set -e; rm -rf $(BOARD_OUT)/src; mkdir -p $(BOARD_OUT)/src; \
	cp $(BOARD_RTL) $(BOARD_WRAPPER) $(GEN)/loom_isa.vh $(BOARD_OUT)/src/; \
	if [ -n "$(CONFIG)" ]; then \
	  if [ "$$flow" = vitis ]; then \
	    echo "bitstream: CONFIG=FILE is for the Zynq boards; $(BOARD)'s Vitis flow builds its own configuration ($$cfg)" >&2; \
	    exit 1; \
	  fi; \
	  $(LOOM) config check $(CONFIG) --part $$part; \
	  $(LOOM) config vh $(CONFIG) > $(BOARD_OUT)/src/loom_cfg.vh; \
	  $(LOOM) config tcl $(CONFIG) > $(BOARD_OUT)/loom_cfg.tcl; \
	  LOOM_CFG_TCL=$(abspath $(BOARD_OUT))/loom_cfg.tcl; export LOOM_CFG_TCL; \
	  cfg="$(CONFIG)"; \
	else \
	  cp $(GEN)/loom_cfg_$$cfg.vh $(BOARD_OUT)/src/loom_cfg.vh; \
	fi; \
	echo "bitstream: $(BOARD), configuration $$cfg, Vivado log in $(BOARD_OUT)/vivado.log"; \
	$(VIVADO) -mode batch -notrace -nojournal -log $(BOARD_OUT)/vivado.log \
	  -source bitstreams/$(BOARD)/build.tcl -tclargs $(GEN) $(BOARD_OUT)/src $(BOARD_OUT) $(BOARD_JOBS); \
	if [ "$$flow" = vitis ]; then \
	  bitstreams/common/vitis-link.sh $(BOARD) $(BOARD_GEN) $(BOARD_OUT); \
	else \
	  dtso=bitstreams/$(BOARD)/loom.dtso; \
	  if [ -n "$(CONFIG)" ]; then \
	    mhz=$$(sed -n 's/^`define LOOM_CFG_CLOCK_MHZ //p' $(BOARD_OUT)/src/loom_cfg.vh); \
	    sed "s/assigned-clock-rates = <[0-9]*>/assigned-clock-rates = <$$((mhz * 1000000))>/" $$dtso \
	      > $(BOARD_OUT)/loom.dtso; dtso=$(BOARD_OUT)/loom.dtso; \
	  fi; \
	  dtc -@ -q -I dts -O dtb -o $(BOARD_OUT)/loom.dtbo $$dtso; \
	  if [ -f bitstreams/$(BOARD)/shell.json ]; then cp bitstreams/$(BOARD)/shell.json $(BOARD_OUT)/; fi; \
	  echo "bitstream: $(BOARD_OUT)/loom.bit, loom.bit.bin, loom.hwh, loom.dtbo (docs/deploy.md)"; \
	fi

# ---------------------------------------------------------------- Yosys estimates

# CONFIG=FILE [PART=part]: that configuration file alone, against PART (default its own).
board-estimates: $(BOARD_GEN)/stamp $(LOOMSTA) $(if $(CONFIG),$(LOOM))
	@BUILD=$(BUILD) GEN=$(GEN) LOOM=$(LOOM) LOOMGEN=$(LOOMGEN) LOOMSTA=$(LOOMSTA) CONFIG=$(CONFIG) PART=$(PART) \
	  bitstreams/common/yosys-estimate.sh $(BOARD_RTL)

# ---------------------------------------------------------------- tests

SCRIPT_TESTS += tests/boards/test_board_files.sh tests/boards/test_tcl_flows.sh tests/boards/test_wrapper.sh \
  tests/boards/test_make_bitstream.sh
TEST_DEPS += $(BOARD_GEN)/stamp
