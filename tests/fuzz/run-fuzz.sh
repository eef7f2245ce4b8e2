#!/bin/sh
# run-fuzz.sh - runs every libFuzzer target for a total time budget.
#
#   tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS [JOBS]
#
# SECONDS is the wall-clock budget of the whole run, shared by the targets:
# JOBS targets run at once (default: the number of CPUs, at most the number
# of targets), each for SECONDS * JOBS / TARGETS seconds.  Each target
# starts from its working corpus BUILD_DIR/corpus/<target> (kept between
# runs) plus the committed seeds tests/fuzz/corpus/<target>, with a fixed
# -seed so a run is repeatable as far as timing allows.  Crashes, leaks,
# timeouts (10 s per input) and out-of-memory (2 GiB) land in
# BUILD_DIR/artifacts/<target>/ and make the script exit 1.  The last lines
# are a table of executions per target, which docs/reliability.md quotes.
set -u
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS [JOBS]}
seconds=${2:?usage: run-fuzz.sh BUILD_DIR SECONDS [JOBS]}
jobs=${3:-}
targets="onnx loomfile npy asm hwconfig"
ntargets=4
if [ -z "$jobs" ]; then
  jobs=$(nproc 2>/dev/null || echo 1)
fi
[ "$jobs" -gt "$ntargets" ] && jobs=$ntargets
[ "$jobs" -lt 1 ] && jobs=1
per=$((seconds * jobs / ntargets))
[ "$per" -lt 1 ] && per=1
here=$(dirname "$0")

run_one() {
  t=$1
  corpus=$build/corpus/$t
  art=$build/artifacts/$t
  mkdir -p "$corpus" "$art"
  dict=""
  [ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
  # shellcheck disable=SC2086
  "$build/fuzz_$t" -max_total_time="$per" -seed=1 -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -close_fd_mask=1 $dict \
    -artifact_prefix="$art/" "$corpus" "$here/corpus/$t" >"$build/fuzz_$t.log" 2>&1
  echo $? >"$build/fuzz_$t.rc"
}

echo "fuzz: $ntargets targets, $jobs at a time, ${per}s each (budget ${seconds}s)"
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
printf '%-10s %12s %10s %8s  %s\n' target executions exec/s corpus result
for t in $targets; do
  log=$build/fuzz_$t.log
  rc=$(cat "$build/fuzz_$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corp=$(ls "$build/corpus/$t" | wc -l)
  if [ "$rc" = 0 ]; then
    result=ok
  else
    result="FAILED (see $log)"
    status=1
    grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$log" | head -5 | sed 's/^/    /'
  fi
  printf '%-10s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corp" "$result"
done
exit $status
