#!/bin/sh
# test_node_suite.sh - ONNX's node tests through the user's path: every
# eligible test compiled by `loom compile --target cpu` and run by `loom run`,
# then the accelerator ops' tests through `--target accel` on fsim
# (tests/onnx/run_node_suite.py).  Fails on any test of the committed lists
# (node_passing_cpu.txt, node_passing_accel.txt) that no longer passes.
set -eu
BUILD=${BUILD:-build}
LOOM=${LOOM:-$BUILD/bin/loom}
export BUILD
suite=tests/onnx/run_node_suite.py
/usr/bin/python3 $suite --loom "$LOOM" --tests "$BUILD/onnx-node-tests" --target cpu \
  --passing tests/onnx/node_passing_cpu.txt
/usr/bin/python3 $suite --loom "$LOOM" --tests "$BUILD/onnx-node-tests" --target accel \
  --passing tests/onnx/node_passing_accel.txt
