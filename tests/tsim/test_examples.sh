#!/bin/sh
# test_examples.sh - `loom run --backend tsim` gives the same bytes as
# `--backend fsim` on every example in the repository: each program of
# tests/asm/ (the GEMM examples on random inputs from tests/cli/gemm_ref,
# the store-fault example with the same error code), and the digits CNN
# compiled by `loom compile` on the Verilator RTL of the default config.
#
# Environment: LOOM, BUILD.  Needs build/tsim/{tiny,default}/libloom_tsim.so
# and the digits model (make builds both before running this).
set -eu
export LC_ALL=C  # awk writes raw bytes below
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
MODELS=build/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# npy FILE DESCR SHAPE BYTES: a version-1.0 .npy of BYTES pseudo-random bytes
# (seeded, so a failure reproduces), e.g. npy x.npy '|i1' '(8, 8)' 64.
npy() {
  hdr="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  pad=$(( (64 - (10 + ${#hdr} + 1) % 64) % 64 ))
  len=$(( ${#hdr} + pad + 1 ))
  { printf '\223NUMPY\001\000'; printf "\\$(printf %03o $((len % 256)))\\$(printf %03o $((len / 256)))"
    printf '%s%*s\n' "$hdr" "$pad" ""
    awk -v n="$4" 'BEGIN { srand(7); for (i = 0; i < n; i++) printf "%c", int(rand() * 256) }'
  } >"$1"
}

# same NAME LOOMFILE ARGS...: run on both backends, compare every output file.
same() {
  name=$1 file=$2
  shift 2
  for b in fsim tsim; do
    mkdir -p "$tmp/$name/$b"
    set +e
    "$LOOM" run "$file" --backend $b "$@" --output "$tmp/$name/$b/out.npy" >"$tmp/$name/$b/log" 2>&1
    echo $? >"$tmp/$name/$b/rc"
    set -e
  done
  if ! cmp -s "$tmp/$name/fsim/rc" "$tmp/$name/tsim/rc"; then
    fail "$name: exit status fsim $(cat "$tmp/$name/fsim/rc"), tsim $(cat "$tmp/$name/tsim/rc")"
    sed 's/^/  | /' "$tmp/$name/tsim/log"
  elif [ "$(cat "$tmp/$name/fsim/rc")" = 0 ] && ! cmp "$tmp/$name/fsim/out.npy" "$tmp/$name/tsim/out.npy"; then
    fail "$name: outputs differ"
  else
    echo "ok: $name (exit $(cat "$tmp/$name/fsim/rc"))"
  fi
}

for ex in gemm64:8 gemm64_default:16 gemm_tiny:8; do
  src=tests/asm/${ex%%:*}.s block=${ex##*:}
  "$LOOM" asm "$src" -o "$tmp/${ex%%:*}.loom"
  if [ "${ex%%:*}" = gemm_tiny ]; then
    npy "$tmp/t.npy" '|i1' '(8, 8)' 64
    same gemm_tiny "$tmp/gemm_tiny.loom" --input A="$tmp/t.npy"
  else
    "$BUILD/tests/cli/gemm_ref" "$block" 7 "$tmp"
    same "${ex%%:*}" "$tmp/${ex%%:*}.loom" --input A="$tmp/a.npy" --input B="$tmp/b.npy"
  fi
done

"$LOOM" asm tests/asm/store_fault.s -o "$tmp/store_fault.loom"
npy "$tmp/x.npy" '<i4' '(8,)' 32
same store_fault "$tmp/store_fault.loom" --input X="$tmp/x.npy"
if ! grep -q SEGMENT "$tmp/store_fault/tsim/log"; then fail "store_fault: tsim did not report SEGMENT"; fi

"$LOOM" compile "$MODELS/digits_cnn.onnx" --calib "$MODELS/calib_digits_cnn" -o "$tmp/cnn.loom" -q
for i in 0 1 2 3; do
  same "digits_cnn input $i" "$tmp/cnn.loom" --input "$MODELS/digits_cnn_in$i.npy"
done

[ "$failed" -eq 0 ] || { echo "test_examples: $failed failure(s)"; exit 1; }
echo "test_examples: all passed"
