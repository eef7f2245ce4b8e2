#!/bin/bash
# test_bench_parse.sh - smoke test of the benchmark scripts (in `make test`;
# the benchmark itself is `make bench` and is never a timed test).
#
# Checks on canned tool output (tests/bench/testdata) that the parsers of
# `loom compile`'s layer table and `loom run --counters` read every field,
# that results.jq derives utilization, roofline bound and fraction of bound
# as DESIGN.md defines them (hand-computed values below), that the table,
# the doc sections and gen_doc.sh run on the result, that the transformer
# figures (minimum host time of the runs, end to end, shares, speedup over
# the host-only run, the goals) are derived as docs/performance.md says, and
# that the parsers (also of the placement summary and zoo_compare's verdict)
# refuse text that is not what they expect.  Then, when the digits CNN is
# built, the same parsers read the real output of this `loom` (so a change
# of the CLI's format breaks this test, not a 15-minute benchmark run).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TD=$HERE/testdata
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # check DESCRIPTION JQ-EXPR FILE
  if jq -e "$2" "$3" > /dev/null 2>&1; then echo "ok   $1"; else echo "FAIL $1: $2 on $3"; fails=$((fails + 1)); fi
}
must_fail() { # must_fail DESCRIPTION CMD...
  local d=$1
  shift
  if "$@" > /dev/null 2>&1; then echo "FAIL $d: accepted"; fails=$((fails + 1)); else echo "ok   $d"; fi
}

awk -f "$HERE/parse_report.awk" "$TD/report.txt" > "$T/report.json" || echo '{}' > "$T/report.json"
awk -f "$HERE/parse_counters.awk" "$TD/counters.txt" > "$T/counters.json" || echo '{}' > "$T/counters.json"
check "report: rows, host row without a job" '(.layers | length) == 4 and .layers[0].job == null and .layers[0].macs == null' "$T/report.json"
check "report: op with spaces, jobs in order" '.layers[2].op == "conv 3x3/1+add" and .layers[2].job == 1 and .layers[3].job == 2' "$T/report.json"
check "report: numeric columns" '.layers[1] | .macs == 118013952 and .dma_bytes == 2853024 and .est_cycles == 605807 and .tiles == 76 and .util_est == 0.76 and .bound == "compute"' "$T/report.json"
check "report: total line" '.total == {"jobs": 3, "host_steps": 1, "macs": 233619456, "dma_bytes": 5059456, "est_cycles": 1141481}' "$T/report.json"
check "counters: jobs and total" '(.jobs | length) == 3 and .jobs[1].CYCLES == 564480 and .total.CYCLES == 1282259' "$T/counters.json"
printf 'job 0 counters (cycles estimated):\n  CYCLES  5\ntotal counters (cycles estimated):\n  CYCLES  7\n' \
  | awk -f "$HERE/parse_counters.awk" > "$T/est.json" || echo '{}' > "$T/est.json"
check "counters: blocks with a note (fsim --timing)" '.jobs[0].CYCLES == 5 and .total.CYCLES == 7' "$T/est.json"

mkdir -p "$T/parts"
echo '{"mode": "test", "date": "2026-01-01T00:00:00Z", "host": "h", "cpu": "c", "nproc": 2, "load_start": "0 0 0",
  "commit": "x", "tsim_options": "bw=8", "fsim_timing_flag": false, "profile_flag": false, "load_end": "0 0 0",
  "bench_seconds": 1}' > "$T/parts/meta.json"
echo '{"name": "default", "batch": 1, "block_in": 16, "block_out": 16, "peak_macs_per_cycle": 256,
  "dram_bytes_per_cycle": 8, "clock_mhz": 100}' > "$T/parts/config.json"
jq -n --slurpfile rep "$T/report.json" --slurpfile cnt "$T/counters.json" \
  '[{name: "w02", h: 56, c: 64, k: 64, r: 3, s: 1, report: $rep[0], counters: $cnt[0].jobs[0], fsim_timing_cycles: null}]' \
  > "$T/parts/workloads.json"
jq -n --slurpfile rep "$T/report.json" --slurpfile cnt "$T/counters.json" \
  '{net: "resnet18", calib_inputs: 8, compile: {wall_s: 2, cpu_s: 0.5}, report: $rep[0],
    tsim: {wall_s: 10, cpu_s: 5, counters: $cnt[0]}, fsim: {wall_s: 0.2, cpu_s: 0.1, timing_cycles: null}, profile: null}' \
  > "$T/parts/net_resnet18.json"
echo '[{"net": "unet", "error": null, "compile": {"wall_s": 1.5, "cpu_s": 1.2},
  "placement": {"acc_nodes": 20, "host_nodes": 5, "acc_mac_pct": 97.5}, "fsim_run": {"wall_s": 0.2, "cpu_s": 0.2},
  "macs": 1000, "cycles": 300000, "host_s": 0.001, "clock_mhz": 100},
  {"net": "lstm", "error": "loom: m.onnx: node 3 (LSTM): op | x", "compile": null, "placement": null,
  "fsim_run": null, "macs": null, "cycles": null, "host_s": null, "clock_mhz": null}]' > "$T/parts/zoo.json"
# Transformers: t1's default build (three runs: the minimum host time is the
# second's, 1 ms; cycles 200000 = 2 ms at 100 MHz; host-only minimum 9 ms) and
# its --no-act build; t2 not made.  Hand-computed: end to end 3 ms, host share
# 1/3, accelerator share 2/3, speedup 3x, utilization 25.6 M / (200000 x 256) = 0.5,
# roofline bound 100000 cycles = 1 ms, so the speedup bound is 9 ms / 1 ms = 9x.
# Its --config large build (peak 1024 at 200 MHz: 50000 cycles = 0.25 ms, host
# 0.5 ms; end to end 0.75 ms, speedup 12x, utilization 25.6 M / (50000 x 1024) = 0.5).
jq -n '[{net: "t1", variant: "default", error: null, placement: {acc_nodes: 20, host_nodes: 5, acc_mac_pct: 97.5},
    placement_rows: [], host_code: {native: 7, portable: 3},
    runs: [{host_s: 0.003, cycles: 200000, macs: 25600000, clock_mhz: 100, host_ops: [{op: "SOFTMAX", steps: 2, seconds: 0.002}]},
           {host_s: 0.001, cycles: 200000, macs: 25600000, clock_mhz: 100, bound_cycles: 100000, host_ops: [{op: "Pow", steps: 4, seconds: 0.0006}, {op: "COPY", steps: 9, seconds: 0.0004}],
            acc_ops: [{op: "act", jobs: 2, cycles: 150000, macs: 0}, {op: "fc", jobs: 9, cycles: 50000, macs: 25600000}]},
           {host_s: 0.002, cycles: 200000, macs: 25600000, clock_mhz: 100, host_ops: []}],
    accuracy: {pass: true, cos_min: 0.99, cos_mean: 0.995, top1: 0.875, inputs: 8},
    host_only: {runs: [{host_s: 0.012}, {host_s: 0.009}, {host_s: 0.01}], host_code: {native: 0, portable: 10}, error: null}},
  {net: "t1", variant: "no_act", error: null, placement: {acc_nodes: 18, host_nodes: 7, acc_mac_pct: 97.5},
    runs: [{host_s: 0.0001, cycles: 100000, macs: 25600000, clock_mhz: 100, host_ops: []}],
    host_only: {runs: [{host_s: 0.009}]}},
  {net: "t1", variant: "large", flags: "--config large", error: null, placement: {acc_nodes: 20, host_nodes: 5, acc_mac_pct: 97.5},
    runs: [{host_s: 0.0005, cycles: 50000, macs: 25600000, clock_mhz: 200, config: "large", peak: 1024, bound_cycles: 40000, host_ops: []}],
    host_only: {runs: [{host_s: 0.009}]}},
  {net: "t2", variant: "default", error: "not made (scripts/models/make_zoo.py)"}]' > "$T/parts/transformers.json"
"$HERE/assemble.sh" "$T/parts" > "$T/results.json" || echo '{}' > "$T/results.json"
check "workload: utilization = MACs / (cycles x peak)" '.workloads[0].utilization - 118013952 / (712779 * 256) | fabs < 1e-12' "$T/results.json"
check "workload: compulsory bytes (in + weights + out)" '.workloads[0].compulsory_bytes == 438272' "$T/results.json"
check "workload: compute-bound bound = peak" '.workloads[0].bound_macs_per_cycle == 256 and (.workloads[0].goal_met | not)' "$T/results.json"
check "layer: memory-bound bound = B/cycle x intensity" '.networks[0].layers[1] | .intensity == 25.6 and (.bound_macs_per_cycle - 204.8 | fabs < 1e-9) and (.of_bound - 1 | fabs < 1e-9) and .utilization == 0.8' "$T/results.json"
check "layer: no MACs, no bound" '.networks[0].layers[2] | .bound_macs_per_cycle == null and .of_bound == null' "$T/results.json"
check "zoo: host share = host / (host + cycles at the clock)" '(.zoo[0].host_share - 0.001 / 0.004 | fabs < 1e-12) and .zoo[1].host_share == null' "$T/results.json"
check "network: cycles/s and goals" '.networks[0].tsim.cycles_per_s == 128225.9 and (.goals | map(select(.unit == "cycles"))[0].met) and (.goals | map(select(.goal | startswith("ResNet-18 through fsim (CPU)")))[0].met) and (.goals | map(select(.unit == "cycles/s"))[0] | .cmp == ">=" and (.met | not))' "$T/results.json"
check "transformers: host times are the minimum of the runs, cycles of that run" \
  '.transformers[0] | .runs == 3 and .host_s == 0.001 and .host_s_max == 0.003 and .host_only.s == 0.009 and .host_only.runs == 3 and .cycles == 200000 and (.cycles_vary | not) and (.host_ops[0].op == "Pow")' "$T/results.json"
check "transformers: end to end = host + cycles at the clock, shares, speedup over host-only, utilization" \
  '.transformers[0] | (.accel_s - 0.002 | fabs < 1e-12) and (.end_to_end_s - 0.003 | fabs < 1e-12) and (.host_share - 1/3 | fabs < 1e-9) and (.accel_share - 2/3 | fabs < 1e-9) and (.speedup - 3 | fabs < 1e-9) and .utilization == 0.5' "$T/results.json"
check "transformers: a model not made has no figures" '.transformers[3] | .error != null and .speedup == null and .host_share == null and .host_only.s == null' "$T/results.json"
check "transformers: speedup bound = host-only / (roofline bound cycles at the clock)" \
  '(.transformers[0].speedup_bound - 9 | fabs < 1e-9) and .transformers[1].speedup_bound == null' "$T/results.json"
check "transformers: a --config large build uses its own peak and clock" \
  '.transformers[2] | .peak == 1024 and .config == "large" and .utilization == 0.5 and (.speedup - 12 | fabs < 1e-9) and (.speedup_bound - 45 | fabs < 1e-9)' "$T/results.json"
check "transformers: the large build gets its own speedup goal" \
  '[.goals[] | select(.goal == "t1 `--config large`: modelled end-to-end speedup over the host-only run")] | length == 1 and .[0].met' "$T/results.json"
check "transformers: goals of the default builds (MACs >= 95%, accelerator >= 90% of the time, >= 5x), with cmp" \
  '[.goals[] | select(.goal | startswith("t1: ") or startswith("t2: "))] | length == 6 and all(.cmp == ">=")
   and (map(select(.goal == "t1: share of MACs on the accelerator"))[0] | .value == 0.975 and .met)
   and (map(select(.goal == "t1: accelerator'"'"'s share of the end-to-end time"))[0] | .target == 0.9 and (.met | not))
   and (map(select(.goal == "t1: modelled end-to-end speedup over the host-only run"))[0] | .target == 5 and .unit == "x" and (.met | not))
   and (map(select(.goal | startswith("t2: "))) | all(.value == null and (.met | not)))' "$T/results.json"
jq '.[0].host_only.runs = [{host_s: 0.02}, {host_s: 0.015}] | .[0].runs[2].host_s = 0.0005' "$T/parts/transformers.json" > "$T/t.json"
mkdir -p "$T/parts2" && cp "$T/parts/meta.json" "$T/parts/config.json" "$T/parts2/" && mv "$T/t.json" "$T/parts2/transformers.json"
"$HERE/assemble.sh" "$T/parts2" > "$T/results2.json" || echo '{}' > "$T/results2.json"
check "transformers: the speedup goal is met at >= 5x" \
  '(.transformers[0] | .host_s == 0.0005 and .host_only.s == 0.015 and (.speedup - 6 | fabs < 1e-9) and (.accel_share - 0.8 | fabs < 1e-9))
   and (.goals | map(select(.goal | startswith("t1: "))) | map(.met) == [true, false, true])' "$T/results2.json"

if jq -r -f "$HERE/table.jq" "$T/results.json" > "$T/table.txt" && grep -q "^Goals" "$T/table.txt"; then
  echo "ok   table.jq"
else echo "FAIL table.jq"; fails=$((fails + 1)); fi
printf 'intro\n<!-- bench:begin goals -->\nold\n<!-- bench:end goals -->\n<!-- bench:begin layers_resnet18 -->\n<!-- bench:end layers_resnet18 -->\nend\n' > "$T/doc.md"
if "$HERE/gen_doc.sh" "$T/results.json" "$T/doc.md" && ! grep -q '^old$' "$T/doc.md" && grep -q '^| goal |' "$T/doc.md" \
   && grep -q '^| 1 | `/layer1' "$T/doc.md" && tail -n 1 "$T/doc.md" | grep -q '^end$'; then
  echo "ok   gen_doc.sh"
else echo "FAIL gen_doc.sh"; fails=$((fails + 1)); fi
if jq -r --arg section zoo -f "$HERE/doc.jq" "$T/results.json" | grep -q '^| lstm | - | - | - | - | - | `loom: m.onnx: node 3 (LSTM): op / x` |$'; then
  echo "ok   doc.jq zoo (a refused network and its message)"
else echo "FAIL doc.jq zoo"; fails=$((fails + 1)); fi
printf '<!-- bench:begin goals -->\nkept\n<!-- bench:end goals -->\n<!-- bench:begin zoo -->\nold\n<!-- bench:end zoo -->\n' > "$T/zoo.md"
if "$HERE/gen_doc.sh" "$T/results.json" "$T/zoo.md" zoo && grep -q '^kept$' "$T/zoo.md" && ! grep -q '^old$' "$T/zoo.md" \
   && grep -q '^| unet | 1.5 s / 1.2 s | 20 / 5 | 97.5% | 0.3 M | 25% |  |$' "$T/zoo.md"; then
  echo "ok   gen_doc.sh with a section filter"
else echo "FAIL gen_doc.sh with a section filter"; fails=$((fails + 1)); fi
jq -r --arg section transformers -f "$HERE/doc.jq" "$T/results.json" > "$T/xf.md" 2>&1
if grep -q '^| t1 | 97.5% | 20 / 5 | 0.2 M | 50% | 1 ms (3 ms) | 33.3% | 3 ms | 9 ms (12 ms) | 3x | 9x | 0.99 / 0.995 | 7 of 8 |$' "$T/xf.md" \
   && grep -q '^| t1 `--config large` | 97.5% | 20 / 5 | 0.05 M | 50% | 0.5 ms (0.5 ms) | 66.7% | 0.75 ms | 9 ms (9 ms) | 12x | 45x | - | - |$' "$T/xf.md" \
   && grep -q '^| t1 `--config large`: modelled end-to-end speedup over the host-only run | >= 5x | 12x | yes |$' "$T/xf.md" \
   && grep -q '^| t1: modelled end-to-end speedup over the host-only run | >= 5x | 3x | \*\*no\*\* |$' "$T/xf.md" \
   && grep -q '^| t2 | .*`not made' "$T/xf.md" && grep -q 'the minimum of 3 runs' "$T/xf.md" \
   && grep -q '^| t1 | act 2: 0.15 M, fc 9: 0.05 M | Pow 4: 0.6 ms, COPY 9: 0.4 ms | 7 / 3 | 0 / 10 |$' "$T/xf.md" && ! grep -q 'resnet18' "$T/xf.md"; then
  echo "ok   doc.jq transformers (row, host steps, goals, caption)"
else echo "FAIL doc.jq transformers"; cat "$T/xf.md"; fails=$((fails + 1)); fi
for s in run goals workloads networks cpu reference zoo transformers; do
  jq -r --arg section $s -f "$HERE/doc.jq" "$T/results.json" > /dev/null || { echo "FAIL doc.jq $s"; fails=$((fails + 1)); }
done

awk -f "$HERE/parse_placement.awk" "$TD/placement.txt" > "$T/place.json" || echo '{}' > "$T/place.json"
check "placement: summary line, per-op rows, host code line" \
  '.acc_nodes == 35 and .host_nodes == 216 and .acc_mac_pct == 100 and (.rows | length) == 21 and .host_code == {"native": 145, "portable": 82}
   and .rows[6] == {"op": "Div*Erf*Add*Mul*Mul", "acc": 2, "host": 0, "why": ""}
   and .rows[17] == {"op": "Softmax", "acc": 0, "host": 2, "why": "no int8 form: float32 softmax on the host"}' "$T/place.json"
check "placement: the int8 row ops' DMA floor lines" \
  '.row_ops == [{"op": "Softmax", "nodes": 2, "bytes": 16384, "floor_cycles": 2048, "floor_us": 20.5},
                {"op": "LayerNormalization", "nodes": 3, "bytes": 24576, "floor_cycles": 3072, "floor_us": 30.7}]' "$T/place.json"
printf 'zoo_compare: FAIL cos_min=0.1000 cos_mean=-0.2000 top1=- cos=0.3000 relerr=1.5000\nzoo_compare: PASS cos_min=0.9853 cos_mean=0.9955 top1=0.8750 cos=0.9975 relerr=0.1471\n' \
  | awk -f "$HERE/parse_compare.awk" > "$T/cmp.json" || echo '{}' > "$T/cmp.json"
check "compare: the last verdict line" '. == {"pass": true, "cos_min": 0.9853, "cos_mean": 0.9955, "top1": 0.875, "cos": 0.9975, "relerr": 0.1471}' "$T/cmp.json"
printf 'zoo_compare: FAIL cos_min=-nan cos_mean=0.2 top1=- cos=0.3 relerr=1.5\n' | awk -f "$HERE/parse_compare.awk" > "$T/cmp2.json" || echo '{}' > "$T/cmp2.json"
check "compare: FAIL, no top-1, a NaN" '.pass == false and .cos_min == null and .top1 == null and .cos_mean == 0.2' "$T/cmp2.json"
must_fail "placement parser refuses a report without the summary" awk -f "$HERE/parse_placement.awk" "$TD/report.txt"
must_fail "compare parser refuses other text" awk -f "$HERE/parse_compare.awk" "$TD/report.txt"
must_fail "report parser refuses counters" awk -f "$HERE/parse_report.awk" "$TD/counters.txt"
must_fail "counters parser refuses a report" awk -f "$HERE/parse_counters.awk" "$TD/report.txt"
printf 'intro\n<!-- bench:begin goals -->\n' > "$T/bad.md"
must_fail "gen_doc.sh refuses an unterminated block" "$HERE/gen_doc.sh" "$T/results.json" "$T/bad.md"

# The real CLI's output, when the digits CNN is there (make test builds it).
M=build/models
if [ -x "$LOOM" ] && [ -f $M/digits_cnn.onnx ]; then
  "$LOOM" compile $M/digits_cnn.onnx --calib $M/calib_digits_cnn -o "$T/d.loom" > "$T/d.txt" 2>&1
  "$LOOM" run "$T/d.loom" --counters -i $M/digits_cnn_in0.npy > "$T/r.txt" 2>&1
  awk -f "$HERE/parse_report.awk" "$T/d.txt" > "$T/d.json" || echo '{}' > "$T/d.json"
  awk -f "$HERE/parse_counters.awk" "$T/r.txt" > "$T/r.json" || echo '{}' > "$T/r.json"
  jq -s '{report: .[0], counters: .[1]}' "$T/d.json" "$T/r.json" > "$T/dr.json"
  check "real loom compile: every accelerator row is a job" '.report.total.jobs == (.report.layers | map(select(.job != null)) | length) and .report.total.jobs > 0' "$T/dr.json"
  check "real loom run --counters: one block per job" '(.counters.jobs | length) == .report.total.jobs and (.counters.total.GEMM_OPS > 0)' "$T/dr.json"
  awk -f "$HERE/parse_placement.awk" "$T/d.txt" > "$T/dp.json" || echo '{}' > "$T/dp.json"
  check "real loom compile: placement summary and its rows" '.acc_nodes > 0 and (.rows | length) > 0 and ((.rows | map(.acc + .host) | add) == .acc_nodes + .host_nodes)' "$T/dp.json"
else
  echo "skip real-CLI check ($LOOM or $M/digits_cnn.onnx missing)"
fi
# zoo_compare's real verdict line (make test builds it and the quick zoo).
CMP=$BUILD/tests/zoo/zoo_compare
if [ -x "$CMP" ] && [ -d $M/zoo/bert/ref ]; then
  "$CMP" $M/zoo/bert/ref $M/zoo/bert/ref --min-cos 0.9 --top1 0.75 > "$T/zc.txt" 2>&1
  awk -f "$HERE/parse_compare.awk" "$T/zc.txt" > "$T/zc.json" || echo '{}' > "$T/zc.json"
  check "real zoo_compare: the verdict line" '.pass and .cos_min == 1 and .top1 == 1' "$T/zc.json"
else
  echo "skip real zoo_compare check ($CMP or $M/zoo/bert/ref missing)"
fi
[ "$fails" -eq 0 ]
