#!/bin/sh
# check-driver.sh - builds loom.ko with W=1 and sparse (C=2) against the
# installed kernel headers and fails on any warning (driver/linux/Makefile,
# target `check`).  `make test` runs it and skips when no headers are
# installed; `make driver-check` sets LOOM_DRIVER_CHECK_REQUIRED=1 and fails
# instead.  KDIR picks the headers (default: the running kernel's, else the
# newest /lib/modules/*/build).
set -eu
cd "$(dirname "$0")/../.."

if [ -z "${KDIR:-}" ]; then
  KDIR=/lib/modules/$(uname -r)/build
  [ -f "$KDIR/Makefile" ] || KDIR=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -1)
fi
if [ -z "$KDIR" ] || [ ! -f "$KDIR/Makefile" ]; then
  why="no kernel headers (apt-get install linux-headers-amd64)"
  if [ "${LOOM_DRIVER_CHECK_REQUIRED:-0}" = 1 ]; then echo "check-driver: FAIL: $why" >&2; exit 1; fi
  echo "check-driver: SKIP: $why"
  exit 0
fi
command -v sparse >/dev/null || { echo "check-driver: FAIL: sparse missing (apt-get install sparse)" >&2; exit 1; }
exec make --no-print-directory -C driver/linux KDIR="$KDIR" check
