#!/bin/sh
# test_backends_absent.sh - on a machine without a Loom device or XRT card
# (any CI machine), the linux and xrt backends are listed by `loom devices`
# as "not available" with their reason, and `loom run` on them fails with
# that reason and exit status 1 instead of crashing (docs/linux-driver.md,
# docs/xrt.md).  Run by `make test` with LOOM and BUILD set.
set -eu
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_backends_absent: FAIL: $*" >&2; exit 1; }

"$LOOM" devices > "$tmp/devices"
cat "$tmp/devices"
if [ ! -e /dev/loom0 ]; then
  grep -q '^  linux *not available: linux: no device /dev/loom0' "$tmp/devices" ||
    fail "loom devices: linux is not reported as unavailable"
fi
if [ ! -d /sys/bus/pci/drivers/xocl ] && [ ! -d /sys/bus/platform/drivers/zocl ]; then
  grep -q '^  xrt *not available: xrt: ' "$tmp/devices" ||
    fail "loom devices: xrt is not reported as unavailable"
fi

"$LOOM" asm tests/asm/gemm_tiny.s -o "$tmp/m.loom" > /dev/null
for backend in linux xrt; do
  set +e
  "$LOOM" run "$tmp/m.loom" --backend $backend > "$tmp/out" 2> "$tmp/err"
  rc=$?
  set -e
  cat "$tmp/err"
  [ $rc -eq 1 ] || fail "loom run --backend $backend: exit status $rc, expected 1"
  grep -q "^loom: .*$backend: " "$tmp/err" || fail "loom run --backend $backend: no reason given"
done
"$LOOM" run "$tmp/m.loom" --backend linux --options dev=/dev/loom7 2> "$tmp/err" && fail "dev=/dev/loom7 opened"
grep -q 'no device /dev/loom7' "$tmp/err" || fail "dev= is not used: $(cat "$tmp/err")"
echo "test_backends_absent: ok"
