#!/bin/sh
# run-diff.sh - the CI slice of the fsim-vs-tsim differential test.
#
# About 60 seconds on the tiny configuration: legal random jobs for ~45 s
# (seeds from 1, as many as fit), then jobs with one planted error for ~15 s.
# Every failure prints the seed and how to reproduce it (docs/tsim.md).
# Environment: BUILD (default build), DIFF_SECONDS (default 45).
set -u
BUILD=${BUILD:-build}
bin=$BUILD/tests/diff/fsim_vs_tsim
secs=${DIFF_SECONDS:-45}
status=0
"$bin" --config tiny --seeds 1:100000 --time "$secs" --keep-going --quiet || status=1
"$bin" --config tiny --seeds 1:100000 --time $((secs / 3)) --keep-going --quiet --errors || status=1
exit $status
