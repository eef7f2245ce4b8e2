#!/bin/sh
# summary.sh - the tables of docs/zoo.md from a run of tests/zoo/run_zoo.sh:
#
#   tests/zoo/summary.sh noise    per model: the fake-quantized PyTorch run's metrics
#                                 (meta.json int8_sim), fsim's metrics when the model
#                                 runs, and the self-test's wrong-input and constant
#                                 outputs (how far below the thresholds they fall)
#   tests/zoo/summary.sh status   per model: pass, or where it stops (stage and message)
#
# Environment: BUILD (build), MODELS (build/models), OUT ($BUILD/zoo).  Needs jq.
set -eu
BUILD=${BUILD:-build}
MODELS=${MODELS:-build/models}
OUT=${OUT:-$BUILD/zoo}
RES=$OUT/results.tsv
[ -f "$RES" ] || { echo "summary.sh: $RES: no results (run tests/zoo/run_zoo.sh)" >&2; exit 1; }
# field NAME KEY LOG: the value of KEY= on the last line of LOG, or -
field() { [ -f "$3" ] && sed -n "s/.* $2=\\([^ ]*\\).*/\\1/p" "$3" | tail -1 || true; }
case ${1:-} in
  noise)
    echo "| model | int8 sim: centered cos min / top-1 | fsim: centered cos min / mean / top-1 | wrong input: cos min / mean | constant: cos / top-1 |"
    echo "| --- | --- | --- | --- | --- |"
    tail -n +2 "$RES" | while IFS="$(printf '\t')" read -r name status stage secs detail; do
      M=$MODELS/zoo/$name W=$OUT/$name
      sim=$(jq -r '.int8_sim | "\(.centered_cosine_min * 1000 | round / 1000) / \(.top1 // "-")"' "$M/meta.json" 2>/dev/null || echo -)
      fs=-
      [ "$stage" = ok ] || [ "$stage" = compare ] && [ -f "$W/compare.log" ] &&
        fs="$(field x cos_min "$W/compare.log") / $(field x cos_mean "$W/compare.log") / $(field x top1 "$W/compare.log")"
      wl=$(grep 'wrong input' "$W/selftest.log" 2>/dev/null | sed -n 's/.*cos_min=\([^ ]*\) cos_mean=\([^ ]*\).*/\1 \/ \2/p')
      cl=$(grep 'constant' "$W/selftest.log" 2>/dev/null | sed -n 's/.*cos_min=\([^ ]*\) .*top1=\([^ ]*\).*/\1 \/ \2/p')
      echo "| \`$name\` | $sim | $fs | ${wl:--} | ${cl:--} |"
    done ;;
  status)
    echo "| model | result | stage | where it stops, or the metrics |"
    echo "| --- | --- | --- | --- |"
    tail -n +2 "$RES" | while IFS="$(printf '\t')" read -r name status stage secs detail; do
      d=$(printf '%s' "$detail" | sed "s|^loom: $MODELS/zoo/||; s/|/\\//g")
      echo "| \`$name\` | $status | $stage | \`$d\` |"
    done ;;
  *) echo "usage: summary.sh noise|status" >&2; exit 2 ;;
esac
