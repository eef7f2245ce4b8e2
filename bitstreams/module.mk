# bitstreams/module.mk - board flows: bitstreams, xclbins, device-tree
# overlays and Yosys resource estimates (docs/boards.md, docs/deploy.md).
#
#   make bitstream BOARD=pynq-z1   Vivado (Zynq) or Vivado + v++ (XRT) build of
#                                  one board, into build/bitstreams/<board>/;
#                                  stops first, with what to install, when the
#                                  tools are not on PATH
#   make dtbo                      compile every board's overlay with dtc -@
#   make board-files               the generated board files in build/gen/boards
#   make board-files-fix           rewrite bitstreams/*/loom.dtso from boards.def
#   make board-estimates           Yosys (hw/synth/loom_synth.tcl) once per
#                                  distinct (family, config, uram) of the
#                                  boards, checked against each board's part,
#                                  and loomsta's timing estimate of each board
#                                  checked against its clock; writes
#                                  build/boards/estimates.md and timing.md.
#                                  Minutes per run, so not part of `make test`
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
bitstream-run: $(BOARD_GEN)/stamp
	@cfg=$$(awk -v b=$(BOARD) '$$1 == b { print $$2 }' $(BOARD_GEN)/boards.txt); \
	flow=$$(awk -v b=$(BOARD) '$$1 == b { print $$3 }' $(BOARD_GEN)/boards.txt); \
	set -e; rm -rf $(BOARD_OUT)/src; mkdir -p $(BOARD_OUT)/src; \
	cp $(BOARD_RTL) $(BOARD_WRAPPER) $(GEN)/loom_isa.vh $(BOARD_OUT)/src/; \
	cp $(GEN)/loom_cfg_$$cfg.vh $(BOARD_OUT)/src/loom_cfg.vh; \
	echo "bitstream: $(BOARD), configuration $$cfg, Vivado log in $(BOARD_OUT)/vivado.log"; \
	$(VIVADO) -mode batch -notrace -nojournal -log $(BOARD_OUT)/vivado.log \
	  -source bitstreams/$(BOARD)/build.tcl -tclargs $(GEN) $(BOARD_OUT)/src $(BOARD_OUT) $(BOARD_JOBS); \
	if [ "$$flow" = vitis ]; then \
	  bitstreams/common/vitis-link.sh $(BOARD) $(BOARD_GEN) $(BOARD_OUT); \
	else \
	  dtc -@ -q -I dts -O dtb -o $(BOARD_OUT)/loom.dtbo bitstreams/$(BOARD)/loom.dtso; \
	  if [ -f bitstreams/$(BOARD)/shell.json ]; then cp bitstreams/$(BOARD)/shell.json $(BOARD_OUT)/; fi; \
	  echo "bitstream: $(BOARD_OUT)/loom.bit, loom.bit.bin, loom.hwh, loom.dtbo (docs/deploy.md)"; \
	fi

# ---------------------------------------------------------------- Yosys estimates

board-estimates: $(BOARD_GEN)/stamp $(LOOMSTA)
	@BUILD=$(BUILD) GEN=$(GEN) LOOMSTA=$(LOOMSTA) bitstreams/common/yosys-estimate.sh $(BOARD_RTL)

# ---------------------------------------------------------------- tests

SCRIPT_TESTS += tests/boards/test_board_files.sh tests/boards/test_tcl_flows.sh tests/boards/test_wrapper.sh \
  tests/boards/test_make_bitstream.sh
TEST_DEPS += $(BOARD_GEN)/stamp
