#!/bin/sh
# test_tsim_cache.sh - tsim with a configuration file: the Verilator model is
# built on first use, with progress, cached by configuration hash, and
# shared (driver/lib/tsim_cache.c).
#
#   - two first uses at once on an empty cache: one builds (progress lines
#     on stderr), the other waits for it; both run the digits CNN with
#     outputs bit-identical to fsim's; the cache holds one model and no
#     half-built directory
#   - a third use finds the model and builds nothing
#   - no source tree, or no usable cache: one line saying what to set
#
# The configuration is tiny under another name (a new hash, so a real
# build of the RTL: a few minutes of CPU).  Environment: LOOM, BUILD.
set -eu
. tests/dse/lib.sh
M=$(pwd)/build/models
XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
unset LOOM_CACHE LOOM_ROOT || true

"$LOOM" config show tiny | sed 's/^name = tiny/name = tiny_cached/' > "$tmp/c.cfg"
"$LOOM" compile "$M/digits_cnn.onnx" --calib "$M/calib_digits_cnn" --config "$tmp/c.cfg" --host-triple none -q \
  -o "$tmp/c.loom"
"$LOOM" run "$tmp/c.loom" --config "$tmp/c.cfg" -i "$M/digits_cnn_in0.npy" -o "$tmp/fsim.npy"

run_tsim() { # run_tsim N: one tsim run, output $tmp/tsimN.npy, stderr $tmp/errN
  "$LOOM" run "$tmp/c.loom" --backend tsim --config "$tmp/c.cfg" -i "$M/digits_cnn_in0.npy" \
    -o "$tmp/tsim$1.npy" 2> "$tmp/err$1"
}
start=$(date +%s)
run_tsim 1 & p1=$!
sleep 1
run_tsim 2 & p2=$!
s1=0 s2=0
wait $p1 || s1=$?
wait $p2 || s2=$?
echo "two first uses: $(( $(date +%s) - start )) s"
check "first use 1 ran (exit $s1: $(tail -n 1 "$tmp/err1"))" test "$s1" -eq 0
check "first use 2 ran (exit $s2: $(tail -n 1 "$tmp/err2"))" test "$s2" -eq 0
check "tsim = fsim (1)" cmp -s "$tmp/tsim1.npy" "$tmp/fsim.npy"
check "tsim = fsim (2)" cmp -s "$tmp/tsim2.npy" "$tmp/fsim.npy"
builds=$(cat "$tmp/err1" "$tmp/err2" | grep -c "no model of config 'tiny_cached' .* yet: building it" || true)
check "exactly one build ($builds)" test "$builds" -eq 1
check "build progress shown" grep -q "tsim: building the model of 'tiny_cached' (0x[0-9A-F]*): [0-9]* s," "$tmp/err1" "$tmp/err2"
check "the other waited or found it" sh -c "grep -q 'another process is building' '$tmp/err1' '$tmp/err2' ||
  ! grep -q 'no model' '$tmp/err2' || ! grep -q 'no model' '$tmp/err1'"
C=$XDG_CACHE_HOME/loom/tsim
check "one model in the cache" test "$(ls -d "$C"/*-*/libloom_tsim.so | wc -l)" -eq 1
check "no half-built directory left" test -z "$(ls -d "$C"/.build-* 2> /dev/null)"
check "cached under the configuration's hash" sh -c "ls -d '$C'/$("$LOOM" config show "$tmp/c.cfg" |
  sed -n 's/^# hash 0x\([0-9A-F]*\);.*/\1/p')-*/libloom_tsim.so"

run_tsim 3
check "a third use builds nothing" test -z "$(grep 'building' "$tmp/err3")"
check "tsim = fsim (3)" cmp -s "$tmp/tsim3.npy" "$tmp/fsim.npy"

# no source tree; no cache
expect 1 err "set LOOM_ROOT" env LOOM_ROOT="$tmp" XDG_CACHE_HOME="$tmp/other" \
  "$LOOM" run "$tmp/c.loom" --backend tsim --config "$tmp/c.cfg" -i "$M/digits_cnn_in0.npy"
: > "$tmp/file"
expect 1 err "tsim: no usable model cache" env XDG_CACHE_HOME="$tmp/file" \
  "$LOOM" run "$tmp/c.loom" --backend tsim --config "$tmp/c.cfg" -i "$M/digits_cnn_in0.npy"
finish
