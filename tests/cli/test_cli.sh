#!/bin/sh
# test_cli.sh - the `loom` command line: help for every subcommand, the
# asm/disasm round trip on every example program, inspect, devices, and the
# error paths of `loom run` (each must print a clear "loom: ..." message and
# exit 1 for a user error, 2 for a failed job; a crash is a signal exit and
# fails the check).
#
# Environment: LOOM (the binary), BUILD (the build directory, for gemm_ref).
set -eu
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/common.sh # fail, expect

# mknpy FILE DESCR SHAPE BYTES: a .npy of zeros, e.g. mknpy x.npy '<f4' '(4,)' 16
mknpy() {
  h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  total=$(( (10 + ${#h} + 1 + 63) / 64 * 64 ))
  pad=$(( total - 10 - ${#h} - 1 ))
  hl=$(( total - 10 ))
  {
    printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((hl % 256)))\\$(printf %03o $((hl / 256)))"
    printf '%s%*s\n' "$h" "$pad" ''
    head -c "$4" /dev/zero
  } >"$1"
}

# ---- help ----
expect 0 out "usage: loom COMMAND" "$LOOM" --help
expect 0 out "usage: loom COMMAND" "$LOOM" help
expect 1 err "usage: loom COMMAND" "$LOOM"
expect 1 err "'frobnicate' is not a loom command" "$LOOM" frobnicate
for cmd in compile run eval asm disasm inspect devices help; do
  expect 0 out "usage: loom $cmd" "$LOOM" "$cmd" --help
  expect 0 out "usage: loom $cmd" "$LOOM" help "$cmd"
  expect 0 out "usage: loom $cmd" "$LOOM" "$cmd" -h
  expect 0 out "  $cmd " "$LOOM" --help
done
for cmd in compile run eval asm disasm inspect devices; do
  expect 1 err "unknown option '--bogus'" "$LOOM" "$cmd" --bogus
done
expect 1 err "'nope' is not a loom command" "$LOOM" help nope

# ---- --version: the release and the commit baked in at build time ----
expect 0 out "loom $(head -n 1 VERSION) (git " "$LOOM" --version
if commit=$(git rev-parse --short=12 HEAD 2>/dev/null) && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
  expect 0 out "(git $commit" "$LOOM" --version
fi
"$LOOM" --version | grep -qE '^loom [0-9]+\.[0-9]+\.[0-9]+ \(git ([0-9a-f]{12}(-dirty)?|unknown)\), ISA version [0-9]+, \.loom format [0-9]+\.[0-9]+$' ||
  fail "loom --version: $("$LOOM" --version)"
# Outside a git checkout of this tree the commit is "unknown".
mkdir -p "$tmp/nogit/scripts"
cp scripts/gen-commit.sh "$tmp/nogit/scripts/"
(cd "$tmp/nogit" && GIT_CEILING_DIRECTORIES="$tmp" sh scripts/gen-commit.sh v.h)
checks=$((checks + 1))
grep -q 'LOOM_GIT_COMMIT "unknown"' "$tmp/nogit/v.h" || fail "gen-commit.sh outside git: $(cat "$tmp/nogit/v.h")"

# ---- asm / disasm round trip on every example ----
for src in tests/asm/*.s; do
  base=$tmp/$(basename "$src" .s)
  expect 0 out "" "$LOOM" asm "$src" -o "$base.loom"
  expect 0 out "" "$LOOM" disasm "$base.loom" -o "$base.dis.s"
  expect 0 out "" "$LOOM" asm "$base.dis.s" -o "$base.again.loom"
  checks=$((checks + 1))
  cmp "$base.loom" "$base.again.loom" || fail "round trip of $src changed the bytes"
  "$LOOM" disasm "$base.loom" >"$base.stdout.s" || fail "disasm to stdout: $src"
  cmp "$base.dis.s" "$base.stdout.s" || fail "disasm -o and stdout differ for $src"
done
# Default output name: next to the source.
cp tests/asm/gemm64.s "$tmp/copy.s"
expect 0 out "" "$LOOM" asm "$tmp/copy.s"
checks=$((checks + 1))
cmp "$tmp/copy.loom" "$tmp/gemm64.loom" || fail "asm without -o"
expect 0 out "" "$LOOM" asm tests/asm/gemm64.s --config tiny -o "$tmp/cfg.loom"
expect 1 err "no source file given" "$LOOM" asm
printf '.config tiny\n.job j\n  gemm uop=0:1\n' >"$tmp/bad.s"
expect 1 err "bad.s:3:" "$LOOM" asm "$tmp/bad.s" -o "$tmp/bad.loom"

G=$tmp/gemm64.loom
SF=$tmp/store_fault.loom

# ---- inspect ----
expect 0 out "config:  tiny (0xBE827F10)" "$LOOM" inspect "$G"
for t in "A                input    int8 [64, 64] plain" \
         "B                input    int8 [8, 8, 8, 8] plain" \
         "C                output   int8 [64, 64] plain" \
         "51 instructions from 0 (16 load, 27 compute, 8 store)" \
         "segments: 0=a 1=b 2=c 3=uops" "STRTAB" "instructions: 51, all legal"; do
  expect 0 out "$t" "$LOOM" inspect "$G"
done
printf '.config tiny\n.job j\n  .insn 0x80000000000000000000000000000007\n  finish\n' >"$tmp/illegal.s"
expect 0 out "" "$LOOM" asm "$tmp/illegal.s" -o "$tmp/illegal.loom"
expect 1 err "instruction 0 (job 0, instruction 0 of the job) is illegal" \
  "$LOOM" inspect "$tmp/illegal.loom"

# ---- devices ----
expect 0 out "fsim     config tiny     hash 0xBE827F10" "$LOOM" devices
expect 0 out "fsim     config default  hash 0xE7A797E1" "$LOOM" devices
expect 1 err "unexpected argument" "$LOOM" devices extra

# ---- run ----
"$BUILD/tests/cli/gemm_ref" 8 5 "$tmp" >/dev/null
A=$tmp/a.npy B=$tmp/b.npy
expect 0 out "C: int8 [64, 64] = [" "$LOOM" run "$G" -i A="$A" -i B="$B"
expect 0 out "C: int8 [64, 64] = [" "$LOOM" run "$G" --backend=fsim --config=tiny \
  --input=A="$A" --input B="$B" --timeout 1000
expect 0 out "GEMM_OPS             4096" "$LOOM" run "$G" -i A="$A" -i B="$B" --counters
expect 0 out "counters (cycles estimated)" "$LOOM" run "$G" -i A="$A" -i B="$B" --counters --timing
"$LOOM" run "$G" -i A="$A" -i B="$B" --counters --timing | grep -q "CYCLES  *[1-9]" ||
  fail "loom run --timing --counters: CYCLES is 0"
expect 1 err "--timing is fsim's timing model" "$LOOM" run "$G" --backend tsim --timing

mknpy "$tmp/f32.npy" '<f4' '(64, 64)' 16384
mknpy "$tmp/short.npy" '|i1' '(64, 32)' 2048
head -c 100 "$G" >"$tmp/truncated.loom"
cp "$G" "$tmp/flipped.loom"
printf '\377' | dd of="$tmp/flipped.loom" bs=1 seek=300 conv=notrunc 2>/dev/null

expect 1 err "input 'B' not given (use --input B=FILE.npy)" "$LOOM" run "$G" -i A="$A"
expect 1 err "f32.npy: input 'A': expects int8, got float32" \
  "$LOOM" run "$G" -i A="$tmp/f32.npy" -i B="$B"
expect 1 err "short.npy: input 'A': expects shape [64, 64], got [64, 32]" \
  "$LOOM" run "$G" -i A="$tmp/short.npy" -i B="$B"
expect 1 err "no input named 'Q' (inputs: A, B)" "$LOOM" run "$G" -i Q="$A" -i B="$B"
expect 1 err "no output named 'Z'" "$LOOM" run "$G" -i A="$A" -i B="$B" -o Z="$tmp/z.npy"
expect 1 err "the model has 2 inputs" "$LOOM" run "$G" -i "$A"
expect 1 err "$tmp/missing.npy" "$LOOM" run "$G" -i A="$tmp/missing.npy" -i B="$B"
expect 1 err "$tmp/nonexistent.loom" "$LOOM" run "$tmp/nonexistent.loom"
expect 1 err "truncated.loom: offset 0x" "$LOOM" run "$tmp/truncated.loom"
expect 1 err "flipped.loom: offset 0x" "$LOOM" run "$tmp/flipped.loom"
expect 1 err "truncated.loom: offset 0x" "$LOOM" inspect "$tmp/truncated.loom"
expect 1 err "truncated.loom: offset 0x" "$LOOM" disasm "$tmp/truncated.loom"
expect 1 err "built for hardware config 'tiny' (0xBE827F10), but the fsim device implements config 'default' (0xE7A797E1)" \
  "$LOOM" run "$G" --config default -i A="$A" -i B="$B"
expect 1 err "unknown backend 'warp' (compiled in: fsim" "$LOOM" run "$G" --backend warp
expect 1 err "fsim: unknown config 'huge'" "$LOOM" run "$G" --config huge
expect 1 err "fsim: unknown option 'turbo'" "$LOOM" run "$G" --options turbo=1
expect 1 err "--timeout 'soon' is not a number" "$LOOM" run "$G" --timeout soon
expect 1 err "option '--input' needs a value" "$LOOM" run "$G" --input
expect 1 err "no model file given" "$LOOM" run
expect 1 err "expected NAME=FILE.npy" "$LOOM" run "$G" -i =x.npy
for r in percentile=50 percentile=100.5 percentile= percentile=9x median; do
  expect 1 err "--calib-range '$r': expected minmax, mse or percentile=P (50 < P <= 100)" \
    "$LOOM" compile "$tmp/any.onnx" --calib-range "$r"
done

# A job the accelerator stops: exit 2, with fsim's detail.
mknpy "$tmp/x.npy" '<i4' '(8,)' 32
expect 2 err "step 0 (job 0): job failed: SEGMENT at insn 3: " "$LOOM" run "$SF" -i X="$tmp/x.npy"
expect 2 err "job failed: ILLEGAL at insn 0" "$LOOM" run "$tmp/illegal.loom"

if [ "$failed" -ne 0 ]; then
  echo "test_cli: $failed of $checks checks failed"
  exit 1
fi
echo "test_cli: $checks checks passed"
