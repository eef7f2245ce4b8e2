#!/bin/sh
# gen_doc.sh RESULTS.json DOC.md [SECTION...] - rewrites the generated blocks
# of DOC.md (`make bench-doc`; with SECTIONs only those, as `make
# bench-zoo-doc` does from a zoo-only run): every
#     <!-- bench:begin NAME -->
#     ...
#     <!-- bench:end NAME -->
# gets the output of tests/bench/doc.jq for section NAME; the prose around
# the blocks is kept as written.  A block without its end marker is an error.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
R=$1
DOC=$2
shift 2
ONLY=" $* "
[ -f "$R" ] || { echo "gen_doc.sh: $R: no results (run make bench first)" >&2; exit 1; }
awk -v r="$R" -v jqf="$HERE/doc.jq" -v only="$ONLY" '
  /^<!-- bench:begin [a-z0-9_]+ -->$/ && (only == "  " || index(only, " " $3 " ")) {
    print; name = $3; cmd = "jq -r --arg section " name " -f \"" jqf "\" \"" r "\""
    while ((cmd | getline line) > 0) print line
    if (close(cmd) != 0) { print "gen_doc.sh: section " name ": jq failed" > "/dev/stderr"; exit 1 }
    skipping = 1; next
  }
  skipping && /^<!-- bench:end [a-z0-9_]+ -->$/ { skipping = 0; print; next }
  !skipping { print }
  END { if (skipping) { print "gen_doc.sh: " FILENAME ": block " name " has no end marker" > "/dev/stderr"; exit 1 } }
' "$DOC" > "$DOC.new"
mv "$DOC.new" "$DOC"
