#!/bin/sh
# run-regress.sh - replays every regression input and every fuzz seed
# through the fuzz targets' plain-main builds (part of `make test` and
# `make test-san`).
#
# tests/regress/<target>/ holds the inputs that once crashed a target or
# broke one of its properties (docs/reliability.md lists each bug and its
# fix); tests/fuzz/corpus/<target>/ holds the seeds.  Each is passed once to
# $BUILD/tests/fuzz/replay_<target>, which aborts on a property violation
# and, in the sanitizer build, on any memory or undefined-behaviour error.
# tests/regress/hostile/ holds hostile binaries that once broke fsim or
# tsim; they run unmutated through the hostile runner (`hostile --as-is`)
# on fsim and, unless HOSTILE_TSIM=none, on tsim, with all its checks.
set -u
: "${BUILD:=build}"
status=0
for t in onnx loomfile npy asm hostcode hwconfig; do
  bin=$BUILD/tests/fuzz/replay_$t
  dirs=""
  for d in tests/fuzz/corpus/$t tests/regress/$t; do
    [ -d "$d" ] && dirs="$dirs $d"
  done
  # shellcheck disable=SC2086
  if ! "$bin" $dirs; then
    echo "regress: $t FAILED" >&2
    status=1
  fi
done
if ! "$BUILD/tests/hostile/hostile" --as-is --tsim "${HOSTILE_TSIM:-auto}" tests/regress/hostile/*.loom \
    >"$BUILD/tests/hostile/regress.log" 2>&1; then
  echo "regress: hostile FAILED (see $BUILD/tests/hostile/regress.log)" >&2
  tail -20 "$BUILD/tests/hostile/regress.log" >&2
  status=1
else
  echo "regress: $(ls tests/regress/hostile/*.loom | wc -l) hostile binaries ok"
fi
exit $status
