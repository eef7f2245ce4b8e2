# fake_vivado.tcl SCRIPT ARGS... - source SCRIPT with ::argv = ARGS under
# the Vivado stubs, as `vivado -mode batch -source SCRIPT -tclargs ARGS`
# would (fake-tools/vivado calls this).
source [file join [file dirname [info script]] vivado_stubs.tcl]
set script [lindex $argv 0]
set ::argv [lrange $argv 1 end]
set ::argc [llength $::argv]
if {[catch {source $script} msg]} {
  puts stderr "ERROR: $msg"
  exit 1
}
