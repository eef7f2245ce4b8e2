#!/bin/sh
# test_progress.sh - the progress display of `loom compile`, `loom run` and
# `loom eval` (docs/cli.md "Progress"; driver/core/progress.c).
#
# The display waits LOOM_PROGRESS_DELAY seconds (2) before it shows, and
# prints a line every LOOM_PROGRESS_PERIOD seconds (10) when stderr is not a
# terminal; the checks set both to 0 to see it on the small models the tests
# have, and check that by default a short run prints nothing on stderr (the
# scripts and tests that read stderr see what they always saw), that -q
# silences it, and that on a terminal (script(1) gives a pseudo-terminal) it
# is one line redrawn in place.  tests/unit/test_progress.c checks the
# library's reports from inside long fsim and tsim jobs.
# Environment: LOOM, MODELS (build/models).
set -eu
LOOM=${LOOM:-build/bin/loom}
MODELS=${MODELS:-build/models}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/common.sh # fail, summary
# has FILE PATTERN WHAT
has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$1" || { fail "$3: no '$2' in:"; sed 's/^/  | /' "$1"; }
}
empty() {
  checks=$((checks + 1))
  [ ! -s "$1" ] || { fail "$2: stderr is not empty:"; sed 's/^/  | /' "$1"; }
}
ONNX=$MODELS/digits_cnn.onnx
CALIB=$MODELS/calib_digits_cnn
X=$MODELS/digits_cnn_in0.npy
now() { LOOM_PROGRESS_DELAY=0 LOOM_PROGRESS_PERIOD=0 "$@"; }

# compile: calibration, tiling, host code
now "$LOOM" compile "$ONNX" --calib "$CALIB" -o "$tmp/cnn.loom" >"$tmp/out" 2>"$tmp/err"
has "$tmp/err" "loom compile: " "compile"
has "$tmp/err" "calibration " "compile"
has "$tmp/err" "tiling " "compile"
has "$tmp/err" "host code (LLVM)" "compile"
has "$tmp/err" "loom compile: done in " "compile"
has "$tmp/out" "wrote $tmp/cnn.loom" "compile"
now "$LOOM" compile "$ONNX" --calib "$CALIB" -o "$tmp/cnn.loom" -q >"$tmp/out" 2>"$tmp/err"
empty "$tmp/err" "compile -q"
"$LOOM" compile "$ONNX" --calib "$CALIB" -o "$tmp/cnn.loom" >"$tmp/out" 2>"$tmp/err"
empty "$tmp/err" "compile shorter than the delay"

# run: a line per update here, with the step, the layer and the percentage
now "$LOOM" run "$tmp/cnn.loom" -i "$X" >"$tmp/out" 2>"$tmp/err"
has "$tmp/err" "loom run: 0%, step 1/7 IM2COL" "run"
has "$tmp/err" "step 2/7 /conv1/Conv" "run"
has "$tmp/err" "loom run: 100%, 7 steps" "run"
has "$tmp/out" "output: float32 [1, 10]" "run"
now "$LOOM" run "$tmp/cnn.loom" -i "$X" -q >"$tmp/out" 2>"$tmp/err"
empty "$tmp/err" "run -q"
"$LOOM" run "$tmp/cnn.loom" -i "$X" >"$tmp/out" 2>"$tmp/err"
empty "$tmp/err" "run shorter than the delay"

# eval: samples, and the step of the current one
now "$LOOM" eval "$tmp/cnn.loom" --data "$MODELS/digits_test_x.npy" --labels "$MODELS/digits_test_y.npy" \
  -n 20 >"$tmp/out" 2>"$tmp/err"
has "$tmp/err" "loom eval: 0%, sample 1/20, step 1/7 IM2COL" "eval"
has "$tmp/err" "sample 20/20" "eval"
has "$tmp/out" "accuracy: " "eval"
now "$LOOM" eval "$tmp/cnn.loom" --data "$MODELS/digits_test_x.npy" --labels "$MODELS/digits_test_y.npy" \
  -n 20 -q >"$tmp/out" 2>"$tmp/err"
empty "$tmp/err" "eval -q"

# on a terminal: one line, redrawn, then cleared
if command -v script >/dev/null; then
  LOOM_PROGRESS_DELAY=0 script -qec "$LOOM eval $tmp/cnn.loom --data $MODELS/digits_test_x.npy \
    --labels $MODELS/digits_test_y.npy -n 100 2>&1 >/dev/null" /dev/null >"$tmp/tty" </dev/null
  has "$tmp/tty" "$(printf '\r\033[K')loom eval: [" "eval on a terminal"
  checks=$((checks + 1))
  [ "$(grep -c 'done in' "$tmp/tty")" = 0 ] || fail "eval on a terminal: a 'done' line"
else
  echo "SKIP: no script(1) for the terminal check"
fi

summary test_progress
