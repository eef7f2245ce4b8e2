#!/bin/sh
# test_gemm64.sh - the hand-written double-buffered GEMM examples
# (tests/asm/gemm64.s for tiny, gemm64_default.s for default) assembled with
# `loom asm`, run with `loom run --backend fsim` on random inputs, and
# compared byte for byte with the plain-C reference of tests/cli/gemm_ref.c.
#
# Environment: LOOM (the binary), BUILD (the build directory, for gemm_ref).
set -eu
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
REF=$BUILD/tests/cli/gemm_ref
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# check NAME SOURCE BLOCK SEED: one program on one random input.
check() {
  name=$1 src=$2 block=$3 seed=$4
  dir=$tmp/$name-$seed
  mkdir -p "$dir"
  if ! "$LOOM" asm "$src" -o "$dir/gemm.loom" ||
     ! "$REF" "$block" "$seed" "$dir" ||
     ! "$LOOM" run "$dir/gemm.loom" --backend fsim \
         --input A="$dir/a.npy" --input B="$dir/b.npy" --output C="$dir/c.npy" ||
     ! cmp "$dir/c.npy" "$dir/c_ref.npy"; then
    echo "FAIL: $name (seed $seed)"
    failed=$((failed + 1))
    return 0
  fi
  echo "ok: $name (seed $seed)"
}

for seed in 1 2 3; do
  check tiny tests/asm/gemm64.s 8 "$seed"
  check default tests/asm/gemm64_default.s 16 "$seed"
done

# The counters are exact: 64*64*64 MACs over an 8x8 core is 4096 GEMM micro-ops.
dir=$tmp/tiny-1
out=$("$LOOM" run "$dir/gemm.loom" --input A="$dir/a.npy" --input B="$dir/b.npy" \
        --output C="$dir/c2.npy" --counters)
for want in "GEMM_OPS 4096" "ALU_OPS 512" "BYTES_WR_OUT 4096" "INSN_STORE 8"; do
  if ! printf '%s\n' "$out" | tr -s ' ' | grep -q "^ $want\$"; then
    echo "FAIL: counters: no '$want' in:"
    printf '%s\n' "$out"
    failed=$((failed + 1))
  fi
done

[ "$failed" -eq 0 ] || { echo "test_gemm64: $failed failure(s)"; exit 1; }
echo "test_gemm64: all passed"
