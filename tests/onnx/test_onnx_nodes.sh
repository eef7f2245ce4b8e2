#!/bin/sh
# test_onnx_nodes.sh - runs ONNX's node tests (see tests/onnx/onnx_node_runner.c):
# every test of an op the IR supports must pass on the reference interpreter
# or be skipped for a documented reason, and the integer ops must run as
# accelerator jobs, bit-exact on fsim against ONNX's expected outputs and the
# integer reference, with the same bytes on tsim (the default config's RTL).
set -eu
BUILD=${BUILD:-build}
export BUILD # the tsim backend finds $BUILD/tsim/default/libloom_tsim.so
exec "$BUILD/tests/onnx/onnx_node_runner" "$BUILD/onnx-node-tests" --tsim
