#!/bin/sh
# test_dse.sh - `loom dse` on this machine, on the digits networks (seconds):
#
#   - a sweep of 8 points (4 cores x 2 clocks) x 2 networks: every point
#     done, the cycles those of `loom run --timing` for the same point, the
#     latency the cycles at the point's clock, one synthesis per core (the
#     clock shares it) and none on a re-run, fronts that no fitting point
#     dominates, the figures and a configuration file per point
#   - a re-run evaluates nothing and writes the same bytes; --jobs 1 and
#     --jobs 2 write the same bytes; a lost, truncated or stale result is
#     evaluated again
#   - the Slurm path with a stand-in sbatch: the job script, --collect
#     refusing while points are missing, the tasks run by hand, then the
#     same results.json as the local run; sbatch missing or failing
#   - bad sweeps: one line naming the file, line and key, exit 1, nothing
#     reported
#   - --validate 1 on tsim (config tiny's model from make test): the timing
#     model's error is reported and within 5%
#
# Yosys is tests/dse/fake/yosys here (seconds, counted); the real one is
# what `make board-estimates` runs through the same hw/synth/estimate.sh.
# Environment: LOOM, BUILD.  Needs build/models (make test) and
# $BUILD/tsim/tiny.
set -eu
. tests/dse/lib.sh
M=$(pwd)/build/models
PATH=$(pwd)/tests/dse/fake:$PATH
XDG_CACHE_HOME=$tmp/cache
FAKE_YOSYS_LOG=$tmp/yosys.log
export PATH XDG_CACHE_HOME FAKE_YOSYS_LOG
unset LOOM_CACHE || true
: > "$FAKE_YOSYS_LOG"

cat > "$tmp/sweep.toml" <<EOF
# two networks, four cores, two clocks
part = "xc7z020clg400-1"
networks = ["$M/digits_cnn.onnx", "$M/digits_mlp.onnx"]
calib = ["$M/calib_digits_cnn", "$M/calib_digits_mlp"]
base = "tiny"

[sweep]
block_in = [8, 16]
block_out = "block_in"
wgt_kib = [
  8,    # a list over lines
  16,
]
clock_mhz = "100..200+100"
EOF
O=$tmp/sweep.dse
expect 0 out "rank point" "$LOOM" dse "$tmp/sweep.toml" --jobs 2
check "progress with ETA on stderr" grep -q "^loom dse: \[8/8\] .*ETA" "$tmp/err"
J=$O/results.json
check "8 points, all done" test "$(jq '[.points[] | select(.status == "done")] | length' "$J")" -eq 8
check "4 syntheses for 4 cores at 2 clocks" test "$(wc -l < "$FAKE_YOSYS_LOG")" -eq 4
check "resources from Yosys" test "$(jq '[.points[] | select(.resources.source == "yosys" and .resources.lut > 0)] | length' "$J")" -eq 8
check "a clock changes the latency, not the cycles" test "$(jq '[.points[] | select(.config.clock_mhz == 200)] |
  map(.networks.digits_cnn.cycles) | sort | tostring' "$J")" = "$(jq '[.points[] | select(.config.clock_mhz == 100)] |
  map(.networks.digits_cnn.cycles) | sort | tostring' "$J")"
check "latency = cycles / clock" test "$(jq '[.points[] | .networks.digits_cnn |
  (.latency_ms - .cycles / 1e3 / 100) ] | length' "$J")" -eq 8
check "latency_ms is cycles at the clock" jq -e '[.points[] | . as $p | .networks.digits_mlp |
  (.latency_ms - .cycles / ($p.config.clock_mhz * 1000)) | fabs < 0.001] | all' "$J"
check "best first: 16x16 at 200 MHz" test "$(jq -r '.best[0]' "$J" | cut -c1-4)" = dse_
check "best is the lowest total latency" jq -e '.best[0] as $b | [.points[] | select(.id == $b)][0].total_ms
  == ([.points[] | select(.fits) | .total_ms] | min)' "$J"
check "no fitting point dominates a LUT-front point" jq -e '[.points[] | select(.fits)] as $f |
  [$f[] | select(.pareto_lut) | . as $p | [$f[] | select(.total_ms <= $p.total_ms and .resources.lut <= $p.resources.lut and
  (.total_ms < $p.total_ms or .resources.lut < $p.resources.lut))] | length == 0] | all' "$J"
check "a front on each resource" jq -e '([.points[] | select(.pareto_lut)] | length > 0) and
  ([.points[] | select(.pareto_dsp)] | length > 0)' "$J"
check "csv: header and 8 rows" test "$(wc -l < "$O/results.csv")" -eq 9
for f in pareto_lut.png pareto_lut.svg pareto_dsp.png pareto_dsp.svg table.txt; do
  check "$f written" test -s "$O/$f"
done
check "a configuration file per point" test "$(ls "$O"/configs/*.cfg | wc -l)" -eq 8
for c in "$O"/configs/*.cfg; do
  expect 0 out "ok:" "$LOOM" config check "$c"
done

# the estimated Fmax (loomsta on each synthesis' netlist): in the results,
# the table, and `loom config show` of a point, read from the same cache
check "an estimated Fmax per point" jq -e '[.points[] | .fmax_mhz_estimate > 0] | all' "$J"
check "csv: the Fmax column" grep -q ',total_ms,fmax_mhz_estimate,' "$O/results.csv"
check "table: the Fmax column" grep -q ' Fmax ' "$O/table.txt"
first=$(ls "$O"/configs/*.cfg | head -n 1)
expect 0 out "MHz on xc7z020clg400-1 (met: " "$LOOM" config show "$first"
expect 0 out "not known yet (loom config fmax" "$LOOM" config show large
n=$(wc -l < "$FAKE_YOSYS_LOG")
expect 0 out "# clock 100 MHz; estimated Fmax on xc7z020clg400-1: not known yet" "$LOOM" config show default
expect 0 out "default: clock 100 MHz; estimated Fmax " "$LOOM" config fmax default
check "config fmax synthesizes once" test "$(wc -l < "$FAKE_YOSYS_LOG")" -eq $((n + 1))
expect 0 out "MHz on xc7z020clg400-1: met" "$LOOM" config fmax default
check "then reads the cache" test "$(wc -l < "$FAKE_YOSYS_LOG")" -eq $((n + 1))
expect 0 out "# clock 100 MHz; estimated Fmax " "$LOOM" config show default
expect 1 err "unknown part 'xc9nope'" "$LOOM" config fmax tiny --part xc9nope
expect 1 err "--part goes with check and fmax only" "$LOOM" config show tiny --part xc7z020clg400-1

# the sweep's cycles are those `loom run --timing` counts for the point
best=$(jq -r '.best[0]' "$J")
cfg=$O/configs/$best.cfg
"$LOOM" compile "$M/digits_cnn.onnx" --calib "$M/calib_digits_cnn" --config "$cfg" --host-triple none -q -o "$tmp/best.loom"
"$LOOM" run "$tmp/best.loom" --config "$cfg" -i "$M/digits_cnn_in0.npy" --timing --counters > "$tmp/counters.txt"
run_cycles=$(awk '/^total counters/ { t = 1 } t && $1 == "CYCLES" { print $2; exit }' "$tmp/counters.txt")
[ -n "$run_cycles" ] || run_cycles=$(awk '$1 == "CYCLES" { print $2; exit }' "$tmp/counters.txt")
check "cycles = loom run --timing's ($run_cycles)" test "$(jq --arg b "$best" '.points[] | select(.id == $b) |
  .networks.digits_cnn.cycles' "$J")" = "$run_cycles"

# fsim's DRAM rate, which the sweep sets to bus_bits / 8: a 128-bit bus
# moves more at 16 bytes per cycle than at tsim's default 8
"$LOOM" compile "$M/digits_cnn.onnx" --calib "$M/calib_digits_cnn" --config large --host-triple none -q -o "$tmp/large.loom"
cycles() { "$LOOM" run "$tmp/large.loom" -i "$M/digits_cnn_in0.npy" --timing --counters --options "bw=$1" |
  awk '$1 == "CYCLES" { c = $2 } END { print c }'; }
c8=$(cycles 8)
c16=$(cycles 16)
check "fsim bw=16 beats bw=8 on a 128-bit bus ($c16 < $c8)" test "$c16" -lt "$c8"
expect 1 err "fsim: bw '3' must be a power of two up to 4096, with timing=1" \
  "$LOOM" run "$tmp/large.loom" -i "$M/digits_cnn_in0.npy" --timing --options bw=3

# ---- re-runs
cp "$J" "$tmp/first.json"
synths=$(wc -l < "$FAKE_YOSYS_LOG")
expect 0 err "8 points, 0 to evaluate (8 done before)" "$LOOM" dse "$tmp/sweep.toml" --jobs 2
check "a re-run writes the same results" cmp -s "$J" "$tmp/first.json"
check "a re-run synthesizes nothing" test "$(wc -l < "$FAKE_YOSYS_LOG")" -eq "$synths"
first=$(ls "$O"/points | head -n 1)
rm "$O/points/$first"
head -c 100 "$O/points/$(ls "$O"/points | sed -n 2p)" > "$tmp/trunc" && mv "$tmp/trunc" "$O/points/$(ls "$O"/points | sed -n 2p)"
third=$O/points/$(ls "$O"/points | sed -n 3p)
sed 's/^digest .*/digest 00000000/' "$third" > "$tmp/stale" && mv "$tmp/stale" "$third"
expect 0 err "8 points, 3 to evaluate (5 done before)" "$LOOM" dse "$tmp/sweep.toml"
check "lost, truncated and stale results redone: same results" cmp -s "$J" "$tmp/first.json"
expect 0 out "" "$LOOM" dse "$tmp/sweep.toml" --jobs 1 --out "$tmp/serial" -q
check "--jobs 1 = --jobs 2" cmp -s "$tmp/serial/results.json" "$tmp/first.json"

# new calibration inputs make every result stale
cp -r "$M/calib_digits_cnn" "$tmp/calib"
printf 'networks = ["%s"]\ncalib = "%s"\nbase = "tiny"\nclock_mhz = [100, 200]\n' "$M/digits_cnn.onnx" "$tmp/calib" \
  > "$tmp/calib.toml"
expect 0 err "2 points, 2 to evaluate (0 done before)" "$LOOM" dse "$tmp/calib.toml"
expect 0 err "2 points, 0 to evaluate (2 done before)" "$LOOM" dse "$tmp/calib.toml"
cp "$M/digits_cnn_in1.npy" "$tmp/calib/extra.npy"
expect 0 err "2 points, 2 to evaluate (0 done before)" "$LOOM" dse "$tmp/calib.toml"

# the plain-text spelling of the same sweep is the same sweep
cat > "$tmp/sweep.txt" <<EOF
part = xc7z020clg400-1
networks = $M/digits_cnn.onnx, $M/digits_mlp.onnx
calib = $M/calib_digits_cnn $M/calib_digits_mlp
base = tiny
block_in = 8, 16
block_out = block_in
wgt_kib = 8 16
clock_mhz = 100..200+100
EOF
expect 0 out "" "$LOOM" dse "$tmp/sweep.txt" -q
check "SPEC.txt = SPEC.toml" test "$(jq -c '.points' "$tmp/sweep.dse/results.json" | md5sum)" = "$(jq -c '.points' "$J" | md5sum)"

# ---- invalid and unsupported points are reported, not run
# (non-square arrays are invalid since ISA v2; batch 2 is legal but the compiler refuses it)
sed -e 's/^wgt_kib = \[/wgt_kib = [128, /' -e 's/^block_out = .*/block_out = [8, 16]\nbatch = [1, 2]/' \
  "$tmp/sweep.toml" > "$tmp/mixed.toml"
expect 0 out "invalid: key 'wgt_kib': 2048 WGT rows exceed the 1024" "$LOOM" dse "$tmp/mixed.toml" --jobs 2
check "invalid: non-square arrays" grep -q "invalid: key 'block_out': must equal block_in" "$tmp/out"
check "unsupported: batch 2" grep -q "unsupported: digits_cnn: .*batch 2 are not supported" "$tmp/out"
check "mixed: statuses" test "$(jq -r '[.points[].status] | unique | join(",")' "$tmp/mixed.dse/results.json")" = \
  "done,invalid,unsupported"

# ---- the Slurm path without Slurm: a stand-in sbatch
mkdir -p "$tmp/bin"
cat > "$tmp/bin/sbatch" <<'EOF'
#!/bin/sh
echo "$@" > "$(dirname "$0")/sbatch.args"
echo 4242
EOF
chmod +x "$tmp/bin/sbatch"
expect 0 out "submitted Slurm job 4242: 4 tasks of 2 points" env PATH="$tmp/bin:$PATH" \
  "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" --slurm --chunk 2 --partition loom --account acct --time 10
job=$tmp/slurm/slurm/job.sh
check "job.sh: an array of 4" grep -q "^#SBATCH --array=0-3" "$job"
check "job.sh: partition, account, time" sh -c "grep -q '^#SBATCH --partition=loom' '$job' &&
  grep -q '^#SBATCH --account=acct' '$job' && grep -q '^#SBATCH --time=10' '$job'"
expect 1 err "8 of 8 points have no current result yet" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" --collect
check "collect wrote nothing" test ! -e "$tmp/slurm/results.json"
for t in 0 1 2 3; do
  SLURM_ARRAY_TASK_ID=$t sh "$job" 2> "$tmp/task$t.err" || fail "task $t failed: $(cat "$tmp/task$t.err")"
done
expect 1 err "--task 4: the sweep has 8 valid points (2 per task)" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" \
  --task 4 --chunk 2
expect 0 out "rank point" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/slurm" --collect
check "Slurm tasks + collect = the local run" cmp -s "$tmp/slurm/results.json" "$tmp/first.json"
printf '#!/bin/sh\necho "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
  > "$tmp/bin/sbatch"
expect 1 err "--slurm: sbatch $tmp/down/slurm/job.sh failed: sbatch: error: Batch job submission failed: Unable to contact" \
  env PATH="$tmp/bin:$PATH" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/down" --slurm
rm "$tmp/bin/sbatch"
expect 1 err "--slurm: cannot run sbatch (is Slurm's client installed and on PATH?)" \
  env PATH="$tmp/bin:/usr/bin/nonexistent" "$LOOM" dse "$tmp/sweep.toml" --out "$tmp/none" --slurm

# ---- bad sweeps
bad() { # bad LINES... -> $tmp/bad.toml (networks and base set)
  printf 'networks = ["%s"]\ncalib = "%s"\nbase = "tiny"\n' "$M/digits_cnn.onnx" "$M/calib_digits_cnn" > "$tmp/bad.toml"
  for l in "$@"; do printf '%s\n' "$l" >> "$tmp/bad.toml"; done
}
bad "block_in = []"
expect 1 err "bad.toml:4: key 'block_in': the list is empty (the sweep would have no point)" "$LOOM" dse "$tmp/bad.toml"
bad "blockin = [8]"
expect 1 err "bad.toml:4: unknown key 'blockin'" "$LOOM" dse "$tmp/bad.toml"
bad "part = xc7z020clg400-1" "part = xck26-sfvc784-2LV-c"
expect 1 err "bad.toml:5: key 'part' repeats line 4" "$LOOM" dse "$tmp/bad.toml"
bad "sweep = 1, 2"
expect 1 err "bad.toml:4: unknown key 'sweep'" "$LOOM" dse "$tmp/bad.toml"
bad "name = x"
expect 1 err "bad.toml:4: key 'name': points are named for their keys" "$LOOM" dse "$tmp/bad.toml"
bad "wgt_kib = [8, 4096]"
expect 1 err "bad.toml:4: key 'wgt_kib': 4096 breaks a rule in every point: key 'wgt_kib': 65536 WGT rows exceed" \
  "$LOOM" dse "$tmp/bad.toml"
bad "bus_bits = 128"
expect 1 err "bad.toml: the sweep is empty: none of its 1 points is a legal configuration (e.g. key 'block_in'" \
  "$LOOM" dse "$tmp/bad.toml"
bad "block_in = \"16..8\""
expect 1 err "key 'block_in': range '16..8' is not a..b" "$LOOM" dse "$tmp/bad.toml"
bad "part = \"xc7z999\""
expect 1 err "bad.toml: key 'part': unknown part 'xc7z999'" "$LOOM" dse "$tmp/bad.toml"
bad "block_out = \"block_out\""
expect 1 err "bad.toml:4: key 'block_out' cannot follow itself" "$LOOM" dse "$tmp/bad.toml"
printf 'networks = ["%s/nothere.onnx"]\n' "$M" > "$tmp/bad.toml"
expect 1 err "bad.toml: key 'networks': $M/nothere.onnx: No such file or directory" "$LOOM" dse "$tmp/bad.toml"
printf 'part = "xc7z020clg400-1"\n' > "$tmp/bad.toml"
expect 1 err "bad.toml: no networks" "$LOOM" dse "$tmp/bad.toml"
expect 1 err "no/such.toml: No such file or directory" "$LOOM" dse no/such.toml
expect 1 err "loom dse: --validate goes with a local run or --collect" "$LOOM" dse "$tmp/sweep.toml" --slurm --validate 1
check "no report from a bad sweep" test ! -e "$tmp/bad.dse/results.json"

# ---- --validate on tsim: config tiny at two clocks; tiny's model is make test's
cat > "$tmp/tiny.toml" <<EOF
networks = ["$M/digits_cnn.onnx"]
calib = "$M/calib_digits_cnn"
base = "tiny"
clock_mhz = [100, 200]
EOF
expect 0 out "largest error of fsim's timing model against tsim" "$LOOM" dse "$tmp/tiny.toml" --validate 1
check "validated tiny at 200 MHz" grep -q "^tiny-200MHz  *digits_cnn " "$tmp/tiny.dse/validation.txt"
err=$(jq '.points[0].networks.digits_cnn.error_pct' "$tmp/tiny.dse/validation.json")
check "timing model within 5% of tsim ($err%)" awk -v e="$err" 'BEGIN { exit !(e > -5 && e < 5) }'
check "tsim cycles recorded" jq -e '.points[0].networks.digits_cnn.tsim_cycles > 0' "$tmp/tiny.dse/validation.json"

finish
