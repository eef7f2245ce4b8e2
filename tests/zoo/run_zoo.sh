#!/bin/sh
# run_zoo.sh - the model zoo through the user's path (docs/zoo.md).
#
#   tests/zoo/run_zoo.sh [--quick] [NAME...]
#
# For each model of tests/zoo/zoo.list (the `quick` set with --quick, the
# named ones, or all), made by scripts/models/make_zoo.py into $MODELS/zoo/NAME:
#   1. zoo_compare --self-test on the PyTorch references: the metrics pass
#      the references (plus noise) and fail a constant output, the outputs of
#      the wrong inputs and shuffled values;
#   2. onnxruntime-node (tests/zoo/ort_ref.js) runs model.onnx on the check
#      inputs: the reference of the models whose `ref` column is `ort` (old
#      opsets, dynamic axes: PyTorch is not the source of their ONNX
#      semantics), and for the others a cross-check of the export against
#      PyTorch (centered cosine >= 0.999, the same top-1);
#   3. loom compile (the accelerator, calibrated on calib/, --input-shape
#      from the list), loom run --backend fsim on every check input;
#   4. zoo_compare against the reference with the list's thresholds.
# A model passes when steps 3 and 4 do.  The run fails when a zoo check
# (1, 2) fails or when a model the list expects to pass does not; a model
# listed as `fail` that passes is reported, to be moved to `pass`.
# Results: $OUT/results.tsv (name, status, stage, compile seconds, metrics
# or the error) and a table on stdout.  Environment: LOOM, BUILD, MODELS
# (build/models), OUT ($BUILD/zoo), NODE_DIR ($BUILD/zoo/node), NPM (npm).
set -u
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
MODELS=${MODELS:-build/models}
OUT=${OUT:-$BUILD/zoo}
NPM=${NPM:-npm}
LIST=tests/zoo/zoo.list
CMP=$BUILD/tests/zoo/zoo_compare
NODE_DIR=${NODE_DIR:-$BUILD/zoo/node}

quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
if [ $# -gt 0 ]; then
  names="$*"
elif [ $quick = 1 ]; then
  names=$(awk '!/^#/ && NF && $2 == "quick" {print $1}' $LIST)
else
  names=$(awk '!/^#/ && NF {print $1}' $LIST)
fi
mkdir -p "$OUT"

# onnxruntime-node into the build tree, once per package-lock.json.
ort_ok=0
if [ -f "$NODE_DIR/.installed" ] && cmp -s tests/zoo/package-lock.json "$NODE_DIR/package-lock.json"; then
  ort_ok=1
else
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  cp tests/zoo/package.json tests/zoo/package-lock.json "$NODE_DIR/"
  if (cd "$NODE_DIR" && $NPM ci --ignore-scripts --no-audit --no-fund --loglevel=error) > "$OUT/npm.log" 2>&1; then
    touch "$NODE_DIR/.installed" && ort_ok=1
  else
    echo "zoo: npm ci --ignore-scripts onnxruntime-node failed (see $OUT/npm.log):"
    tail -3 "$OUT/npm.log"
  fi
fi
export NODE_PATH="$PWD/$NODE_DIR/node_modules"

# The last `loom:` line of a log, or its last line.
why() {
  l=$(grep '^loom[a-z ]*: ' "$1" | tail -1)
  [ -n "$l" ] || l=$(tail -1 "$1")
  printf '%s' "$l" | tr '\t' ' ' | cut -c1-300
}

RES=$OUT/results.tsv
printf 'name\tstatus\tstage\tcompile_s\tdetail\n' > "$RES"
bad=0 passed=0 total=0
for name in $names; do
  line=$(awk -v n="$name" '!/^#/ && $1 == n' $LIST)
  if [ -z "$line" ]; then echo "zoo: $name: not in $LIST"; bad=$((bad + 1)); continue; fi
  set -- $line
  ref=$3 top1=$4 mincos=$5 shape=$6 expect=$7
  M=$MODELS/zoo/$name W=$OUT/$name
  total=$((total + 1))
  echo "=== zoo: $name"
  rm -rf "$W" && mkdir -p "$W/out"
  if [ ! -f "$M/meta.json" ]; then
    echo "zoo: $name: $M/meta.json missing (make the models: scripts/models/make_zoo.py)"
    printf '%s\tFAIL\tmake\t-\tnot made (scripts/models/make_zoo.py)\n' "$name" >> "$RES"
    bad=$((bad + 1)); continue
  fi
  t1=""; [ "$top1" != "-" ] && t1="--top1 $top1"
  # 1. the metrics on this model's references
  if ! $CMP --self-test "$M/ref" --min-cos "$mincos" $t1 > "$W/selftest.log" 2>&1; then
    cat "$W/selftest.log"; echo "zoo: $name: self-test of the metrics FAILED"; bad=$((bad + 1))
  fi
  # 2. onnxruntime-node
  refdir=$M/ref
  if [ $ort_ok = 1 ] && node tests/zoo/ort_ref.js "$M/model.onnx" "$M/check" "$W/ort" > "$W/ort.log" 2>&1; then
    if [ "$ref" = ort ]; then
      refdir=$W/ort
    else
      xt=""; [ "$top1" != "-" ] && xt="--top1 1"
      if ! $CMP "$M/ref" "$W/ort" --min-cos 0.999 $xt > "$W/cross.log" 2>&1; then
        echo "zoo: $name: onnxruntime-node disagrees with PyTorch: $(tail -1 "$W/cross.log")"; bad=$((bad + 1))
      else
        echo "zoo: $name: onnxruntime-node agrees with PyTorch: $(tail -1 "$W/cross.log" | cut -d' ' -f3-)"
      fi
    fi
  else
    [ $ort_ok = 1 ] && cat "$W/ort.log"
    echo "zoo: $name: no onnxruntime-node output"; bad=$((bad + 1))
    [ "$ref" = ort ] && refdir=""
  fi
  # 3. compile and run on fsim
  sflag=""; [ "$shape" != "-" ] && sflag="--input-shape $shape"
  stage=compile detail="" secs=-
  t0=$(date +%s.%N)
  if $LOOM compile "$M/model.onnx" --calib "$M/calib" -o "$W/model.loom" $sflag > "$W/compile.log" 2>&1; then
    secs=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.2f", $1 - $2}')
    stage=run
    for f in "$M"/check/[0-9]*.npy; do
      if ! $LOOM run "$W/model.loom" --backend fsim -i "$f" -o "output=$W/out/$(basename "$f")" > "$W/run.log" 2>&1; then
        detail=$(why "$W/run.log"); break
      fi
    done
  else
    detail=$(why "$W/compile.log")
  fi
  # 4. the metrics
  if [ -z "$detail" ]; then
    stage=compare
    if [ -z "$refdir" ]; then
      detail="no reference"
    elif $CMP "$refdir" "$W/out" --min-cos "$mincos" $t1 > "$W/compare.log" 2>&1; then
      stage=ok
    fi
    [ -n "$detail" ] || detail=$(tail -1 "$W/compare.log" | cut -d' ' -f2-)
  fi
  status=FAIL; [ $stage = ok ] && status=PASS && passed=$((passed + 1))
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$stage" "$secs" "$detail" >> "$RES"
  echo "zoo: $name: $status at $stage ($detail)"
  if [ $status = FAIL ] && [ "$expect" = pass ]; then
    echo "zoo: $name: REGRESSION: $LIST expects it to pass"; bad=$((bad + 1))
  elif [ $status = PASS ] && [ "$expect" = fail ]; then
    echo "zoo: $name: now passes: set its expectation in $LIST to pass"
  fi
done
echo
column -t -s "$(printf '\t')" "$RES" 2>/dev/null || cat "$RES"
echo "zoo: $passed of $total models pass; $bad problems (zoo checks failed or regressions)"
[ $bad -eq 0 ]
