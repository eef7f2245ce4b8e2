#!/bin/sh
# tests/llvm/run-cross.sh - host code generated through LLVM for the boards'
# ARM cores, run under qemu-user through the runtime's own loading path
# (docs/hostcode.md).
#
# For each target (aarch64: Ultra96 / ZCU104 / Kria; armv7 hard-float:
# PYNQ), make_cross_models builds .loom files with native code for it on
# this machine, and tests/llvm/hostcode_harness.c, linked against the
# cross-built runtime of tests/cross (build-ARCH/libloom.a, docs/cross.md),
# runs them under qemu-user twice:
#
#   dynamic: qemu-ARCH-static -L /usr/<triplet> harness ...  (the sysroot's
#            dynamic loader and libc, as on a board)
#   static:  qemu-ARCH-static harness-static ...  (glibc's static dlopen:
#            the image needs no library, so it works; the linker warns)
#
# Both load the image with memfd_create + dlopen("/proc/self/fd/N"), which
# qemu-user passes through to the host kernel.  A target whose cross
# compiler, cross libc or qemu is missing is skipped with a message, unless
# LOOM_CROSS_REQUIRED=1 (make test-hostgen-cross).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tool=$BUILD/tests/llvm/make_cross_models
models=$BUILD/models
required=${LOOM_CROSS_REQUIRED:-0}
status=0

fail() { echo "run-cross: FAIL: $*"; status=1; }

# One harness run; its output must end in a PASS line.
check() { # description, command...
  desc=$1
  shift
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed 's/^/    /'
  if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^PASS'; then fail "$desc"; fi
}

for arch in aarch64 armv7; do
  case $arch in
  aarch64) cc=aarch64-linux-gnu-gcc qemu=qemu-aarch64-static triplet=aarch64-linux-gnu hostgen=aarch64-linux-gnu ;;
  armv7) cc=arm-linux-gnueabihf-gcc qemu=qemu-arm-static triplet=arm-linux-gnueabihf hostgen=armv7-linux-gnueabihf ;;
  esac
  missing=""
  command -v "$cc" > /dev/null || missing="$missing $cc"
  command -v "$qemu" > /dev/null || missing="$missing $qemu"
  [ -d "/usr/$triplet/lib" ] || missing="$missing /usr/$triplet (cross libc)"
  [ -x "$tool" ] || missing="$missing $tool"
  if [ -n "$missing" ]; then
    if [ "$required" = 1 ]; then fail "$arch: missing$missing"; else echo "run-cross: SKIP $arch: missing$missing"; fi
    continue
  fi
  echo "run-cross: $arch ($hostgen)"
  mkdir -p "build-$arch/llvm/models"
  harness=build-$arch/llvm/hostcode_harness
  # A make of its own (the caller's jobserver is not passed down to tests).
  if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j"$(nproc)" --no-print-directory BUILD="$BUILD" \
      "$harness" "$harness-static" > "build-$arch/llvm/build.log" 2>&1; then
    tail -20 "build-$arch/llvm/build.log"
    fail "$arch: building the harness (log in build-$arch/llvm/build.log)"
    continue
  fi
  dir=build-$arch/llvm/models
  if ! "$tool" "$hostgen" "$dir" "$models"; then
    fail "$arch: make_cross_models $hostgen"
    continue
  fi
  libs=$PWD/build-$arch/sysroot/usr/lib/$triplet:$PWD/build-$arch/sysroot/lib/$triplet
  for variant in dynamic static; do
    if [ $variant = dynamic ]; then
      set -- "$qemu" -L "/usr/$triplet" -E "LD_LIBRARY_PATH=$libs" "$harness"
    else
      set -- "$qemu" "$harness-static"
    fi
    echo "  $variant"
    check "$arch $variant ops.loom" "$@" "$dir/ops.loom"
    for m in digits_mlp digits_cnn; do
      [ -f "$dir/$m.loom" ] || continue
      check "$arch $variant $m.loom" "$@" "$dir/$m.loom" "$dir/${m}_in.npy" "$dir/${m}_ref.npy" 0
    done
  done
done
[ $status -eq 0 ] && echo "run-cross: all passed"
exit $status
