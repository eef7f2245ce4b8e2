#!/bin/sh
# test_zoo_quick.sh - `make test`'s part of the model zoo: the quick set of
# tests/zoo/zoo.list (a plain CNN, a CNN with SE and HardSwish, the U-Net, the
# LSTM, the BERT-like model and its dynamic-axes export) through
# tests/zoo/run_zoo.sh; `make test-zoo` runs them all.
#
# Then it tests the test: the first quick model the list expects to pass is
# run again by tests/zoo/broken_loom.sh, a `loom` that answers every check
# input with the output of input 000 (constant) or of the next input
# (shuffled).  The harness must fail the model at the comparison both times.
#
# Last, a small transformer on the RTL: the BERT-like model's .loom, just
# compiled and checked against PyTorch on fsim, runs on tsim (the Verilator
# model of the default configuration) for two check inputs, and each output
# must be the same bytes as fsim's (and the two outputs must differ, or the
# comparison would prove nothing about the attention).
set -u
BUILD=${BUILD:-build}
LOOM=${LOOM:-build/bin/loom}
tests/zoo/run_zoo.sh --quick
st=$?
m=$(awk '!/^#/ && NF && $2 == "quick" && $7 == "pass" {print $1; exit}' tests/zoo/zoo.list)
if [ -z "$m" ]; then
  echo "zoo: no quick model is expected to pass: the broken-loom check has nothing to run"
  exit 1
fi
for mode in constant shuffled; do
  log=$BUILD/zoo-broken/$mode.log
  mkdir -p "$BUILD/zoo-broken"
  if REAL_LOOM=$LOOM BROKEN=$mode LOOM=tests/zoo/broken_loom.sh OUT=$BUILD/zoo-broken/$mode \
       tests/zoo/run_zoo.sh "$m" > "$log" 2>&1; then
    echo "zoo: FAIL: the harness passed $m run by a $mode (broken) loom (see $log)"; st=1
  elif grep -q "^zoo: $m: FAIL at compare" "$log"; then
    echo "zoo: ok: $m run by a $mode (broken) loom fails: $(grep "^zoo: $m: FAIL" "$log" | cut -d'(' -f2- | cut -c1-90)"
  else
    echo "zoo: FAIL: $m run by a $mode loom did not fail at the comparison (see $log)"; st=1
  fi
done
X=bert W=$BUILD/zoo/bert
if [ -f "$W/out/000.npy" ] && [ -f "$W/out/001.npy" ]; then
  if cmp -s "$W/out/000.npy" "$W/out/001.npy"; then
    echo "zoo: FAIL: $X gives the same output for check inputs 000 and 001"; st=1
  fi
  for f in 000 001; do
    if ! $LOOM run "$W/model.loom" --backend tsim -i "build/models/zoo/$X/check/$f.npy" -o "output=$W/tsim_$f.npy" \
         > "$W/tsim_$f.log" 2>&1; then
      echo "zoo: FAIL: $X on tsim, input $f: $(tail -1 "$W/tsim_$f.log")"; st=1
    elif ! cmp "$W/out/$f.npy" "$W/tsim_$f.npy"; then
      echo "zoo: FAIL: $X on tsim, input $f: not the bytes fsim gives"; st=1
    else
      echo "zoo: ok: $X on tsim, input $f: the same bytes as fsim"
    fi
  done
else
  echo "zoo: FAIL: $X has no fsim outputs to run on tsim against ($W/out)"; st=1
fi
exit $st
