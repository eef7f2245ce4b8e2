#!/bin/sh
# test_digits.sh - the digits MLP and CNN, quantized from their calibration
# sets, on fsim: every one of the 360 held-out images bit-exact against the
# int8 reference (the fused graph on the reference interpreter), and int8
# accuracy within 1 percentage point of the float model's.  Also checks
# that `loom compile` writes a file `loom run` accepts, with float .npy in
# and float out.
set -eu
BUILD=${BUILD:-build}
LOOM=${LOOM:-$BUILD/bin/loom}
M=${MODELS:-build/models}
CHECK=$BUILD/tests/models/model_check
LOOMC="${LOOM:-$BUILD/bin/loom} compile"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$CHECK $M/digits_mlp.onnx --calib $M/calib_digits_mlp --inputs $M/digits_test_x_flat.npy \
  --labels $M/digits_test_y.npy --max-acc-drop 1.0
$CHECK $M/digits_cnn.onnx --calib $M/calib_digits_cnn --inputs $M/digits_test_x.npy \
  --labels $M/digits_test_y.npy --max-acc-drop 1.0

# The command line: compile, then run the file on fsim with a float input.
$LOOMC $M/digits_cnn.onnx --calib $M/calib_digits_cnn -o $tmp/cnn.loom -q
$LOOM run $tmp/cnn.loom -i $M/digits_cnn_in0.npy -o $tmp/out.npy
test -s $tmp/out.npy
echo "test_digits: ok"
