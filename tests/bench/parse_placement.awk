# parse_placement.awk - `loom compile`'s placement summary and host code
# line, as JSON (docs/compiler.md, sw_compiler/placement.c).
#
#   awk -f parse_placement.awk compile.txt
#   -> {"acc_nodes", "host_nodes", "acc_mac_pct",
#       "rows": [{"op", "acc", "host", "why"}, ...],
#       "row_ops": [{"op", "nodes", "bytes", "floor_cycles", "floor_us"}, ...],
#       "host_code": {"native", "portable"} or null}
#
# The summary is a header "placement  accel  host  why on the host", one
# row per op type (op, nodes on the accelerator, on the host, the reason for
# the host ones) and the line "placement: N nodes on the accelerator, M on
# the host; P% of MACs on the accelerator", then per int8 row op on the
# host (Softmax, LayerNormalization) "placement: int8 OP on the host: N
# nodes, B bytes of rows in and out; an accelerator pass's DMA alone >= C
# cycles (T us at F MHz)" (row_ops).  The host code line is "host
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
/^placement: int8 [A-Za-z]+ on the host: [0-9]+ nodes, [0-9]+ bytes of rows in and out; an accelerator pass's DMA alone >= [0-9]+ cycles/ {
  us = $24; sub(/^\(/, "", us)
  row_ops = row_ops (row_ops == "" ? "" : ", ") \
    sprintf("{\"op\": %s, \"nodes\": %d, \"bytes\": %d, \"floor_cycles\": %d, \"floor_us\": %s}", str($3), $7, $9, $22, us)
  next
}
/^host code: [0-9]+ native steps? for [^ ]+, [0-9]+ portable/ && !hc {
  hc = sprintf("{\"native\": %d, \"portable\": %d}", $3, $8)
}
END {
  if (total == "") { print "parse_placement.awk: no placement summary line" > "/dev/stderr"; exit 1 }
  printf "{%s, \"rows\": [%s], \"row_ops\": [%s], \"host_code\": %s}\n", total, rows, row_ops, hc == "" ? "null" : hc
}
