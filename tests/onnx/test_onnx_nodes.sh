#!/bin/sh
# test_onnx_nodes.sh - runs ONNX's node tests (see tests/onnx/onnx_node_runner.c):
# every test of an op the IR supports must pass on the reference interpreter
# or be skipped for a documented reason, and the integer ops must be
# bit-exact on fsim whenever they lower.
set -eu
BUILD=${BUILD:-build}
exec "$BUILD/tests/onnx/onnx_node_runner" "$BUILD/onnx-node-tests"
