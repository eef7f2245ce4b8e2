# vivado_stubs.tcl - just enough of Vivado's Tcl commands, as plain-tclsh
# procs, to run the board flows (bitstreams/*/build.tcl) in a dry mode.
#
# Every stubbed call is appended to ::vivado::calls as one string, so a test
# can assert what the flow asked Vivado to do (part, clock, addresses...).
# Properties set with set_property are remembered per object and returned by
# get_property.  The stubs create the files Vivado would (the bitstream in
# the run directory, the .hwh under the project's .gen tree, the .xsa, the
# .bit.bin from bootgen, the .xo), so the flow's own file handling runs too.
# A command that is neither Tcl nor stubbed here is an error: a misspelt
# Vivado command fails the test instead of being silently ignored.
#
# The stubs describe the Vivado 2022.2 commands as documented (UG835); they
# check the flow's control flow and plumbing, not Vivado's behaviour.

namespace eval ipx {}

namespace eval vivado {
  variable calls {}
  variable props [dict create]
  variable project ""
  variable project_dir ""
  variable runs_dir ""
  variable bd ""
  variable board_files 0
}

proc vivado::log {args} {
  variable calls
  lappend calls [join $args " "]
}

# Options of the form -name value or -flag, against a list of flags that
# take no value.  Returns {options positional}.
proc vivado::opts {argl flags} {
  set o [dict create]
  set pos {}
  for {set i 0} {$i < [llength $argl]} {incr i} {
    set a [lindex $argl $i]
    if {[string match -* $a] && ![string is double -strict $a]} {
      if {[lsearch -exact $flags $a] >= 0} {
        dict set o $a 1
      } else {
        incr i
        dict set o $a [lindex $argl $i]
      }
    } else {
      lappend pos $a
    }
  }
  return [list $o $pos]
}

proc vivado::touch {path} {
  file mkdir [file dirname $path]
  set f [open $path w]
  puts $f "stub"
  close $f
}

# ---- properties

proc set_property {args} {
  vivado::log set_property {*}$args
  if {[lindex $args 0] eq "-dict"} {
    set kv [lindex $args 1]
    set objs [lrange $args 2 end]
  } else {
    set kv [list [lindex $args 0] [lindex $args 1]]
    set objs [lrange $args 2 end]
  }
  if {[llength $kv] % 2} {
    error "set_property -dict: odd key/value list: $kv"
  }
  foreach obj $objs {
    foreach {k v} $kv {
      dict set vivado::props $obj [string toupper $k] $v
    }
  }
}

proc get_property {args} {
  lassign [vivado::opts $args {-quiet}] o pos
  lassign $pos name obj
  set key [string toupper $name]
  if {[dict exists $vivado::props $obj $key]} {
    return [dict get $vivado::props $obj $key]
  }
  switch -- $key {
    PROGRESS { return 100% }
    STATUS { return "write_bitstream Complete!" }
    DIRECTORY { return [file join $vivado::runs_dir [string map {run: ""} $obj]] }
    SLACK { return 0.250 }
    NAME { return [lindex [split $obj /] end] }
    BOARD_PART { return "" }
    TOP { return "" }
  }
  error "get_property: stub has no value for $name of $obj"
}

proc set_param {args} { vivado::log set_param {*}$args }
proc version {args} { return 2022.2 }

# ---- projects and files

proc create_project {args} {
  vivado::log create_project {*}$args
  lassign [vivado::opts $args {-force -in_memory}] o pos
  lassign $pos name dir
  if {![dict exists $o -part]} {
    error "create_project: no -part"
  }
  set vivado::project $name
  set vivado::project_dir $dir
  set vivado::runs_dir [file join $dir $name.runs]
  file mkdir $dir
  return project:$name
}
proc current_project {args} { return project:$vivado::project }
proc current_fileset {args} { return fileset:sources_1 }
proc close_project {args} { vivado::log close_project {*}$args }
proc add_files {args} {
  vivado::log add_files {*}$args
  lassign [vivado::opts $args {-norecurse}] o pos
  foreach f [concat {*}$pos] {
    if {![file exists $f]} {
      error "add_files: $f does not exist"
    }
  }
}
proc get_files {args} { return file:[lindex $args end] }
proc update_compile_order {args} {}
proc update_ip_catalog {args} { vivado::log update_ip_catalog }
# Set vivado::board_files 1 to pretend the board files are installed: the
# pattern then matches one board part.
proc get_board_parts {args} {
  vivado::log get_board_parts {*}$args
  if {!$vivado::board_files} {
    return ""
  }
  return [string map {* x} [lindex $args end]]
}
proc get_ipdefs {args} {
  set pattern [lindex $args end]
  return [list [string map {* 1.0} $pattern] [string map {* 1.1} $pattern]]
}

# ---- IP packager

proc ipx::package_project {args} {
  vivado::log ipx::package_project {*}$args
  lassign [vivado::opts $args {-import_files -force -generated_files}] o pos
  vivado::touch [file join [dict get $o -root_dir] component.xml]
}
proc ipx::current_core {args} { return core }
proc ipx::infer_bus_interfaces {args} { vivado::log ipx::infer_bus_interfaces {*}$args }
proc ipx::infer_bus_interface {args} { vivado::log ipx::infer_bus_interface {*}$args }
proc ipx::get_bus_interfaces {args} {
  lassign [vivado::opts $args {-quiet}] o pos
  return busif:[lindex $pos 0]
}
proc ipx::get_bus_parameters {args} { return "" }
proc ipx::add_bus_parameter {name busif} { return param:$busif:$name }
proc ipx::associate_bus_interfaces {args} { vivado::log ipx::associate_bus_interfaces {*}$args }
proc ipx::get_memory_maps {args} { return "" }
proc ipx::add_memory_map {name core} { return mmap:$name }
proc ipx::add_address_block {name mm} { return block:$name }
proc ipx::create_xgui_files {args} {}
proc ipx::update_checksums {args} {}
proc ipx::check_integrity {args} { vivado::log ipx::check_integrity {*}$args }
proc ipx::save_core {args} { vivado::log ipx::save_core {*}$args }

# ---- block design

proc create_bd_design {name} {
  vivado::log create_bd_design $name
  set vivado::bd $name
  return bd:$name
}
proc create_bd_cell {args} {
  vivado::log create_bd_cell {*}$args
  lassign [vivado::opts $args {}] o pos
  if {[dict get $o -type] ne "ip" || ![dict exists $o -vlnv]} {
    error "create_bd_cell: expected -type ip -vlnv"
  }
  if {[llength [split [dict get $o -vlnv] :]] != 4} {
    error "create_bd_cell: VLNV [dict get $o -vlnv] is not vendor:library:name:version"
  }
  return [lindex $pos 0]
}
proc apply_bd_automation {args} { vivado::log apply_bd_automation {*}$args }
proc get_bd_pins {args} { return [lindex $args end] }
proc get_bd_intf_pins {args} { return [lindex $args end] }
proc connect_bd_net {args} {
  vivado::log connect_bd_net {*}$args
  if {[llength $args] < 2} {
    error "connect_bd_net: needs two pins"
  }
}
proc connect_bd_intf_net {args} {
  vivado::log connect_bd_intf_net {*}$args
  if {[llength $args] != 2} {
    error "connect_bd_intf_net: needs exactly two interfaces"
  }
}
proc get_bd_addr_spaces {args} { return space:[lindex $args end] }
proc get_bd_addr_segs {args} {
  lassign [vivado::opts $args {}] o pos
  set of [dict get $o -of_objects]
  switch -glob -- $of {
    */s_axi_control { return $of/reg0 }
    ps/S_AXI_HP0 { return [list ps/S_AXI_HP0/HP0_DDR_LOWOCM] }
    ps/S_AXI_HP0_FPD {
      return [list ps/SAXIGP2/HP0_DDR_HIGH ps/SAXIGP2/HP0_DDR_LOW ps/SAXIGP2/HP0_LPS_OCM \
        ps/SAXIGP2/HP0_QSPI]
    }
  }
  error "get_bd_addr_segs: stub knows no segments of $of"
}
proc assign_bd_address {args} { vivado::log assign_bd_address {*}$args }
proc validate_bd_design {args} { vivado::log validate_bd_design }
proc save_bd_design {args} {}
proc generate_target {args} {
  vivado::log generate_target {*}$args
  set bd $vivado::bd
  vivado::touch [file join $vivado::project_dir $vivado::project.gen sources_1 bd $bd hw_handoff $bd.hwh]
}
proc make_wrapper {args} {
  set path [file join $vivado::project_dir hdl ${vivado::bd}_wrapper.v]
  vivado::touch $path
  return $path
}

# ---- runs and reports

proc get_runs {name} { return run:$name }
proc launch_runs {args} {
  vivado::log launch_runs {*}$args
  if {[lindex $args 0] eq "impl_1"} {
    set top [get_property top [current_fileset]]
    vivado::touch [file join $vivado::runs_dir impl_1 $top.bit]
  }
}
proc wait_on_run {args} {}
proc open_run {args} { vivado::log open_run {*}$args }
proc report_timing_summary {args} {
  lassign [vivado::opts $args {-report_unconstrained}] o pos
  vivado::touch [dict get $o -file]
}
proc report_utilization {args} {
  lassign [vivado::opts $args {-hierarchical}] o pos
  vivado::touch [dict get $o -file]
}
proc get_timing_paths {args} { return path }
proc write_hw_platform {args} {
  vivado::log write_hw_platform {*}$args
  lassign [vivado::opts $args {-fixed -include_bit -force}] o pos
  vivado::touch [dict get $o -file]
}

# ---- Vitis

proc package_xo {args} {
  vivado::log package_xo {*}$args
  lassign [vivado::opts $args {-force}] o pos
  foreach need {-xo_path -kernel_name -ip_directory -kernel_xml} {
    if {![dict exists $o $need]} {
      error "package_xo: $need missing"
    }
  }
  if {![file exists [dict get $o -kernel_xml]]} {
    error "package_xo: [dict get $o -kernel_xml] does not exist"
  }
  vivado::touch [dict get $o -xo_path]
}

# ---- external programs: only bootgen, and it "writes" its output

rename exec vivado::real_exec
proc exec {args} {
  vivado::log exec {*}$args
  if {[lindex $args 0] ne "bootgen"} {
    error "exec: the flow may only run bootgen, not [lindex $args 0]"
  }
  lassign [vivado::opts [lrange $args 1 end] {}] o pos
  set f [open [dict get $o -image]]
  set bif [read $f]
  close $f
  if {![regexp {(\S+\.bit)\s*\n\}} $bif -> bit]} {
    error "bootgen: no bitstream in $bif"
  }
  vivado::touch $bit.bin
}

rename unknown vivado::real_unknown
proc unknown {args} {
  error "not a Tcl command and not stubbed as a Vivado command: [lindex $args 0]"
}
