#!/bin/sh
# run-hostile.sh - a bounded hostile-binary run (part of `make test`).
#
# Mutates the example programs tests/asm/*.s, plus the models the compiler
# produces for the tiny configuration when `loom compile` is available, and
# runs each mutant on fsim and on tsim (when build/tsim/<config>/ has a
# simulator library; HOSTILE_TSIM=none for fsim only, or a library path)
# for HOSTILE_SECONDS seconds (default 60) from seed HOSTILE_SEED
# (default 1).  Failing mutants are kept in
# $BUILD/hostile-failures/ for tests/regress/.  Exit status: the runner's
# (0 when no mutant failed).
set -u
: "${BUILD:=build}" "${LOOM:=$BUILD/bin/loom}"
seconds=${HOSTILE_SECONDS:-60}
seed=${HOSTILE_SEED:-1}
tsim=${HOSTILE_TSIM:-auto}
bases=$(ls tests/asm/*.s)
work=$BUILD/tests/hostile/bases
mkdir -p "$work"
# Compiled models are optional bases: the digits MLP and CNN for the tiny
# configuration, skipped when the models or the compiler are missing.
for m in digits_mlp digits_cnn; do
  onnx=build/models/$m.onnx calib=build/models/calib_$m out=$work/${m}_tiny.loom
  [ -f "$onnx" ] && [ -d "$calib" ] || continue
  if [ "$out" -nt "$LOOM" ] && [ "$out" -nt "$onnx" ] ||
     "$LOOM" compile "$onnx" --config tiny --calib "$calib" -o "$out" >/dev/null 2>&1; then
    bases="$bases $out"
  fi
done
# shellcheck disable=SC2086
exec "$BUILD/tests/hostile/hostile" --seconds "$seconds" --seed "$seed" --tsim "$tsim" \
  --keep "$BUILD/hostile-failures" $bases
