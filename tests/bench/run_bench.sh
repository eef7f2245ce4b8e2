#!/bin/bash
# run_bench.sh - Loom's benchmark suite (`make bench`, `make bench-compiler`).
#
#   tests/bench/run_bench.sh all        everything (docs/performance.md lists it)
#   tests/bench/run_bench.sh compiler   ResNet-18 compile time, cycles on tsim and
#                                       the per-layer table only
#   tests/bench/run_bench.sh zoo        the model zoo's figures only (bench_zoo)
#   tests/bench/run_bench.sh transformers
#                                       issue 17's transformer figures only
#                                       (bench_transformers)
#
# Environment: LOOM (build/bin/loom), BUILD (build), MODELS (build/models),
# OUT (bench), CONFIG (default), PY3 (/usr/bin/python3), BENCH_RUNS (10: runs
# per host time in bench_transformers, the minimum is kept).  The Makefile has
# built the tools and the models before (tests/bench/module.mk).
#
# Every step leaves the tools' own output in $OUT/raw/ and a JSON part in
# $OUT/parts/; tests/bench/results.jq joins the parts into
# $OUT/results.json and derives utilization, roofline bounds and the goals;
# tests/bench/table.jq prints the readable table and roofline.gp the plots.
# The hardware figures (peak MACs per cycle, DRAM bytes per cycle) come
# from the generated configuration table through bench_config; the DRAM
# model of tsim is run at exactly that bandwidth (bw=).
#
# Times are wall-clock and CPU (user + system of the measured process):
# the machine is shared, and on a loaded machine the CPU time is the
# figure that does not depend on the neighbours.  The load average before
# and after the run is recorded beside them.  This is a benchmark: it
# stops on a broken tool, never on a slow figure.
set -eu
set -o pipefail

MODE=${1:-all}
LOOM=${LOOM:-build/bin/loom}
BUILD=${BUILD:-build}
MODELS=${MODELS:-build/models}
OUT=${OUT:-bench}
CONFIG=${CONFIG:-default}
PY3=${PY3:-/usr/bin/python3}
RUNS=${BENCH_RUNS:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
RAW=$OUT/raw
PARTS=$OUT/parts
WL=$OUT/workloads
NETS="resnet18 mobilenetv2"
TSIM_LIB=$(cd "$BUILD" && pwd)/tsim/$CONFIG/libloom_tsim.so

case $MODE in
  all | compiler | zoo | transformers) ;;
  *) echo "usage: run_bench.sh all|compiler|zoo|transformers" >&2; exit 2 ;;
esac
[ "$MODE" = compiler ] && NETS=resnet18
[ "$MODE" = zoo ] || [ "$MODE" = transformers ] && NETS=""

T0=$(date +%s)
say() { printf 'bench: [%4ds] %s\n' $(($(date +%s) - T0)) "$*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

# measure TIMEFILE OUTFILE CMD... : runs CMD with stdout into OUTFILE and
# stderr into OUTFILE.err and onto the terminal (fd 3: loom's progress lines
# show while a long compile or tsim run goes on); writes "wall user sys"
# seconds to TIMEFILE.
exec 3>&2
measure() {
  local tf=$1 of=$2 TIMEFORMAT='%R %U %S'
  shift 2
  { time "$@" > "$of" 2> >(tee "$of.err" >&3); } 2> "$tf" ||
    { tail -20 "$of" "$of.err" >&2; die "failed: $* (output in $of, $of.err)"; }
}
# tee_progress NAME FILE: a benchmark program's table into FILE and, line by
# line as it comes, onto the terminal.
tee_progress() { tee "$2" | sed -u "s/^/bench: $1: /" >&3; }
# time_json TIMEFILE -> {"wall_s": .., "cpu_s": ..}
time_json() { awk '{ printf "{\"wall_s\": %s, \"cpu_s\": %.3f}", $1, $2 + $3 }' "$1"; }

has_flag() { "$LOOM" "$1" --help 2>&1 | grep -q -- "$2"; }
# parse report|counters|placement|compare TEXT -> TEXT.json, through parse_WHAT.awk
parse() { awk -f "$HERE/parse_$1.awk" "$2" > "$2.json" || die "$2: not the output parse_$1.awk expects"; }

rm -rf "$RAW" "$PARTS"
mkdir -p "$RAW" "$PARTS" "$WL"
[ -x "$LOOM" ] || die "$LOOM: not built (run make bench)"
[ -z "$NETS" ] || [ -f "$TSIM_LIB" ] || die "$TSIM_LIB: not built (make tsim CONFIG=$CONFIG)"

# ---- the machine and the configuration ----
"$BUILD/bench/bench_config" "$CONFIG" > "$PARTS/config.json"
BPC=$(jq -r .dram_bytes_per_cycle "$PARTS/config.json")
# The configuration's estimated Fmax (`loom config fmax`: Yosys synth_xilinx
# and loomsta's logic levels, docs/rtl.md "Timing"; minutes the first time,
# cached after), so latencies are given at the nominal clock and at the
# estimate.  BENCH_FMAX=0 leaves it out, and so do the modes without those
# networks (zoo, transformers: their times are at the nominal clock).
FMAX=null
if [ "${BENCH_FMAX:-1}" = 1 ] && [ -n "$NETS" ]; then
  say "config $CONFIG: estimated Fmax (loom config fmax; Yosys takes minutes the first time)"
  if "$LOOM" config fmax "$CONFIG" > "$RAW/fmax.txt" 2>&1; then
    FMAX=$(sed -n 's/.*estimated Fmax \([0-9.]*\) MHz.*/\1/p' "$RAW/fmax.txt" | head -n 1)
    say "config $CONFIG: $(head -n 1 "$RAW/fmax.txt")"
  else
    say "config $CONFIG: no Fmax estimate ($(tail -n 1 "$RAW/fmax.txt")); latencies at the nominal clock only"
  fi
fi
jq --argjson f "${FMAX:-null}" '. + {fmax_mhz_estimate: $f}' "$PARTS/config.json" > "$PARTS/config.json.new" &&
  mv "$PARTS/config.json.new" "$PARTS/config.json"
TSIM_OPTS="lib=$TSIM_LIB,bw=$BPC"
TIMING=0
has_flag run --timing && TIMING=1
PROFILE=0
has_flag run --profile-json && PROFILE=1
jq -n --arg mode "$MODE" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --arg host "$(uname -srm)" --arg cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
  --argjson nproc "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)" \
  --arg tsim_options "bw=$BPC (latency and outstanding reads: tsim defaults)" \
  --argjson fsim_timing $TIMING --argjson profile $PROFILE \
  '{mode: $mode, date: $date, host: $host, cpu: $cpu, nproc: $nproc, load_start: $load, commit: $commit,
    tsim_options: $tsim_options, fsim_timing_flag: ($fsim_timing == 1), profile_flag: ($profile == 1)}' \
  > "$PARTS/meta.json"
say "config $CONFIG: $(jq -r '"\(.peak_macs_per_cycle) MACs/cycle, \(.dram_bytes_per_cycle) DRAM bytes/cycle"' \
  "$PARTS/config.json"); fsim --timing: $([ $TIMING = 1 ] && echo yes || echo 'not in this loom');" \
  "run --profile-json: $([ $PROFILE = 1 ] && echo yes || echo 'not in this loom'); load $(cut -d' ' -f1 /proc/loadavg)"

# fsim_timing MODEL INPUT NAME -> prints the fsim model's cycle estimate or null
fsim_timing() {
  if [ $TIMING = 0 ]; then echo null; return; fi
  "$LOOM" run "$1" -b fsim --timing --counters -i "$2" > "$RAW/$3.fsim_timing.txt" 2> "$RAW/$3.fsim_timing.err" ||
    { echo null; return; }
  awk -f "$HERE/parse_counters.awk" "$RAW/$3.fsim_timing.txt" | jq '.total.CYCLES // null | if . == 0 then null else . end'
}

# ---- the twelve ResNet-18 convolution workloads ----
bench_workloads() {
  say "workloads: making the twelve one-layer models"
  "$PY3" "$HERE/make_workloads.py" --out "$WL" > "$RAW/make_workloads.txt"
  local n=0 name h c k r s
  : > "$PARTS/workloads.jsonl"
  while IFS="$(printf '\t')" read -r name h c k r s; do
    n=$((n + 1))
    say "workload $n/12 $name (${h}x${h}, $c -> $k, ${r}x${r}/$s): compile, tsim"
    "$LOOM" compile "$WL/$name.onnx" --config "$CONFIG" --calib "$WL/calib_$name" -o "$WL/$name.loom" \
      > "$RAW/$name.compile.txt"
    "$LOOM" run "$WL/$name.loom" -b tsim --options "$TSIM_OPTS" --counters -i "$WL/${name}_in.npy" \
      > "$RAW/$name.tsim.txt"
    local est
    est=$(fsim_timing "$WL/$name.loom" "$WL/${name}_in.npy" "$name")
    parse report "$RAW/$name.compile.txt"
    parse counters "$RAW/$name.tsim.txt"
    jq -n --arg name "$name" --argjson h "$h" --argjson c "$c" --argjson k "$k" --argjson r "$r" \
      --argjson s "$s" --argjson est "$est" \
      --slurpfile rep "$RAW/$name.compile.txt.json" --slurpfile cnt "$RAW/$name.tsim.txt.json" \
      '{name: $name, h: $h, c: $c, k: $k, r: $r, s: $s, report: $rep[0], counters: $cnt[0].total,
        fsim_timing_cycles: $est}' -c >> "$PARTS/workloads.jsonl"
  done < "$WL/workloads.tsv"
  jq -s . "$PARTS/workloads.jsonl" > "$PARTS/workloads.json"
  rm "$PARTS/workloads.jsonl"
}

# ---- GEMM size sweep (bench_gemm: tests/bench/bench_rtl.c's streams) ----
bench_gemm() {
  say "GEMM sweep on tsim"
  "$BUILD/bench/bench_gemm" --config "$CONFIG" --lib "$TSIM_LIB" --json "$RAW/gemm.json" | tee_progress gemm "$RAW/gemm.txt"
  jq '{resident: .resident_gemm, sweep: [to_entries[] | select(.key != "resident_gemm") | {name: .key} + .value]}' \
    "$RAW/gemm.json" > "$PARTS/gemm.json"
}

# ---- whole networks: compile time, tsim, fsim ----
bench_net() {
  local net=$1 in=$MODELS/check_imagenet/000.npy calib=$MODELS/calib_imagenet ncal popt=() i calibs
  calibs=("$calib"/*.npy)
  ncal=${#calibs[@]}
  say "$net: loom compile (calibrated on $ncal inputs)"
  measure "$RAW/$net.compile.time" "$RAW/$net.compile.txt" \
    "$LOOM" compile "$MODELS/$net.onnx" --config "$CONFIG" --calib "$calib" -o "$OUT/$net.loom"
  mkdir -p "$OUT/calib1"
  cp "${calibs[0]}" "$OUT/calib1/000.npy"
  say "$net: loom compile (calibrated on 1 input: the part of compile time that is not calibration)"
  measure "$RAW/$net.compile1.time" "$RAW/$net.compile1.txt" \
    "$LOOM" compile "$MODELS/$net.onnx" --config "$CONFIG" --calib "$OUT/calib1" -o "$OUT/$net.calib1.loom"
  say "$net: tsim (Verilator) ..."
  [ $PROFILE = 1 ] && popt=(--profile --profile-json "$RAW/$net.profile.json")
  measure "$RAW/$net.tsim.time" "$RAW/$net.tsim.txt" \
    "$LOOM" run "$OUT/$net.loom" -b tsim --options "$TSIM_OPTS" --counters "${popt[@]}" -i "$in"
  parse report "$RAW/$net.compile.txt"
  parse counters "$RAW/$net.tsim.txt"
  say "$net: tsim $(jq .total.CYCLES "$RAW/$net.tsim.txt.json") cycles in" \
    "$(cut -d' ' -f1 "$RAW/$net.tsim.time") s; fsim x3"
  for i in 1 2 3; do
    measure "$RAW/$net.fsim.time$i" "$RAW/$net.fsim.txt" "$LOOM" run "$OUT/$net.loom" -b fsim -i "$in"
  done
  cut -d' ' -f1 "$RAW/$net.fsim.time"[123] | sort -n | sed -n 2p > "$RAW/$net.fsim.wall"
  awk '{ print $2 + $3 }' "$RAW/$net.fsim.time"[123] | sort -n | sed -n 2p > "$RAW/$net.fsim.cpu"
  local cpu=null
  if [ "$MODE" = all ]; then
    say "$net: loom compile --target cpu, loom run x3 (the whole process: load and inference)"
    "$LOOM" compile "$MODELS/$net.onnx" --target cpu -o "$OUT/$net.cpu.loom" > "$RAW/$net.cpu_compile.txt"
    for i in 1 2 3; do
      measure "$RAW/$net.cpu.time$i" "$RAW/$net.cpu.txt" "$LOOM" run "$OUT/$net.cpu.loom" -i "$in"
    done
    cpu=$(for i in 1 2 3; do time_json "$RAW/$net.cpu.time$i"; echo; done | jq -s -c \
      '{wall_s: (map(.wall_s) | sort | .[1]), cpu_s: (map(.cpu_s) | sort | .[1])}')
  fi
  local est prof=null
  est=$(fsim_timing "$OUT/$net.loom" "$in" "$net")
  if [ $PROFILE = 1 ] && jq -e . "$RAW/$net.profile.json" > /dev/null 2>&1; then prof=$RAW/$net.profile.json; fi
  jq -n --arg net "$net" --argjson ncal "$ncal" --argjson est "$est" --argjson cpu "$cpu" \
    --argjson compile "$(time_json "$RAW/$net.compile.time")" \
    --argjson compile1 "$(time_json "$RAW/$net.compile1.time")" \
    --argjson tsim "$(time_json "$RAW/$net.tsim.time")" \
    --argjson fsim_wall "$(cat "$RAW/$net.fsim.wall")" --argjson fsim_cpu "$(cat "$RAW/$net.fsim.cpu")" \
    --slurpfile rep "$RAW/$net.compile.txt.json" --slurpfile cnt "$RAW/$net.tsim.txt.json" \
    --slurpfile prof "$( [ "$prof" = null ] && echo /dev/null || echo "$prof")" \
    '{net: $net, calib_inputs: $ncal, compile: $compile, compile_calib1: $compile1, report: $rep[0], tsim: ($tsim + {counters: $cnt[0]}),
      fsim: {wall_s: $fsim_wall, cpu_s: $fsim_cpu, timing_cycles: $est}, target_cpu_run: $cpu,
      profile: ($prof[0] // null)}' > "$PARTS/net_$net.json"
}

# ---- host code: LLVM against the C reference, --target cpu (bench_hostgen) ----
bench_hostgen() {
  say "host code: bench_hostgen on $NETS (LLVM code against the C reference; --target cpu)"
  # shellcheck disable=SC2086 # NETS is a list of names
  "$BUILD/bench/bench_hostgen" --json "$PARTS/hostgen.json" --models "$MODELS" $NETS | tee_progress hostgen "$RAW/hostgen.txt"
}

# ---- CPU baseline: PyTorch fp32 and int8 ----
bench_torch() {
  say "PyTorch baseline (fp32, int8) on $NETS"
  # shellcheck disable=SC2086 # NETS is a list of names
  "$PY3" "$HERE/torch_baseline.py" --json "$PARTS/pytorch.json" $NETS 2> "$RAW/pytorch.txt" \
    || { cat "$RAW/pytorch.txt" >&2; die "PyTorch baseline failed"; }
}

# placement COMPILE_OUTPUT -> the placement summary's last line as JSON, or null
placement() {
  awk -f "$HERE/parse_placement.awk" "$1" 2> /dev/null | jq -c '{acc_nodes, host_nodes, acc_mac_pct}' || echo null
}
# loom_error LOG -> the last `loom...: ` line of LOG, or "WHAT failed: " and its last line
loom_error() {
  local e
  e=$(grep '^loom[a-z ]*: ' "$1" | tail -1 || true)
  echo "${e:-$2 failed: $(tail -1 "$1")}"
}

# ---- the model zoo (tests/zoo/zoo.list, made by scripts/models/make_zoo.py) ----
# Per network: compile time (calibrated on its 8 calibration inputs), the
# placement summary's last line (nodes on the accelerator and the host, share
# of MACs on the accelerator), and one check input on fsim with the timing
# model and --profile-json: cycles, and the host steps' share of the run time,
# host / (host + accelerator time at the clock).  A network that does not
# compile or run is recorded with the tool's message: a benchmark stops on a
# broken tool, not on a model the compiler refuses.
bench_zoo() {
  local list=tests/zoo/zoo.list Z=$MODELS/zoo name shape sflag err place prof run compiled TIMEFORMAT='%R %U %S'
  : > "$PARTS/zoo.jsonl"
  for name in $(awk '!/^#/ && NF {print $1}' "$list"); do
    shape=$(awk -v n="$name" '!/^#/ && $1 == n {print $6}' "$list")
    sflag=()
    [ "$shape" = - ] || sflag=(--input-shape "$shape")
    err="" place=null prof=null run=null compiled=0
    if [ ! -f "$Z/$name/meta.json" ]; then
      err="not made (scripts/models/make_zoo.py)"
    else
      say "zoo $name: compile, fsim --timing"
      if { time "$LOOM" compile "$Z/$name/model.onnx" --config "$CONFIG" --calib "$Z/$name/calib" \
             -o "$OUT/zoo_$name.loom" "${sflag[@]}" > "$RAW/zoo_$name.compile.txt" 2>&1; } \
           2> "$RAW/zoo_$name.compile.time"; then
        compiled=1
      else
        err=$(loom_error "$RAW/zoo_$name.compile.txt" "loom compile")
      fi
    fi
    if [ $compiled = 1 ]; then
      place=$(placement "$RAW/zoo_$name.compile.txt")
      if { time "$LOOM" run "$OUT/zoo_$name.loom" -b fsim --timing --profile-json "$RAW/zoo_$name.profile.json" \
             -i "$Z/$name/check/000.npy" > "$RAW/zoo_$name.run.txt" 2>&1; } 2> "$RAW/zoo_$name.run.time"; then
        jq -e . "$RAW/zoo_$name.profile.json" > /dev/null 2>&1 && prof=$RAW/zoo_$name.profile.json
        run=$(time_json "$RAW/zoo_$name.run.time")
      else
        err=$(loom_error "$RAW/zoo_$name.run.txt" "loom run")
      fi
    fi
    jq -n -c --arg net "$name" --arg err "$err" --argjson place "$place" --argjson run "$run" \
      --argjson compile "$([ $compiled = 1 ] && time_json "$RAW/zoo_$name.compile.time" || echo null)" \
      --slurpfile prof "$( [ "$prof" = null ] && echo /dev/null || echo "$prof")" \
      '($prof[0] // null) as $p
       | {net: $net, error: (if $err == "" then null else $err end),
          compile: $compile, placement: $place,
          fsim_run: $run, macs: ($p.total.macs // null), cycles: ($p.total.cycles // null),
          host_s: ($p.host_seconds // null), clock_mhz: ($p.clock_mhz // null)}' >> "$PARTS/zoo.jsonl"
  done
  jq -s . "$PARTS/zoo.jsonl" > "$PARTS/zoo.json"
  rm "$PARTS/zoo.jsonl"
}

# ---- transformers (issue 17): the zoo's ViT, BERT-like encoder, nn.TransformerEncoder ----
# Per network (made by make_zoo.py into $MODELS/zoo/NAME) and build (the
# default compile; --no-act: the element-wise activations such as GELU on the
# host instead of activation tables; --config $XFMR_LARGE): the placement summary (its
# last line, its per-op rows and its int8 row ops' DMA floor), the host code line, one check input on
# fsim --timing --profile-json BENCH_RUNS times (cycles: the timing model,
# deterministic; host steps' wall time: every run kept, results.jq takes the
# minimum), and the zoo's accuracy metrics on every check input (fsim,
# tests/zoo/zoo_compare against the PyTorch fp32 references with
# tests/zoo/zoo.list's thresholds).  Per network once: the host-only run,
# `loom compile --target cpu`, timed the same way (its profile's host
# seconds, BENCH_RUNS runs).  The time of a run is its inference only (the
# profile's host steps), not the process's start and model load.
XFMR_NETS="vit bert transformer"
# The builds per network: the default compile, --no-act, and the same model on
# the UltraScale+ configuration (XFMR_LARGE, default `large`: 32x32 at 200 MHz),
# where the host's share decides the speedup instead of the GEMM core's peak.
XFMR_LARGE=${XFMR_LARGE:-large}
# xf_runs LOOMFILE INPUT TAG -> runs it BENCH_RUNS times with --profile-json;
# prints the JSON array of the runs' {host_s, cycles, macs, clock_mhz, config,
# peak, bound_cycles, host_ops, acc_ops} (peak: MACs per cycle; bound_cycles:
# the profile's roofline bound of the jobs, min(peak, DRAM bytes x intensity))
# (host_ops: the host steps' wall time summed per step name; acc_ops: the
# jobs' cycles and MACs summed per kind, the first word of the op: fc, act..).
xf_runs() {
  local i
  for i in $(seq "$RUNS"); do
    "$LOOM" run "$1" -b fsim --timing --profile-json "$RAW/$3.profile$i.json" -i "$2" > "$RAW/$3.run$i.txt" 2>&1 ||
      { loom_error "$RAW/$3.run$i.txt" "loom run" > "$RAW/$3.error"; exit 1; }
    jq -c '{host_s: .host_seconds, cycles: (.total.cycles // null), macs: (.total.macs // null), clock_mhz,
            config, peak: (.peak_macs_per_cycle // null), bound_cycles: (.total.bound_cycles // null),
            host_ops: ([.steps[] | select(.job < 0)] | group_by(.name)
              | map({op: .[0].name, steps: length, seconds: (map(.seconds) | add)}) | sort_by(-.seconds)),
            acc_ops: ([.steps[] | select(.job >= 0) | . + {kind: (.op | split(" ")[0])}] | group_by(.kind)
              | map({op: .[0].kind, jobs: length, cycles: (map(.cycles // 0) | add), macs: (map(.macs // 0) | add)})
              | sort_by(-.cycles))}' \
      "$RAW/$3.profile$i.json"
  done | jq -s -c .
}
bench_transformers() {
  local Z=$MODELS/zoo CMP=$BUILD/tests/zoo/zoo_compare name variant line top1 mincos shape vflag tag err
  local place rows rowops hcode runs acc cpu cpu_hcode cpu_err f outname sflag tflag checks
  [ -x "$CMP" ] || die "$CMP: not built (make $CMP)"
  : > "$PARTS/transformers.jsonl"
  for name in $XFMR_NETS; do
    line=$(awk -v n="$name" '!/^#/ && $1 == n' tests/zoo/zoo.list)
    [ -n "$line" ] || die "transformers: $name is not in tests/zoo/zoo.list"
    # shellcheck disable=SC2086 # the list's columns
    set -- $line
    top1=$4 mincos=$5 shape=$6
    sflag=() tflag=()
    [ "$shape" = - ] || sflag=(--input-shape "$shape")
    [ "$top1" = - ] || tflag=(--top1 "$top1")
    if [ ! -f "$Z/$name/meta.json" ]; then
      jq -n -c --arg net "$name" '{net: $net, variant: "default", error: "not made (scripts/models/make_zoo.py)"}' \
        >> "$PARTS/transformers.jsonl"
      continue
    fi
    outname=$(jq -r '.outputs[0].name' "$Z/$name/meta.json")
    say "transformers $name: host-only (--target cpu) compile, $RUNS runs"
    cpu=null cpu_hcode=null cpu_err=""
    if "$LOOM" compile "$Z/$name/model.onnx" --target cpu -o "$OUT/xf_$name.cpu.loom" "${sflag[@]}" \
         > "$RAW/xf_$name.cpu.compile.txt" 2>&1; then
      parse placement "$RAW/xf_$name.cpu.compile.txt"
      cpu_hcode=$(jq -c .host_code "$RAW/xf_$name.cpu.compile.txt.json")
      cpu=$(xf_runs "$OUT/xf_$name.cpu.loom" "$Z/$name/check/000.npy" "xf_$name.cpu") ||
        { cpu=null; cpu_err=$(cat "$RAW/xf_$name.cpu.error"); }
    else
      cpu_err=$(loom_error "$RAW/xf_$name.cpu.compile.txt" "loom compile --target cpu")
    fi
    for variant in default no_act large; do
      tag=xf_$name.$variant
      vflag=(--config "$CONFIG")
      [ $variant = no_act ] && vflag+=(--no-act)
      [ $variant = large ] && vflag=(--config "$XFMR_LARGE")
      say "transformers $name ($variant): compile, fsim --timing x$RUNS, accuracy on the check inputs"
      err="" place=null rows=null rowops=null hcode=null runs=null acc=null
      if "$LOOM" compile "$Z/$name/model.onnx" --calib "$Z/$name/calib" -o "$OUT/$tag.loom" \
           "${sflag[@]}" "${vflag[@]}" > "$RAW/$tag.compile.txt" 2>&1; then
        parse placement "$RAW/$tag.compile.txt"
        place=$(jq -c '{acc_nodes, host_nodes, acc_mac_pct}' "$RAW/$tag.compile.txt.json")
        rows=$(jq -c .rows "$RAW/$tag.compile.txt.json")
        rowops=$(jq -c .row_ops "$RAW/$tag.compile.txt.json")
        hcode=$(jq -c .host_code "$RAW/$tag.compile.txt.json")
        runs=$(xf_runs "$OUT/$tag.loom" "$Z/$name/check/000.npy" "$tag") || { runs=null; err=$(cat "$RAW/$tag.error"); }
      else
        err=$(loom_error "$RAW/$tag.compile.txt" "loom compile")
      fi
      if [ -z "$err" ]; then
        rm -rf "$OUT/$tag.out" && mkdir -p "$OUT/$tag.out"
        for f in "$Z/$name"/check/[0-9]*.npy; do
          "$LOOM" run "$OUT/$tag.loom" -b fsim -i "$f" -o "$outname=$OUT/$tag.out/$(basename "$f")" \
            > "$RAW/$tag.check.txt" 2>&1 || { err=$(loom_error "$RAW/$tag.check.txt" "loom run"); break; }
        done
      fi
      if [ -z "$err" ]; then
        "$CMP" "$Z/$name/ref" "$OUT/$tag.out" --min-cos "$mincos" "${tflag[@]}" > "$RAW/$tag.compare.txt" 2>&1 || true
        parse compare "$RAW/$tag.compare.txt"
        checks=("$Z/$name"/check/[0-9]*.npy)
        acc=$(jq -c --argjson n ${#checks[@]} --argjson min_cos "$mincos" --arg top1 "$top1" \
          '. + {inputs: $n, min_cos_threshold: $min_cos, top1_threshold: (if $top1 == "-" then null else ($top1 | tonumber) end)}' \
          "$RAW/$tag.compare.txt.json")
      fi
      jq -n -c --arg net "$name" --arg variant "$variant" --arg flags "${vflag[*]}" --arg err "$err" --arg cpu_err "$cpu_err" \
        --argjson place "$place" --argjson rows "$rows" --argjson rowops "$rowops" --argjson hcode "$hcode" --argjson runs "$runs" \
        --argjson acc "$acc" --argjson cpu "$cpu" --argjson cpu_hcode "$cpu_hcode" \
        '{net: $net, variant: $variant, flags: $flags, error: (if $err == "" then null else $err end), placement: $place,
          placement_rows: $rows, row_ops: $rowops, host_code: $hcode, runs: $runs, accuracy: $acc,
          host_only: {runs: $cpu, host_code: $cpu_hcode, error: (if $cpu_err == "" then null else $cpu_err end)}}' \
        >> "$PARTS/transformers.jsonl"
    done
  done
  jq -s . "$PARTS/transformers.jsonl" > "$PARTS/transformers.json"
  rm "$PARTS/transformers.jsonl"
}

# ---- DRAM traffic with and without cross-layer fusion ----
# Per network (the bench networks, and the zoo's MobileNets and
# EfficientNet-B0 when made): compiled as usual and with --no-chain (every
# convolution its own job), one input on fsim --timing --counters; every
# DRAM byte the counters saw (instructions, micro-ops, weights with PAR and
# LUT rows, inputs, ACC rows, outputs) and the cycles.
bench_dram() {
  local list=() net onnx calib in v bytes cyc
  has_flag compile --no-chain || { say "dram: loom compile has no --no-chain"; return; }
  for net in $NETS; do list+=("$net|$MODELS/$net.onnx|$MODELS/calib_imagenet|$MODELS/check_imagenet/000.npy"); done
  for net in mobilenetv2 mobilenetv3l efficientnet_b0; do
    [ -f "$MODELS/zoo/$net/meta.json" ] &&
      list+=("zoo_$net|$MODELS/zoo/$net/model.onnx|$MODELS/zoo/$net/calib|$MODELS/zoo/$net/check/000.npy")
  done
  : > "$PARTS/dram.jsonl"
  for v in "${list[@]}"; do
    IFS='|' read -r net onnx calib in <<< "$v"
    say "dram $net: compile with and without chains, fsim --counters"
    local parts=()
    for mode in chains no_chain; do
      "$LOOM" compile "$onnx" --config "$CONFIG" --calib "$calib" -o "$OUT/dram_$net.$mode.loom" \
        $([ $mode = no_chain ] && echo --no-chain) > "$RAW/dram_$net.$mode.compile.txt" 2>&1 ||
        die "dram $net: compile failed ($RAW/dram_$net.$mode.compile.txt)"
      "$LOOM" run "$OUT/dram_$net.$mode.loom" -b fsim --timing --counters -i "$in" > "$RAW/dram_$net.$mode.txt" 2>&1 ||
        die "dram $net: run failed ($RAW/dram_$net.$mode.txt)"
      parse counters "$RAW/dram_$net.$mode.txt"
      parts+=("$RAW/dram_$net.$mode.txt.json")
    done
    jq -n -c --arg net "$net" --slurpfile a "${parts[0]}" --slurpfile b "${parts[1]}" \
      'def bytes: [.BYTES_RD_INSN, .BYTES_RD_UOP, .BYTES_RD_WGT, .BYTES_RD_INP, .BYTES_RD_ACC, .BYTES_WR_OUT] | map(. // 0) | add;
       def act: [.BYTES_RD_INP, .BYTES_RD_ACC, .BYTES_WR_OUT] | map(. // 0) | add;
       {net: $net, chains: {dram_bytes: ($a[0].total | bytes), act_bytes: ($a[0].total | act), weight_bytes: $a[0].total.BYTES_RD_WGT, cycles: $a[0].total.CYCLES},
        no_chain: {dram_bytes: ($b[0].total | bytes), act_bytes: ($b[0].total | act), weight_bytes: $b[0].total.BYTES_RD_WGT, cycles: $b[0].total.CYCLES}}
       | . + {ratio: (.chains.dram_bytes / .no_chain.dram_bytes), act_ratio: (.chains.act_bytes / .no_chain.act_bytes)}' \
      >> "$PARTS/dram.jsonl"
  done
  jq -s . "$PARTS/dram.jsonl" > "$PARTS/dram.json"
  rm "$PARTS/dram.jsonl"
}

if [ "$MODE" = all ]; then
  bench_workloads
  bench_gemm
fi
for net in $NETS; do bench_net "$net"; done
if [ "$MODE" = all ]; then
  bench_hostgen
  bench_torch
fi
if [ "$MODE" = all ] || [ "$MODE" = zoo ]; then
  bench_zoo
fi
if [ "$MODE" = all ] || [ "$MODE" = transformers ]; then
  bench_transformers
fi
if [ "$MODE" = all ] || [ "$MODE" = zoo ]; then
  bench_dram
fi

jq --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson secs $(($(date +%s) - T0)) \
  '. + {load_end: $load, bench_seconds: $secs}' "$PARTS/meta.json" > "$PARTS/meta.json.new"
mv "$PARTS/meta.json.new" "$PARTS/meta.json"
"$HERE/assemble.sh" "$PARTS" > "$OUT/results.json.new"
mv "$OUT/results.json.new" "$OUT/results.json"
jq -r -f "$HERE/table.jq" "$OUT/results.json"
if [ "$MODE" = all ]; then
  say "roofline plot"
  "$HERE/roofline.sh" "$OUT/results.json" "$OUT/roofline"
fi
say "done: $OUT/results.json$([ "$MODE" = all ] && echo ", $OUT/roofline.png, $OUT/roofline.svg")"
