#!/bin/sh
# test_imagenet.sh - `make test-nets`: ResNet-18 and MobileNetV2 calibrated
# on calib_imagenet (8 inputs), checked on check_imagenet (4 others) on
# fsim: bit-exact against the int8 reference, and cosine similarity of the
# int8 logits against PyTorch's float logits >= 0.98 for every check input.
# About 15 s per network (plus ~4 min once to make the models with
# scripts/models/make_imagenet_nets.py), so it is not part of `make test`.
set -u
BUILD=${BUILD:-build}
M=${MODELS:-build/models}
C=$M/check_imagenet
failed=0
for net in resnet18 mobilenetv2; do
  refs=""
  for f in $C/[0-9][0-9][0-9].npy; do
    i=$(basename $f .npy)
    refs="$refs --ref $f=$C/${net}_${i}_out.npy"
  done
  echo "=== $net"
  $BUILD/tests/models/model_check $M/$net.onnx --calib $M/calib_imagenet --min-cosine 0.98 $refs || failed=$((failed + 1))
done
[ "$failed" -eq 0 ]
