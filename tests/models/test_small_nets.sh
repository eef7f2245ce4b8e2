#!/bin/sh
# test_small_nets.sh - every small model of scripts/models/make_small_nets.py
# compiled and run on fsim: bit-exact against the int8 reference, and
# against the reference outputs (PyTorch float: cosine >= 0.99; the QLinear
# models' numpy int8 outputs: within 1 code).  Float models calibrate on
# their own input.  Then the error paths of `loom compile`.
set -eu
BUILD=${BUILD:-build}
S=${MODELS:-build/models}/small
CHECK=$BUILD/tests/models/model_check
LOOMC="${LOOM:-$BUILD/bin/loom} compile"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

for n in conv3x3 conv_stride2 dwconv gemm residual maxpool avgpool concat conv_bn_relu \
         qdq_conv qlinear_conv qlinear_matmul qlinear_conv_matmul; do
  if $CHECK $S/$n.onnx --calib $S/${n}_in.npy --ref $S/${n}_in.npy=$S/${n}_out.npy --min-cosine 0.99 \
       >$tmp/log 2>&1; then
    echo "ok   $n: $(grep -o 'cosine [0-9.]*' $tmp/log | tail -1)"
  else
    echo "FAIL $n"; sed 's/^/  | /' $tmp/log; failed=$((failed + 1))
  fi
done

# expect CODE PATTERN CMD...: exit code and a fixed string on stderr.
expect() {
  want=$1 pattern=$2
  shift 2
  set +e
  "$@" >$tmp/out 2>$tmp/err
  code=$?
  set -e
  if [ "$code" -ne "$want" ] || { [ -n "$pattern" ] && ! grep -qF -- "$pattern" $tmp/err; }; then
    echo "FAIL: $* exited $code (wanted $want), stderr:"; sed 's/^/  | /' $tmp/err; failed=$((failed + 1))
  fi
}
expect 1 "quantizing it needs calibration inputs" $LOOMC $S/conv3x3.onnx -o $tmp/x.loom
expect 1 "unknown hardware configuration 'nope'" $LOOMC $S/conv3x3.onnx --config nope --calib $S/conv3x3_in.npy
expect 1 "calibration data must be float32" $LOOMC $S/conv3x3.onnx --calib $S/gemm_in.npy -o $tmp/x.loom
expect 1 "no model file given" $LOOMC
expect 1 "unknown option '--bogus'" $LOOMC --bogus $S/conv3x3.onnx
expect 0 "" $LOOMC --help
[ "$failed" -eq 0 ] && echo "test_small_nets: ok"
[ "$failed" -eq 0 ]
