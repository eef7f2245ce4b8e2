# parse_placement.awk - `loom compile`'s placement summary and host code
# line, as JSON (docs/compiler.md, sw_compiler/placement.c).
#
#   awk -f parse_placement.awk compile.txt
#   -> {"acc_nodes", "host_nodes", "acc_mac_pct",
#       "rows": [{"op", "acc", "host", "why"}, ...],
#       "host_code": {"native", "portable"} or null}
#
# The summary is a header "placement  accel  host  why on the host", one
# row per op type (op, nodes on the accelerator, on the host, the reason for
# the host ones) and the line "placement: N nodes on the accelerator, M on
# the host; P% of MACs on the accelerator".  The host code line is "host
# code: N native steps for TRIPLE, M portable, ..." (absent without host
# code).  Output without the summary line is an error (exit 1), so a changed
# format cannot pass silently.
function str(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
/^placement +accel +host/ { on = 1; next }
/^placement: [0-9]+ nodes on the accelerator, [0-9]+ on the host; [0-9.]+% of MACs on the accelerator$/ {
  on = 0
  pct = $11; sub(/%$/, "", pct)
  total = sprintf("\"acc_nodes\": %d, \"host_nodes\": %d, \"acc_mac_pct\": %s", $2, $7, pct)
  next
}
on && NF >= 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
  why = ""
  for (i = 4; i <= NF; i++) why = why (i > 4 ? " " : "") $i
  rows = rows (rows == "" ? "" : ", ") sprintf("{\"op\": %s, \"acc\": %d, \"host\": %d, \"why\": %s}", str($1), $2, $3, str(why))
  next
}
on { on = 0 }
/^host code: [0-9]+ native steps? for [^ ]+, [0-9]+ portable/ && !hc {
  hc = sprintf("{\"native\": %d, \"portable\": %d}", $3, $8)
}
END {
  if (total == "") { print "parse_placement.awk: no placement summary line" > "/dev/stderr"; exit 1 }
  printf "{%s, \"rows\": [%s], \"host_code\": %s}\n", total, rows, hc == "" ? "null" : hc
}
