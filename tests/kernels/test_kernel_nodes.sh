#!/bin/sh
# test_kernel_nodes.sh - ONNX's single-node tests through the host kernels
# (tests/kernels/kernel_node_runner.c): fails when a test of
# tests/kernels/passing.txt no longer passes.
set -eu
BUILD=${BUILD:-build}
exec "$BUILD/tests/kernels/kernel_node_runner" "$BUILD/onnx-node-tests" \
  --passing tests/kernels/passing.txt
