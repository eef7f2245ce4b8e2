#!/bin/sh
# Runs test programs one after another and prints one closing summary line
# ("N passed, N failed") that CI reads.  Each program is a cmocka suite (or a
# script) that exits non-zero on failure; its own output is shown as it runs.
set -u
# The files tests compile are signed with a key of the tests' own, never
# with the user's ~/.config/loom/key (docs/hostcode.md).
build=${BUILD:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
mkdir -p "$build/tests"
LOOM_KEY_FILE=$build/tests/signing.key
export LOOM_KEY_FILE
passed=0
failed=0
failed_names=""
for t in "$@"; do
  echo "=== $t"
  if "$t"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failed_names="$failed_names $t"
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "failed:$failed_names"
fi
echo "test programs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
