# parse_compare.awk - the verdict line of tests/zoo/zoo_compare, as JSON.
#
#   awk -f parse_compare.awk compare.txt
#   -> {"pass": true|false, "cos_min", "cos_mean", "top1" (null for "-"), "cos", "relerr"}
#
# zoo_compare's last line reads "zoo_compare: PASS|FAIL cos_min=.. cos_mean=..
# top1=..|- cos=.. relerr=..".  Output without it is an error (exit 1).
/^zoo_compare: (PASS|FAIL) cos_min=/ {
  line = sprintf("\"pass\": %s", $2 == "PASS" ? "true" : "false")
  for (i = 3; i <= NF; i++) {
    if (split($i, kv, "=") != 2 || kv[2] !~ /^(-|-?[0-9.]+(e[-+]?[0-9]+)?|-?nan|-?inf)$/) continue
    v = kv[2] == "-" || kv[2] ~ /nan|inf/ ? "null" : kv[2]
    line = line sprintf(", \"%s\": %s", kv[1], v)
  }
  found = 1
}
END {
  if (!found) { print "parse_compare.awk: no zoo_compare verdict line" > "/dev/stderr"; exit 1 }
  print "{" line "}"
}
