#!/bin/sh
# run-fuzz.sh - runs libFuzzer targets, for a shared time budget (make fuzz)
# or each to a number of executions (make fuzz-long).
#
#   tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS [JOBS [TARGET...]]
#   tests/fuzz/run-fuzz.sh --runs N BUILD_DIR SECONDS [JOBS [TARGET...]]
#
# Budget mode: SECONDS is the wall-clock budget of the whole run, shared by
# the targets: JOBS targets run at once (default: the number of CPUs, at
# most the number of targets), each for SECONDS * JOBS / TARGETS seconds.
# --runs N: each target runs until it has executed N inputs, or for SECONDS
# (its own cap), whichever comes first, niced, JOBS at a time (default 1).
#
# Each target starts from its working corpus BUILD_DIR/corpus/<target>
# (kept between runs) plus the committed seeds tests/fuzz/corpus/<target>,
# with a fixed -seed so a run is repeatable as far as timing allows.
# Crashes, leaks, timeouts (10 s per input) and out-of-memory (2 GiB) land
# in BUILD_DIR/artifacts/<target>/ and make the script exit 1.  The last
# lines are a table per target (executions, time, rate, coverage: libFuzzer's
# `cov` (edges) and `ft` (features), corpus size), also written to
# BUILD_DIR/fuzz-summary.txt, which docs/reliability.md quotes.
set -u
runs=0
if [ "${1:-}" = --runs ]; then
  runs=${2:?--runs needs a number}
  shift 2
fi
usage="usage: run-fuzz.sh [--runs N] BUILD_DIR SECONDS [JOBS [TARGET...]]"
build=${1:?$usage}
seconds=${2:?$usage}
jobs=${3:-}
shift 2
[ $# -gt 0 ] && shift
targets=${*:-onnx loomfile npy asm hostcode hwconfig}
ntargets=$(echo $targets | wc -w)
if [ -z "$jobs" ]; then
  if [ "$runs" -gt 0 ]; then jobs=1; else jobs=$(nproc 2>/dev/null || echo 1); fi
fi
[ "$jobs" -gt "$ntargets" ] && jobs=$ntargets
[ "$jobs" -lt 1 ] && jobs=1
if [ "$runs" -gt 0 ]; then
  per=$seconds
  limit="-runs=$runs"
  nice="nice -n 19"
else
  per=$((seconds * jobs / ntargets))
  limit=""
  nice=""
fi
[ "$per" -lt 1 ] && per=1
here=$(dirname "$0")

run_one() {
  t=$1
  corpus=$build/corpus/$t
  art=$build/artifacts/$t
  mkdir -p "$corpus" "$art"
  dict=""
  [ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
  start=$(date +%s)
  # shellcheck disable=SC2086
  $nice "$build/fuzz_$t" -max_total_time="$per" $limit -seed=1 -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -close_fd_mask=1 $dict \
    -artifact_prefix="$art/" "$corpus" "$here/corpus/$t" >"$build/fuzz_$t.log" 2>&1
  echo $? >"$build/fuzz_$t.rc"
  echo $(($(date +%s) - start)) >"$build/fuzz_$t.secs"
}

if [ "$runs" -gt 0 ]; then
  echo "fuzz: $ntargets targets, $jobs at a time, each to $runs executions or ${per}s"
else
  echo "fuzz: $ntargets targets, $jobs at a time, ${per}s each (budget ${seconds}s)"
fi
set -- $targets
while [ $# -gt 0 ]; do
  pids=""
  i=0
  while [ $i -lt "$jobs" ] && [ $# -gt 0 ]; do
    run_one "$1" &
    pids="$pids $!"
    shift
    i=$((i + 1))
  done
  # shellcheck disable=SC2086
  wait $pids
done

status=0
summary=$build/fuzz-summary.txt
printf '%-10s %12s %8s %10s %7s %8s %8s  %s\n' target executions seconds exec/s cov ft corpus result >"$summary"
for t in $targets; do
  log=$build/fuzz_$t.log
  rc=$(cat "$build/fuzz_$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  secs=$(cat "$build/fuzz_$t.secs" 2>/dev/null)
  corp=$(ls "$build/corpus/$t" | wc -l)
  if [ "$rc" = 0 ]; then
    result=ok
  else
    result="FAILED (see $log)"
    status=1
    grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$log" | head -5 | sed 's/^/    /'
  fi
  printf '%-10s %12s %8s %10s %7s %8s %8s  %s\n' "$t" "${execs:-?}" "${secs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$corp" "$result" >>"$summary"
done
cat "$summary"
exit $status
