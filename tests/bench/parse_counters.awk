# parse_counters.awk - the counters `loom run --counters` prints, as JSON.
#
#   awk -f parse_counters.awk run.txt
#   -> {"jobs": [{"CYCLES": n, ...}, ...], "total": {...}}
#
# Blocks start with "job N counters:" or "total counters:" (either may
# carry a note in brackets, e.g. "(cycles estimated)" from fsim --timing) and hold
# "  NAME  VALUE" lines.  A single-job run prints no total block; the total
# is then the job itself.  No counter block at all is an error (exit 1).
function close_block() {
  if (cur == "") return
  obj = "{" body "}"
  if (cur == "total") total = obj
  else jobs = jobs (nj++ ? ",\n  " : "") obj
  cur = ""
}
/^job [0-9]+ counters( \(.*\))?:$/ { close_block(); cur = "job"; body = ""; nb = 0; next }
/^total counters( \(.*\))?:$/ { close_block(); cur = "total"; body = ""; nb = 0; next }
cur != "" && /^  [A-Z_0-9]+ +[0-9]+$/ { body = body (nb++ ? ", " : "") "\"" $1 "\": " $2; next }
cur != "" { close_block() }
END {
  close_block()
  if (!nj) { print "parse_counters.awk: " FILENAME ": no counters" > "/dev/stderr"; exit 1 }
  if (total == "") total = (nj == 1 ? jobs : "null")
  printf "{\"jobs\": [\n  %s],\n \"total\": %s}\n", jobs, total
}
