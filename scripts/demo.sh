#!/bin/sh
# demo.sh - the main job of the README: compile the digits CNN (trained here
# on scikit-learn's bundled digits, nothing downloaded) to int8 for the
# default configuration and classify the 360 held-out images on the
# Verilator RTL of the accelerator (tsim), next to the float model.
#
# Run through `make demo`, which installs the Debian packages, builds the
# toolchain and the tsim library first.  Environment: BUILD (default
# build), BACKEND (default tsim; fsim for a quick look).
set -eu
BUILD=${BUILD:-build}
BACKEND=${BACKEND:-tsim}
MODELS=build/models
OUT=$BUILD/demo
LOOM=$BUILD/bin/loom
mkdir -p "$OUT"

echo "== 1. test models (PyTorch from Debian, seeded; skipped when present)"
/usr/bin/python3 scripts/models/make_digits.py --out "$MODELS"

echo "== 2. loom compile digits_cnn.onnx (int8, calibrated on 64 training images)"
"$LOOM" compile "$MODELS/digits_cnn.onnx" --config default --calib "$MODELS/calib_digits_cnn" \
  -o "$OUT/digits_cnn.loom"

echo "== 3. loom eval on $BACKEND: 360 held-out images"
"$LOOM" eval "$OUT/digits_cnn.loom" --backend "$BACKEND" \
  --data "$MODELS/digits_test_x.npy" --labels "$MODELS/digits_test_y.npy" | tee "$OUT/eval.txt"

float=$(sed -n '/digits_cnn/,/float_accuracy/s/.*"float_accuracy": *\([0-9.]*\).*/\1/p' \
  "$MODELS/digits_manifest.json" | head -1)
echo "float model (PyTorch, fp32): $(awk -v a="$float" 'BEGIN { printf "%.2f%%", 100 * a }') on the same 360 images"
