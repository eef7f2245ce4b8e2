#!/bin/sh
# test_install.sh - `make install` into a temporary PREFIX, then Loom used
# the way an installed copy is used (docs/runtime.md, "Installing"):
#
#   - the layout: bin/loom, lib/libloom.so.V with its soname links,
#     include/loom/ holding only the public headers, lib/pkgconfig/loom.pc,
#     share/man/man1/loom.1, the Python package;
#   - libloom.so's soname is libloom.so.MAJOR and it exports the public API
#     only (no fsim_*, no internal loom_* helpers);
#   - each installed header compiles on its own with nothing but
#     `pkg-config --cflags loom` (no internal header needed);
#   - a C program (tests/install/loom_example.c) built with
#     `pkg-config --cflags --libs loom` runs the digits CNN on fsim and
#     gives the bytes and counters `loom run` gives;
#   - the Python package (PYTHONPATH=the install) runs the digits CNN on
#     fsim and tsim bit-identically to `loom run`, counters included
#     (tests/install/check_python.py).
#
# Environment: BUILD (default build), MODELS (default build/models),
# INSTALL_TSIM_IMAGES (images on tsim, default 3; 0 skips tsim).
set -eu
BUILD=${BUILD:-build}
M=${MODELS:-build/models}
PY=/usr/bin/python3
TSIM_IMAGES=${INSTALL_TSIM_IMAGES:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }

version=$(cat VERSION)
major=${version%%.*}
prefix=$tmp/prefix
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD="$BUILD" install \
  PREFIX="$prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; }

# ---- layout ----
for f in bin/loom lib/libloom.so.$version lib/pkgconfig/loom.pc share/man/man1/loom.1 \
         include/loom/loom.h include/loom/loom_isa_gen.h; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
[ "$(readlink "$prefix/lib/libloom.so.$major")" = "libloom.so.$version" ] || fail "libloom.so.$major link"
[ "$(readlink "$prefix/lib/libloom.so")" = "libloom.so.$major" ] || fail "libloom.so link"
extra=$(cd "$prefix/include" && find . -type f ! -path './loom/*.h')
[ -z "$extra" ] || fail "headers outside include/loom: $extra"
pydir=$(dirname "$(find "$prefix/lib" -path '*/loom/__init__.py')")
[ -f "$pydir/_install.py" ] || fail "Python package not installed (or no _install.py)"
grep -q "loom help" "$prefix/share/man/man1/loom.1" && grep -q '^\.SS compile' "$prefix/share/man/man1/loom.1" \
  || fail "man page lacks the commands"
"$prefix/bin/loom" --version | grep -q "loom $version " || fail "loom --version does not say $version"

# ---- the shared library ----
readelf -d "$prefix/lib/libloom.so.$version" | grep -q "SONAME.*\[libloom.so.$major\]" \
  || fail "soname is not libloom.so.$major"
nm -D --defined-only "$prefix/lib/libloom.so.$version" | awk '{ print $3 }' > "$tmp/exports"
grep -q '^loom_model_load$' "$tmp/exports" || fail "loom_model_load not exported"
if grep -E '^(fsim_|loom_fail$|loom_tensor_read$|loom_backend_tsim$)' "$tmp/exports"; then
  fail "internal symbols exported"
fi

# ---- headers and pkg-config ----
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion loom)" = "$version" ] || fail "loom.pc version"
cflags=$(pkg-config --cflags loom)
libs=$(pkg-config --libs loom)
for h in "$prefix"/include/loom/*.h; do
  printf '#include <loom/%s>\nint main(void) { return 0; }\n' "${h##*/}" > "$tmp/h.c"
  cc -std=c11 -Wall -Wextra -Werror $cflags -c -o "$tmp/h.o" "$tmp/h.c" \
    || fail "include/loom/${h##*/} does not compile on its own"
done

# ---- the digits CNN: the CLI, the C program, the Python package ----
model=$tmp/digits_cnn.loom
"$prefix/bin/loom" compile "$M/digits_cnn.onnx" --calib "$M/calib_digits_cnn" -o "$model" -q \
  || fail "loom compile"
cc -std=c11 -Wall -Wextra -Werror tests/install/loom_example.c -o "$tmp/example" $cflags $libs \
  || fail "building a program with pkg-config --cflags --libs loom"
$PY -c "import numpy as np; x = np.load('$M/digits_cnn_in0.npy'); x.astype(np.float32).tofile('$tmp/x.f32')"
LD_LIBRARY_PATH="$prefix/lib" "$tmp/example" "$model" fsim "$tmp/x.f32" "$tmp/y.bin" > "$tmp/example.out" \
  || fail "loom_example"
grep -q "^libloom $version$" "$tmp/example.out" || fail "loom_example did not load libloom $version"
"$prefix/bin/loom" run "$model" -i "$M/digits_cnn_in0.npy" -o "$tmp/y.npy" --counters > "$tmp/cli.out"
$PY - "$tmp" <<'EOF' || fail "loom_example differs from loom run"
import sys, numpy as np
tmp = sys.argv[1]
want = np.load(tmp + "/y.npy")
got = open(tmp + "/y.bin", "rb").read()
assert got == want.tobytes(), "output bytes differ"
totals = {}
section = ""
for line in open(tmp + "/cli.out"):
    if not line.startswith(" "):
        section = line
    elif section.startswith("job "):
        name, value = line.split()
        totals[name] = totals.get(name, 0) + int(value)
mine = dict(l.split() for l in open(tmp + "/example.out") if not l.startswith("libloom "))
assert {k: int(v) for k, v in mine.items()} == totals, "counters differ"
print("test_install: C program (pkg-config) == loom run: %d output bytes, %d counters"
      % (len(got), len(totals)))
EOF

backends=fsim
[ "$TSIM_IMAGES" -gt 0 ] && backends=fsim,tsim
PYTHONPATH="$pydir/.." $PY tests/install/check_python.py "$prefix/bin/loom" "$model" \
  "$M/digits_test_x.npy" 8 fsim "$tmp" || fail "Python package on fsim"
if [ "$TSIM_IMAGES" -gt 0 ]; then
  PYTHONPATH="$pydir/.." $PY tests/install/check_python.py "$prefix/bin/loom" "$model" \
    "$M/digits_test_x.npy" "$TSIM_IMAGES" tsim "$tmp" || fail "Python package on tsim"
fi
echo "test_install: ok (Loom $version in a temporary PREFIX; $backends)"
