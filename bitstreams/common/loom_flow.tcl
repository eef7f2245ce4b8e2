# loom_flow.tcl - the Vivado batch flows shared by every board.
#
# A board's build.tcl sources this file and calls one entry point:
#
#   loom::build_zynq  NAME        Zynq-7000 and Zynq UltraScale+ boards:
#                                 package the IP, build the block design,
#                                 synthesize, implement, write loom.bit,
#                                 loom.hwh, loom.xsa, loom.bit.bin and the
#                                 timing and utilization reports
#   loom::build_xo    NAME        XRT platforms: package the IP as an RTL
#                                 kernel and write loom.xo for `v++ -l`
#
# Everything the flow needs to know about the board and its hardware
# configuration comes from two files loomgen generated from the single
# sources (bitstreams/boards.def, hw/spec/loom_configs.def):
# GEN/boards/loom_board_<name>.tcl (dict loom_board) and
# GEN/loom_cfg_<config>.tcl (dict loom_cfg), or the file $LOOM_CFG_TCL names
# (`loom config tcl FILE`, for `make bitstream CONFIG=FILE`); the XRT flow adds
# GEN/boards/kernel_<config>.xml.  Nothing here restates a part, a clock or an address.
#
# `make bitstream BOARD=<name>` stages the RTL into OUT/src (hw/rtl, the
# wrapper bitstreams/common/loom_vitis_top.v, loom_isa.vh and the board's
# loom_cfg_<config>.vh renamed loom_cfg.vh, all in one directory so that
# every `include resolves beside the including file) and runs
#
#   vivado -mode batch -source bitstreams/<name>/build.tcl \
#          -tclargs GEN_DIR SRC_DIR OUT_DIR JOBS
#
# All projects live under OUT (build/bitstreams/<name>/); nothing generated
# is written into the source tree.  Written for Vivado 2022.2 (the version
# in boards.def); another version only draws a warning.  The tests in
# tests/boards run these procs under tclsh with Vivado's commands stubbed
# (tests/boards/vivado_stubs.tcl), so keep to commands that file knows.

namespace eval loom {
  # The block design and the IP instance, as the .hwh and the overlay see them.
  variable bd_name loom_bd
  variable ip_inst loom
}

# ---------------------------------------------------------------- setup

# loom::start NAME ARGV -> the board dict, with the configuration under
# `cfg` and the directories under `gen`, `src`, `out`, and `jobs`.
proc loom::start {name argv} {
  if {[llength $argv] != 4} {
    error "usage: vivado -mode batch -source bitstreams/$name/build.tcl -tclargs GEN_DIR SRC_DIR OUT_DIR JOBS\
           (`make bitstream BOARD=$name` passes these)"
  }
  lassign $argv gen src out jobs
  set board_file [file join $gen boards loom_board_$name.tcl]
  if {![file exists $board_file]} {
    error "$board_file is missing: run `make bitstream BOARD=$name`, which generates it"
  }
  source $board_file
  set b $loom_board
  if {[info exists ::env(LOOM_CFG_TCL)] && $::env(LOOM_CFG_TCL) ne ""} {
    # make bitstream BOARD=... CONFIG=FILE: a configuration file's parameters
    # (`loom config tcl FILE`) instead of the board's own configuration
    source $::env(LOOM_CFG_TCL)
    dict set b config [dict get $loom_cfg name]
  } else {
    source [file join $gen loom_cfg_[dict get $b config].tcl]
  }
  dict set b cfg $loom_cfg
  dict set b gen [file normalize $gen]
  dict set b src [file normalize $src]
  dict set b out [file normalize $out]
  dict set b jobs $jobs
  file mkdir [dict get $b out]
  loom::check_version $b
  if {[info exists ::env(LOOM_BOARD_REPO)]} {
    set_param board.repoPaths [list $::env(LOOM_BOARD_REPO)]
  }
  puts "loom: board [dict get $b name], configuration [dict get $b config]\
        ([dict get $b cfg hash]), part [dict get $b part], [dict get $b cfg clock_mhz] MHz"
  return $b
}

proc loom::check_version {b} {
  set want [dict get $b vivado_version]
  set have [version -short]
  if {$have ne $want} {
    puts "WARNING: loom: this flow was written for Vivado $want; running $have.\
          IP versions are looked up, not fixed, so it usually works; report what breaks."
  }
}

# The newest version of a Xilinx IP, so the scripts survive Vivado updates
# that bump processing_system7, zynq_ultra_ps_e or smartconnect.
proc loom::ipdef {name} {
  set defs [lsort -dictionary [get_ipdefs -all xilinx.com:ip:$name:*]]
  if {[llength $defs] == 0} {
    error "IP xilinx.com:ip:$name not in the catalog: is the device family installed?"
  }
  return [lindex $defs end]
}

# The board part matching the board's pattern, or "" with a warning.  The
# overlay is loaded at run time on a running Linux, so the PS presets only
# matter for the .xsa (boot images); the bitstream itself needs none.
proc loom::board_part {b} {
  set pattern [dict get $b board_part]
  if {$pattern eq ""} {
    return ""
  }
  set found [lsort -dictionary [get_board_parts -quiet -latest_file_version $pattern]]
  if {[llength $found] == 0} {
    puts "WARNING: loom: no board files match $pattern; building for the bare part\
          [dict get $b part] without PS presets (fine for bitstream + overlay, not for a\
          boot image).  Install them with the Vivado Board Store (xhub) or point\
          LOOM_BOARD_REPO at a checkout of the vendor's board files."
    return ""
  }
  return [lindex $found end]
}

# A project under OUT; with_board: also select the board part, for the
# PS presets (the IP project needs only the part).
proc loom::new_project {b name with_board} {
  set dir [file join [dict get $b out] $name]
  create_project -force $name $dir -part [dict get $b part]
  if {$with_board} {
    set bp [loom::board_part $b]
    if {$bp ne ""} {
      set_property board_part $bp [current_project]
    }
  }
  set_property target_language Verilog [current_project]
  return $dir
}

# ---------------------------------------------------------------- IP

# Set a bus parameter, adding it when the packager did not infer it.
proc loom::bus_param {core busif name value} {
  set bi [ipx::get_bus_interfaces $busif -of_objects $core]
  set p [ipx::get_bus_parameters -quiet $name -of_objects $bi]
  if {$p eq ""} {
    set p [ipx::add_bus_parameter $name $bi]
  }
  set_property value $value $p
}

# Infer a single-signal interface (clock, reset, interrupt) unless the
# packager already did, which it normally does from the port names.
proc loom::signal_if {core port kind} {
  if {[ipx::get_bus_interfaces -quiet $port -of_objects $core] eq ""} {
    ipx::infer_bus_interface $port xilinx.com:signal:${kind}_rtl:1.0 $core
  }
}

# Package the staged RTL (OUT/src) as the IP named by the board's ip_vlnv,
# into OUT/ip.  kernel: 1 marks it as a Vitis RTL kernel.
proc loom::package_ip {b kernel} {
  set ipdir [file join [dict get $b out] ip]
  file delete -force $ipdir
  loom::new_project $b ip_project 0
  set src [dict get $b src]
  add_files -norecurse [lsort [glob -directory $src *.v]]
  add_files -norecurse [lsort [glob -directory $src *.vh]]
  set_property file_type {Verilog Header} [get_files -of_objects [current_fileset] *.vh]
  set_property include_dirs [list $src] [current_fileset]
  set_property top loom_vitis_top [current_fileset]
  update_compile_order -fileset sources_1

  lassign [split [dict get $b ip_vlnv] :] vendor library name version
  ipx::package_project -root_dir $ipdir -vendor $vendor -library $library \
    -taxonomy [expr {$kernel ? "/KernelIP" : "/UserIP"}] -import_files -set_current true
  set core [ipx::current_core]
  set_property name $name $core
  set_property version $version $core
  set_property display_name "Loom accelerator ([dict get $b config])" $core
  set_property description "Loom deep-learning accelerator, configuration\
    [dict get $b config], hash [dict get $b cfg hash]" $core

  ipx::infer_bus_interfaces xilinx.com:interface:aximm_rtl:1.0 $core
  loom::signal_if $core ap_clk clock
  loom::signal_if $core ap_rst_n reset
  loom::signal_if $core interrupt interrupt
  ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk $core
  ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk $core
  ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core
  loom::bus_param $core ap_rst_n POLARITY ACTIVE_LOW
  loom::bus_param $core interrupt SENSITIVITY LEVEL_HIGH
  loom::control_map $core

  if {$kernel} {
    set_property sdx_kernel true $core
    set_property sdx_kernel_type rtl $core
  }
  ipx::create_xgui_files $core
  ipx::update_checksums $core
  if {$kernel} {
    ipx::check_integrity -kernel $core
  } else {
    ipx::check_integrity $core
  }
  ipx::save_core $core
  close_project -delete
  return $ipdir
}

# The control slave's memory map: one 4 KiB block (the 12-bit AXI-Lite
# address of loom_top), so the block design can give it an address.
proc loom::control_map {core} {
  set bi [ipx::get_bus_interfaces s_axi_control -of_objects $core]
  if {[ipx::get_memory_maps -quiet s_axi_control -of_objects $core] eq ""} {
    set mm [ipx::add_memory_map s_axi_control $core]
    set_property slave_memory_map_ref s_axi_control $bi
    set blk [ipx::add_address_block reg0 $mm]
    set_property range 4096 $blk
    set_property width 32 $blk
  }
}

# ---------------------------------------------------------------- block design

# The PS pins each family uses; the device-tree side of the same choice is
# the LOOM_FLOWS row of bitstreams/boards.def (IRQ_F2P[0] = SPI 29 + 32,
# pl_ps_irq0[0] = SPI 89 + 32; FCLK_CLK0 = clkc 15, pl_clk0 = zynqmp_clk 71).
proc loom::ps_pins {flow} {
  switch -- $flow {
    zynq7 {
      return [dict create ip processing_system7 rule xilinx.com:bd_rule:processing_system7 \
        clk FCLK_CLK0 rstn FCLK_RESET0_N irq IRQ_F2P \
        master M_AXI_GP0 master_clk M_AXI_GP0_ACLK slave S_AXI_HP0 slave_clk S_AXI_HP0_ACLK]
    }
    zynqmp {
      return [dict create ip zynq_ultra_ps_e rule xilinx.com:bd_rule:zynq_ultra_ps_e \
        clk pl_clk0 rstn pl_resetn0 irq pl_ps_irq0 \
        master M_AXI_HPM0_FPD master_clk maxihpm0_fpd_aclk \
        slave S_AXI_HP0_FPD slave_clk saxihp0_fpd_aclk]
    }
    default {
      error "flow $flow has no processing system"
    }
  }
}

# PS settings: one master for control, one HP slave for DRAM as wide as the
# accelerator's bus (up to the port's maximum), one fabric interrupt, and
# the PL clock at the configuration's clock_mhz.
proc loom::ps_config {b} {
  set mhz [dict get $b cfg clock_mhz]
  set bus [dict get $b cfg bus_bits]
  switch -- [dict get $b flow] {
    zynq7 {
      # HP0 is 32 or 64 bits wide.
      return [list CONFIG.PCW_USE_M_AXI_GP0 1 CONFIG.PCW_USE_M_AXI_GP1 0 \
        CONFIG.PCW_USE_S_AXI_HP0 1 CONFIG.PCW_S_AXI_HP0_DATA_WIDTH [expr {min($bus, 64)}] \
        CONFIG.PCW_USE_FABRIC_INTERRUPT 1 CONFIG.PCW_IRQ_F2P_INTR 1 \
        CONFIG.PCW_EN_CLK0_PORT 1 CONFIG.PCW_EN_RST0_PORT 1 \
        CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ $mhz]
    }
    zynqmp {
      # HPM0_FPD at 32 bits (control only); HPM1_FPD and HPM0_LPD off, since
      # an enabled master with an unconnected clock fails validation.  HP0
      # (SAXIGP2) is 32, 64 or 128 bits wide.
      return [list CONFIG.PSU__USE__M_AXI_GP0 1 CONFIG.PSU__MAXIGP0__DATA_WIDTH 32 \
        CONFIG.PSU__USE__M_AXI_GP1 0 CONFIG.PSU__USE__M_AXI_GP2 0 \
        CONFIG.PSU__USE__S_AXI_GP2 1 CONFIG.PSU__SAXIGP2__DATA_WIDTH [expr {min($bus, 128)}] \
        CONFIG.PSU__USE__IRQ0 1 CONFIG.PSU__FPGA_PL0_ENABLE 1 \
        CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ $mhz]
    }
  }
}

proc loom::bd_cell {vlnv name} {
  return [create_bd_cell -type ip -vlnv $vlnv $name]
}

# Build and validate the block design:
#
#   PS master --SmartConnect--> loom s_axi_control       (base/span from boards.def)
#   loom m_axi_gmem --SmartConnect--> PS HP slave        (AXI4 -> AXI3 and 64 -> 32/49 bits)
#   loom interrupt --> PS fabric interrupt 0
#   PS PL clock 0 --> everything; proc_sys_reset from the PS PL reset
proc loom::zynq_bd {b has_board} {
  variable bd_name
  variable ip_inst
  set p [loom::ps_pins [dict get $b flow]]
  create_bd_design $bd_name
  set ps [loom::bd_cell [loom::ipdef [dict get $p ip]] ps]
  if {[dict get $b flow] eq "zynq7"} {
    # Makes DDR and FIXED_IO external (the PS7 needs them even without
    # board presets); Master/Slave Disable: we wire the AXI ports ourselves.
    apply_bd_automation -rule [dict get $p rule] -config [list make_external "FIXED_IO, DDR" \
      apply_board_preset [expr {$has_board ? 1 : 0}] Master Disable Slave Disable] $ps
  } elseif {$has_board} {
    apply_bd_automation -rule [dict get $p rule] -config {apply_board_preset 1} $ps
  }
  set_property -dict [loom::ps_config $b] $ps

  loom::bd_cell [dict get $b ip_vlnv] $ip_inst
  set smc_ctrl [loom::bd_cell [loom::ipdef smartconnect] smc_ctrl]
  set smc_mem [loom::bd_cell [loom::ipdef smartconnect] smc_mem]
  set_property -dict [list CONFIG.NUM_SI 1 CONFIG.NUM_MI 1] $smc_ctrl
  set_property -dict [list CONFIG.NUM_SI 1 CONFIG.NUM_MI 1] $smc_mem
  loom::bd_cell [loom::ipdef proc_sys_reset] rst_pl

  connect_bd_net [get_bd_pins ps/[dict get $p clk]] [get_bd_pins ps/[dict get $p master_clk]] \
    [get_bd_pins ps/[dict get $p slave_clk]] [get_bd_pins $ip_inst/ap_clk] \
    [get_bd_pins smc_ctrl/aclk] [get_bd_pins smc_mem/aclk] [get_bd_pins rst_pl/slowest_sync_clk]
  connect_bd_net [get_bd_pins ps/[dict get $p rstn]] [get_bd_pins rst_pl/ext_reset_in]
  connect_bd_net [get_bd_pins rst_pl/interconnect_aresetn] [get_bd_pins smc_ctrl/aresetn] \
    [get_bd_pins smc_mem/aresetn]
  connect_bd_net [get_bd_pins rst_pl/peripheral_aresetn] [get_bd_pins $ip_inst/ap_rst_n]
  connect_bd_intf_net [get_bd_intf_pins ps/[dict get $p master]] [get_bd_intf_pins smc_ctrl/S00_AXI]
  connect_bd_intf_net [get_bd_intf_pins smc_ctrl/M00_AXI] [get_bd_intf_pins $ip_inst/s_axi_control]
  connect_bd_intf_net [get_bd_intf_pins $ip_inst/m_axi_gmem] [get_bd_intf_pins smc_mem/S00_AXI]
  connect_bd_intf_net [get_bd_intf_pins smc_mem/M00_AXI] [get_bd_intf_pins ps/[dict get $p slave]]
  connect_bd_net [get_bd_pins $ip_inst/interrupt] [get_bd_pins ps/[dict get $p irq]]

  loom::assign_addresses $b [dict get $p slave]
  validate_bd_design
  save_bd_design
}

# The control window at the address the overlay names; the master sees
# only the DRAM segments of the HP port (not OCM, QSPI or PCIe windows).
proc loom::assign_addresses {b slave} {
  variable ip_inst
  set span [expr {[dict get $b span] / 1024}]K
  assign_bd_address -offset [dict get $b base] -range $span \
    -target_address_space [get_bd_addr_spaces ps/Data] \
    [get_bd_addr_segs -of_objects [get_bd_intf_pins $ip_inst/s_axi_control]]
  set mem_space [get_bd_addr_spaces $ip_inst/m_axi_gmem]
  set n 0
  foreach seg [get_bd_addr_segs -of_objects [get_bd_intf_pins ps/$slave]] {
    if {[string match *DDR* [get_property NAME $seg]]} {
      assign_bd_address -target_address_space $mem_space $seg
      incr n
    }
  }
  if {$n == 0} {
    error "no DDR segment behind ps/$slave"
  }
}

# ---------------------------------------------------------------- implementation

# Buffers to UltraRAM where the board asks for it (boards.def `uram`, the
# instances in LOOM_URAM_BUFFERS; the Yosys estimate sets the same
# ram_style).  Vivado infers UltraRAM only when told to.
proc loom::ram_style_xdc {b} {
  set xdc [file join [dict get $b out] loom_ram_style.xdc]
  set f [open $xdc w]
  puts $f "# Generated by bitstreams/common/loom_flow.tcl (board [dict get $b name]: uram 1)."
  foreach buf [dict get $b uram_buffers] {
    puts $f "set_property RAM_STYLE ULTRA \[get_cells -hierarchical -filter {NAME =~ */u_top/$buf/*mem_reg*}\]"
  }
  close $f
  add_files -fileset constrs_1 -norecurse $xdc
  set_property used_in_implementation false [get_files $xdc]
}

proc loom::run {name args} {
  launch_runs $name {*}$args
  wait_on_run $name
  if {[get_property PROGRESS [get_runs $name]] ne "100%"} {
    error "$name failed ([get_property STATUS [get_runs $name]]); see the run's log under\
           [get_property DIRECTORY [get_runs $name]]"
  }
}

# Timing must be met: a bitstream with negative slack computes garbage on
# some boards some of the time.  LOOM_ALLOW_TIMING_FAILURE=1 keeps it anyway.
proc loom::check_timing {b} {
  set out [dict get $b out]
  report_timing_summary -max_paths 20 -report_unconstrained -file [file join $out timing.rpt]
  report_utilization -file [file join $out utilization.rpt]
  report_utilization -hierarchical -file [file join $out utilization_hier.rpt]
  set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
  set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
  puts "loom: WNS $wns ns, WHS $whs ns at [dict get $b cfg clock_mhz] MHz (timing.rpt)"
  if {$wns < 0 || $whs < 0} {
    set msg "timing not met at [dict get $b cfg clock_mhz] MHz (WNS $wns ns, WHS $whs ns);\
             see $out/timing.rpt"
    if {![info exists ::env(LOOM_ALLOW_TIMING_FAILURE)] || $::env(LOOM_ALLOW_TIMING_FAILURE) ne "1"} {
      error $msg
    }
    puts "WARNING: loom: $msg (kept: LOOM_ALLOW_TIMING_FAILURE=1)"
  }
}

# Copy the bitstream and hardware handoff under the names PYNQ expects (the
# .hwh beside the .bit with the same stem), write the .xsa, and convert the
# bitstream to the .bit.bin the Linux FPGA manager loads.
proc loom::export {b proj_dir} {
  variable bd_name
  set out [dict get $b out]
  set top [get_property top [current_fileset]]
  file copy -force [file join [get_property DIRECTORY [get_runs impl_1]] $top.bit] \
    [file join $out loom.bit]
  set hwh [glob -nocomplain [file join $proj_dir *.gen sources_1 bd $bd_name hw_handoff $bd_name.hwh] \
    [file join $proj_dir *.srcs sources_1 bd $bd_name hw_handoff $bd_name.hwh]]
  if {[llength $hwh] == 0} {
    error "no $bd_name.hwh under $proj_dir"
  }
  file copy -force [lindex $hwh 0] [file join $out loom.hwh]
  write_hw_platform -fixed -include_bit -force -file [file join $out loom.xsa]
  loom::bit_bin $b
}

proc loom::bit_bin {b} {
  set out [dict get $b out]
  set bit [file join $out loom.bit]
  set bif [file join $out loom.bif]
  if {[dict get $b flow] eq "zynq7"} {
    set arch zynq
    set body "\t$bit"
  } else {
    set arch zynqmp
    set body "\t\[destination_device = pl\] $bit"
  }
  set f [open $bif w]
  puts $f "all:\n{\n$body\n}"
  close $f
  # bootgen writes loom.bit.bin beside loom.bit.
  set cmd [list bootgen -image $bif -arch $arch -process_bitstream bin -w on]
  if {[catch {exec {*}$cmd} msg]} {
    puts "WARNING: loom: bootgen failed ($msg); loom.bit.bin is missing.  Run `$cmd`\
          where bootgen is installed (it ships with Vivado and Vitis)."
  }
}

# ---------------------------------------------------------------- entry points

proc loom::build_zynq {name argv} {
  variable bd_name
  set b [loom::start $name $argv]
  set ipdir [loom::package_ip $b 0]

  set proj_dir [loom::new_project $b loom_[dict get $b name] 1]
  set has_board [expr {[get_property board_part [current_project]] ne ""}]
  set_property ip_repo_paths [list $ipdir] [current_project]
  update_ip_catalog
  loom::zynq_bd $b $has_board

  set bd_file [get_files $bd_name.bd]
  # Global synthesis: one synth_1 run for the whole design, so the
  # RAM_STYLE constraints below reach into the Loom IP.
  set_property synth_checkpoint_mode None $bd_file
  generate_target all $bd_file
  add_files -norecurse [make_wrapper -files $bd_file -top]
  set_property top ${bd_name}_wrapper [current_fileset]
  update_compile_order -fileset sources_1
  if {[dict get $b uram]} {
    loom::ram_style_xdc $b
  }

  loom::run synth_1 -jobs [dict get $b jobs]
  loom::run impl_1 -to_step write_bitstream -jobs [dict get $b jobs]
  open_run impl_1
  loom::check_timing $b
  loom::export $b $proj_dir
  puts "loom: wrote [dict get $b out]/loom.bit, loom.hwh, loom.xsa, loom.bit.bin"
}

proc loom::build_xo {name argv} {
  set b [loom::start $name $argv]
  set ipdir [loom::package_ip $b 1]
  set xml [file join [dict get $b gen] boards kernel_[dict get $b config].xml]
  set xo [file join [dict get $b out] loom.xo]
  package_xo -force -xo_path $xo -kernel_name [dict get $b kernel] -ip_directory $ipdir \
    -kernel_xml $xml
  puts "loom: wrote $xo; `make bitstream` links it with v++ next"
}
