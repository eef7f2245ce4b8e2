# tcl_syntax.tcl FILE... - parse Tcl scripts command by command, as Vivado's
# `source` would, without running them.
#
# A command ends at a newline once `info complete` says its braces, quotes
# and brackets balance; a file that never balances again names the line its
# unfinished command started on.  Proc bodies are checked the same way,
# recursively, because a brace inside a comment in a body (a classic Tcl
# trap) only shows up there.  Exit status 1 on the first broken file.

proc check_script {text where first_line} {
  set cmd ""
  set start $first_line
  set n $first_line
  foreach line [split $text \n] {
    if {$cmd eq ""} {
      set start $n
    }
    append cmd $line \n
    incr n
    if {[info complete $cmd]} {
      check_command $cmd $where $start
      set cmd ""
    }
  }
  if {[string trim $cmd] ne ""} {
    error "$where:$start: command never completes (unbalanced braces, quotes or brackets)"
  }
}

# Descend into proc bodies and namespace eval scripts.
proc check_command {cmd where line} {
  set words [string trim $cmd]
  # Only proc and namespace eval are taken apart as lists; any other
  # command may hold [substitutions] that are not list syntax.
  if {![regexp {^(proc|namespace)\s} $words]} {
    return
  }
  if {[catch {llength $words} n]} {
    error "$where:$line: not a well-formed command: $n"
  }
  set head [lindex $words 0]
  if {$head eq "proc" && $n == 4} {
    check_script [lindex $words 3] "$where (proc [lindex $words 1])" $line
  } elseif {$head eq "namespace" && [lindex $words 1] eq "eval" && $n == 4} {
    check_script [lindex $words 3] $where $line
  }
}

set status 0
foreach file $argv {
  set f [open $file]
  set text [read $f]
  close $f
  if {[catch {check_script $text $file 1} msg]} {
    puts stderr "tcl_syntax: $msg"
    set status 1
  }
}
exit $status
