#!/bin/sh
# run-cross-tests.sh - cross-builds the runtime, the CLI and the fsim tests
# for aarch64 (Ultra96, ZCU104, Kria) and armv7 hard-float (PYNQ-Z1/Z2)
# with `make cross`, and runs them under qemu-user as they would run on the
# boards' CPUs (docs/cross.md):
#
#   - the cmocka programs listed in build-ARCH/tests/list;
#   - the cross-built `loom`: --version, devices, and the GEMM example
#     assembled and run on fsim, compared byte for byte with the plain-C
#     reference of tests/cli/gemm_ref.c built for the host.
#
# An architecture whose cross compiler, cross libc or qemu-user is missing
# is skipped with a message, unless LOOM_CROSS_REQUIRED=1 (make test-cross).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
REF=$BUILD/tests/cli/gemm_ref
required=${LOOM_CROSS_REQUIRED:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() { echo "run-cross-tests: FAIL: $*"; failed=$((failed + 1)); }

# qemu-user with the cross libc as the guest's root and the fetched zlib
# and cmocka on the library path.
run() {
  sysroot=$PWD/build-$arch/sysroot
  "$qemu" -L "/usr/$triplet" \
    -E "LD_LIBRARY_PATH=$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet" "$@"
}

check_cli() {
  loom=build-$arch/bin/loom
  run "$loom" --version > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$arch: loom --version"; return 0; }
  run "$loom" devices > "$tmp/devices" 2>&1 || { cat "$tmp/devices"; fail "$arch: loom devices"; return 0; }
  grep -q 'fsim *config tiny' "$tmp/devices" || { cat "$tmp/devices"; fail "$arch: loom devices"; }
  if [ ! -x "$REF" ]; then
    echo "  (no $REF: GEMM check skipped)"
    return 0
  fi
  dir=$tmp/$arch
  mkdir -p "$dir"
  "$REF" 8 7 "$dir" > /dev/null
  if run "$loom" asm tests/asm/gemm64.s -o "$dir/gemm.loom" > "$tmp/out" 2>&1 &&
     run "$loom" run "$dir/gemm.loom" --backend fsim --input A="$dir/a.npy" \
       --input B="$dir/b.npy" --output C="$dir/c.npy" > "$tmp/out" 2>&1 &&
     cmp -s "$dir/c.npy" "$dir/c_ref.npy"; then
    echo "  ok loom asm + loom run (fsim) == reference"
  else
    cat "$tmp/out"
    fail "$arch: GEMM example on fsim"
  fi
}

for arch in aarch64 armv7; do
  case $arch in
    aarch64) cc=aarch64-linux-gnu-gcc qemu=qemu-aarch64-static triplet=aarch64-linux-gnu ;;
    armv7) cc=arm-linux-gnueabihf-gcc qemu=qemu-arm-static triplet=arm-linux-gnueabihf ;;
  esac
  missing=""
  command -v "$cc" > /dev/null || missing="$missing $cc"
  command -v "$qemu" > /dev/null || missing="$missing $qemu"
  [ -d "/usr/$triplet/lib" ] || missing="$missing /usr/$triplet (cross libc)"
  if [ -n "$missing" ]; then
    if [ "$required" = 1 ]; then fail "$arch: missing$missing"; continue; fi
    echo "run-cross-tests: SKIP $arch: missing$missing (scripts/install-deps.sh installs them)"
    continue
  fi
  echo "run-cross-tests: $arch"
  mkdir -p "build-$arch"
  start=$(date +%s)
  # A make of its own (the caller's jobserver is not passed down to tests).
  if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j"$(nproc)" --no-print-directory \
      cross ARCH=$arch > "build-$arch/cross.log" 2>&1; then
    tail -30 "build-$arch/cross.log"
    fail "$arch: make cross (log in build-$arch/cross.log)"
    continue
  fi
  echo "  built in $(($(date +%s) - start)) s"
  for t in $(cat "build-$arch/tests/list"); do
    if run "build-$arch/tests/$t" > "$tmp/out" 2>&1; then
      echo "  ok $t ($(grep -c '^\[       OK \]' "$tmp/out") tests)"
    else
      cat "$tmp/out"
      fail "$arch: $t"
    fi
  done
  check_cli
done

[ "$failed" -eq 0 ] || { echo "run-cross-tests: $failed failure(s)"; exit 1; }
echo "run-cross-tests: all passed"
