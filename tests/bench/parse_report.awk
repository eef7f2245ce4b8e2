# parse_report.awk - the per-layer table `loom compile` prints, as JSON.
#
#   awk -f parse_report.awk report.txt
#   -> {"layers": [{"layer", "op", "shape", "macs", "tile", "tiles", "dma_bytes",
#                   "est_cycles", "bound", "util_est", "job"}, ...],
#       "total": {"jobs", "host_steps", "macs", "dma_bytes", "est_cycles"}}
#
# Rows read right to left (the op column holds spaces: "conv 3x3/1+add"):
# layer op... shape MACs tile tiles DMA cycles bound util.  A host row has
# "-" in the numeric columns and no job; accelerator rows are the jobs in
# order, which is how run_bench.sh pairs them with `loom run --counters`.
# A report without its header is an error (exit 1), so a changed format
# cannot pass silently.
function num(s) { return s == "-" ? "null" : s }
function str(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
$1 == "layer" && $2 == "op" { header = 1; next }
header && /^total:/ {
  # total: 23 jobs, 1 host steps, 1814098432 MACs, 40534596 DMA bytes, 7995640 cycles (...)
  total = sprintf("{\"jobs\": %d, \"host_steps\": %d, \"macs\": %s, \"dma_bytes\": %s, \"est_cycles\": %s}",
                  $2, $4, $7, $9, $12)
  next
}
header && !total && NF >= 10 {
  op = $2
  for (i = 3; i <= NF - 8; i++) op = op " " $i
  util = $NF; sub(/%$/, "", util)
  host = ($(NF - 1) == "host")
  row = sprintf("{\"layer\": %s, \"op\": %s, \"shape\": %s, \"macs\": %s, \"tile\": %s, \"tiles\": %s, "\
                "\"dma_bytes\": %s, \"est_cycles\": %s, \"bound\": %s, \"util_est\": %s, \"job\": %s}",
                str($1), str(op), str($(NF - 7)), num($(NF - 6)), str($(NF - 5)), num($(NF - 4)),
                num($(NF - 3)), num($(NF - 2)), str($(NF - 1)), host ? "null" : util / 100,
                host ? "null" : jobs++)
  layers = layers (n++ ? ",\n  " : "") row
}
END {
  if (!header || !total) { print "parse_report.awk: " FILENAME ": no layer table or no total line" > "/dev/stderr"; exit 1 }
  printf "{\"layers\": [\n  %s],\n \"total\": %s}\n", layers, total
}
