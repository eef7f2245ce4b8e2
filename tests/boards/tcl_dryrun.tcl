# tcl_dryrun.tcl BOARD GEN SRC OUT [board-files] - run bitstreams/BOARD/build.tcl under
# tclsh with Vivado's commands stubbed (vivado_stubs.tcl), then check what
# the flow asked for against the board's generated parameters:
#
#   every project is created for the board's part;
#   Zynq: the PS runs the PL clock at the configuration's clock_mhz, the
#   control slave sits at the base and span the overlay names, the master
#   reaches only DRAM segments, the interrupt is wired, and loom.bit,
#   loom.hwh, loom.xsa, loom.bit.bin and the reports land in OUT;
#   XRT: package_xo gets the kernel name and the generated kernel.xml.
#
# With `board-files`, Vivado pretends to have the board's board files, and
# the PS must then take the board presets.
#
# Run from the top of the repository (tests/boards/test_tcl_flows.sh).
lassign $argv board gen src out with_board
source [file join [file dirname [info script]] vivado_stubs.tcl]
set vivado::board_files [expr {$with_board eq "board-files"}]

proc fail {msg} {
  puts stderr "tcl_dryrun: $::board: $msg"
  exit 1
}

proc calls_matching {pattern} {
  return [lsearch -all -inline -glob $vivado::calls $pattern]
}

set ::argv [list $gen $src $out 2]
if {[catch {source bitstreams/$board/build.tcl} msg]} {
  fail "flow stopped: $msg\n$::errorInfo"
}

source [file join $gen boards loom_board_$board.tcl]
set b $loom_board
source [file join $gen loom_cfg_[dict get $b config].tcl]
set mhz [dict get $loom_cfg clock_mhz]

foreach c [calls_matching "create_project *"] {
  if {![string match "* -part [dict get $b part]*" $c]} {
    fail "project not created for [dict get $b part]: $c"
  }
}
if {[llength [calls_matching "ipx::package_project *"]] != 1} {
  fail "the IP was not packaged exactly once"
}

if {[dict get $b flow] eq "vitis"} {
  set xo [calls_matching "package_xo *"]
  if {[llength $xo] != 1 || ![string match "* -kernel_name [dict get $b kernel] *" [lindex $xo 0]]} {
    fail "package_xo not called once for kernel [dict get $b kernel]: $xo"
  }
  if {![string match "*sdx_kernel true*" [join [calls_matching "set_property sdx_kernel *"]]]} {
    fail "the IP is not marked as an RTL kernel"
  }
  set want [list loom.xo]
} else {
  set freq [calls_matching "set_property -dict *FREQMHZ $mhz*"]
  if {[llength $freq] != 1} {
    fail "PL clock not set to $mhz MHz"
  }
  set span [expr {[dict get $b span] / 1024}]K
  set ctrl [calls_matching "assign_bd_address -offset [dict get $b base] -range $span *s_axi_control*"]
  if {[llength $ctrl] != 1} {
    fail "control slave not assigned at [dict get $b base] ($span): [calls_matching assign_bd_address*]"
  }
  foreach c [calls_matching "assign_bd_address -target_address_space *m_axi_gmem*"] {
    if {![string match *DDR* $c]} {
      fail "the master reaches a non-DRAM segment: $c"
    }
  }
  if {[llength [calls_matching "assign_bd_address -target_address_space *m_axi_gmem*"]] == 0} {
    fail "the master reaches no DRAM"
  }
  if {[llength [calls_matching "connect_bd_net loom/interrupt ps/*"]] != 1} {
    fail "interrupt not wired to the PS"
  }
  set preset [calls_matching "apply_bd_automation *apply_board_preset 1*"]
  if {[llength $preset] != $vivado::board_files} {
    fail "board presets applied [llength $preset] times with board files $vivado::board_files"
  }
  if {[llength [calls_matching "launch_runs impl_1 -to_step write_bitstream*"]] != 1} {
    fail "implementation not run to write_bitstream"
  }
  set want [list loom.bit loom.hwh loom.xsa loom.bit.bin timing.rpt utilization.rpt]
  if {[dict get $b uram]} {
    lappend want loom_ram_style.xdc
  }
}
foreach f $want {
  if {![file exists [file join $out $f]]} {
    fail "$f not written to $out"
  }
}
puts "tcl_dryrun: $board: [llength $vivado::calls] Vivado calls, wrote $want"
