# doc.jq - the generated tables of docs/performance.md, one per section
# (jq -r --arg section NAME -f doc.jq results.json; gen_doc.sh calls it
# for every <!-- bench:begin NAME --> block).
def r($d): if . == null then "-" else (. * pow(10; $d) | round / pow(10; $d) | tostring) end;
def pct: if . == null then "-" else (. * 1000 | round / 10 | tostring) + "%" end;
def mega: if . == null then "-" else (. / 1e6 | r(3)) + " M" end;
def ms: if . == null then "-" else (. * 1e3 | r(1)) + " ms" end;
def ms2: if . == null then "-" else (. * 1e3 | r(2)) + " ms" end;
def share($x): if $x == null or .cycles == null then "-" else ($x / .cycles | pct) end;
def row: "| " + (map(tostring) | join(" | ")) + " |";
def head($cols): (($cols | row), ($cols | map("---") | row));
# goal_rows(GOALS): the goals table (results.jq's goal list, or part of it)
def goal_rows($goals):
  head(["goal", "target", "measured", "met"]),
  ($goals[] | (.cmp // "<=") as $cmp | [.goal,
     (if .unit == "workloads" then "\(.target) of 12" elif .unit == "cycles" then "\($cmp) \(.target | mega)"
      elif .unit == "ratio" then "\($cmp) \(.target)" elif .unit == "cycles/s" then "\($cmp) \(.target | mega)"
      elif .unit == "x" then "\($cmp) \(.target)x" else "\($cmp) \(.target) \(.unit)" end),
     (if .value == null then "-" elif .unit == "workloads" then "\(.value) of 12" elif .unit == "cycles" then (.value | mega)
      elif .unit == "ratio" then (.value | r(3)) elif .unit == "cycles/s" then (.value | mega)
      elif .unit == "x" then "\(.value | r(2))x" else "\(.value | r(3)) \(.unit)" end),
     (if .met then "yes" else "**no**" end)] | row);
def net($n): .networks | map(select(.net == $n)) | first;
def torch($n): (.pytorch.networks // []) | map(select(.net == $n)) | first;
def hostgen($n): (.hostgen.networks // []) | map(select(.net == $n)) | first;

. as $R |
if $section == "run" then
  "Measured by `make bench` on \(.meta.date | sub("T"; " ") | sub("Z"; " UTC")), commit `\(.meta.commit)`,",
  "\(.meta.host), \(.meta.nproc) cores (\(.meta.cpu)); load average \(.meta.load_start) at the start,",
  "\(.meta.load_end // "-") at the end (the machine was shared: read the CPU-time columns). Configuration",
  "`\(.config.name)` (\(.config.batch)x\(.config.block_in)x\(.config.block_out), peak \(.config.peak_macs_per_cycle) MACs/cycle,",
  "\(.config.dram_bytes_per_cycle) DRAM bytes/cycle, \(.config.clock_mhz) MHz nominal, \(.config.fmax_mhz_estimate // "not") estimated MHz Fmax); tsim DRAM model \(.meta.tsim_options).",
  "fsim timing model (`--timing`): \(if .meta.fsim_timing_flag then "present" else "not in this build" end);",
  "`loom run --profile-json`: \(if .meta.profile_flag then "present" else "not in this build" end). The whole run took \(.meta.bench_seconds) s."
elif $section == "goals" then goal_rows(.goals)
elif $section == "transformers" then
  def xf_label: .net + (if .variant == "default" then "" elif .variant == "large" then " `\(.flags)`"
                        else " `--\(.variant | gsub("_"; "-"))`" end);
  ((.transformers // []) | map(.runs) | max) as $n | (.transformers // []) as $t |
  "Measured by `tests/bench/run_bench.sh \(.meta.mode)` on \(.meta.date | sub("T"; " ") | sub("Z"; " UTC")), commit `\(.meta.commit)`, configuration",
  "`\(.config.name)` at \(.config.clock_mhz) MHz, load average \(.meta.load_start) at the start and \(.meta.load_end // "-") at the end. Cycles",
  "are fsim's timing model on check input 000 (deterministic); host times are that run's host steps (wall",
  "clock, inference only), **the minimum of \($n) runs** each, the slowest in parentheses (the machine is shared: single runs vary by",
  "several times, and a run is only ever slowed down). End to end = host time + cycles at the clock; the",
  "host-only run is the `--target cpu` build of the same model timed the same way. Accuracy: the zoo's",
  "metrics against PyTorch fp32 on the \([$t[].accuracy.inputs // empty] | max // "-") check inputs (fsim). Goal (issue 17): >= 95% of",
  "MACs on the accelerator, the accelerator >= 90% of the end-to-end time and a modelled speedup of",
  ">= 5x over the host-only run, where GEMM-only offload (softmax, LayerNorm and GELU on the CPU, as the",
  "PYNQ-Z2 designs the issue cites) gains about 1.4x. Rows `--no-act`: the same model compiled with",
  "`--no-act` (GELU on the host instead of its activation table in the Linear's epilogue); rows",
  "`--config \([$t[] | select(.variant == "large") | .config] | first // "large")`: the same model on that configuration, at its own clock. Speedup bound: the",
  "host-only run over the jobs' roofline bound at the clock (no host time at all, and every job at",
  "min(peak, DRAM bytes per cycle x its intensity), the profile's `bound_cycles`): no build of the",
  "model on that configuration can do better, whatever moves off the host.",
  "",
  head(["model", "MACs on acc.", "nodes acc. / host", "cycles (fsim timing)", "utilization", "host time (slowest run)", "host share", "end to end", "host-only (slowest run)", "speedup", "speedup bound", "centered cos min / mean", "top-1"]),
  ($t[] | [xf_label,
     (if .placement then "\(.placement.acc_mac_pct)%" else "-" end),
     (if .placement then "\(.placement.acc_nodes) / \(.placement.host_nodes)" else "-" end),
     (.cycles | mega), (.utilization | pct), "\(.host_s | ms2) (\(.host_s_max | ms2))", (.host_share | pct), (.end_to_end_s | ms2),
     "\(.host_only.s | ms2) (\(.host_only.s_max | ms2))", (if .speedup then "\(.speedup | r(2))x" else "-" end), (if .speedup_bound then "\(.speedup_bound | r(2))x" else "-" end),
     (if .accuracy then "\(.accuracy.cos_min | r(3)) / \(.accuracy.cos_mean | r(3))" else "-" end),
     (if .accuracy.top1 != null then "\(.accuracy.top1 * .accuracy.inputs | round) of \(.accuracy.inputs)" else "-" end)]
     + (if .error then ["`\(.error | gsub("\\|"; "/"))`"] else [] end) | row),
  "",
  "Where the time goes: the accelerator's cycles by job kind (the first word of the profile's op: kind,",
  "jobs, cycles), the host time by step name (the run with the minimum host time: name, steps, time),",
  "and the host steps of `loom compile`'s host code line, native (LLVM) / portable (host kernels), of",
  "this build and of the host-only build:",
  "",
  head(["model", "accelerator cycles by job kind", "host steps, largest first", "native / portable", "host-only: native / portable"]),
  ($t[] | select(.host_ops) | [xf_label,
     ((.acc_ops // []) | map("\(.op) \(.jobs): \(.cycles | mega)") | join(", ")),
     (.host_ops[:8] | map("\(.op) \(.steps): \(.seconds | ms2)") | join(", "))
     + (if (.host_ops | length) > 8 then ", others \(.host_ops[8:] | map(.seconds) | add | ms2)" else "" end),
     (if .host_code then "\(.host_code.native) / \(.host_code.portable)" else "-" end),
     (if .host_only.host_code then "\(.host_only.host_code.native) / \(.host_only.host_code.portable)" else "-" end)] | row),
  "",
  "Where the int8 row ops run (issue 17 item 3: on the host only where the profile shows it is cheaper).",
  "Per build, the int8 Softmax (QSOFTMAX) and LayerNorm (QLAYERNORM) steps: their measured host time",
  "(the run above) against the floor of any separate accelerator pass over the same rows, the DMA of",
  "reading and writing them at the configuration's bus width and clock, which `loom compile` prints",
  "under the placement summary (no compute, no job overhead counted; the ALU has no row max, sum or",
  "reciprocal, so no such pass exists today). Host below the floor: the host is cheaper than any such pass.",
  "",
  head(["model", "row op", "steps", "bytes in and out", "host time", "accelerator DMA floor", "cheaper"]),
  ($t[] | select(.row_ops and .host_ops) | . as $x | .row_ops[] |
     ({"Softmax": "QSOFTMAX", "LayerNormalization": "QLAYERNORM"}[.op]) as $step |
     (($x.host_ops | map(select(.op == $step)) | first) // null) as $h |
     [($x | xf_label), "\(.op) (\($step))", "\(.nodes)", "\(.bytes)", (if $h then $h.seconds * 1e6 | r(1) | "\(.) us" else "-" end),
      "\(.floor_us) us", (if $h == null then "-" elif $h.seconds * 1e6 <= .floor_us then "host" else "**not shown**: host above the floor" end)] | row),
  "",
  goal_rows(.goals | map(select(.goal as $g | $t | map(.net + ": ", .net + " `") | any(. as $p | $g | startswith($p)))))
elif $section == "workloads" then
  head(["wl", "H=W", "C -> K", "kernel/stride", "MACs", "cycles", "compiler est.", "util.", "MACs/B", "bound", "of bound", ">= 92%", "cycles: GEMM / ALU / other"]),
  (.workloads[] | [.name, .h, "\(.c) -> \(.k)", "\(.r)x\(.r)/\(.s)", (.macs | mega), .cycles, .est_cycles,
     (.utilization | pct), (.intensity | r(1)), (.bound_macs_per_cycle | r(0)), (.of_bound | pct),
     (if .goal_met then "yes" else "**no**" end),
     "\(share(.gemm_ops)) / \(share(.alu_ops)) / \(share(.compute_other))"] | row)
elif $section == "gemm" then
  "Resident GEMM (operands on chip): \(.gemm.resident.utilization | pct) of peak.",
  "",
  head(["M x K x N", "GEMM ops", "cycles", "MACs/cycle", "bound (MACs/cycle)", "of bound"]),
  (.config.peak_macs_per_cycle as $p | .gemm.sweep[] |
    [(.name | sub("gemm_"; "")), .gemm_ops, .cycles, (.macs_per_cycle | r(1)), (.roofline_ops_per_cycle * $p | r(0)),
     (.fraction_of_roofline | pct)] | row)
elif $section == "networks" then
  head(["network", "MACs", "tsim cycles", "compiler est.", "util.", "latency at clock (at est. Fmax)", "Verilator wall / CPU", "cycles/s wall / CPU", "fsim wall / CPU", "compile wall / CPU (calib. inputs)"]),
  (.config.clock_mhz as $mhz | (.config.fmax_mhz_estimate // null) as $fmax | .networks[] |
    [.net, (.macs | mega), (.tsim.cycles | mega), (.est_cycles | mega), (.utilization | pct), "\(.latency_ms_at_clock | r(1)) ms at \($mhz) MHz\(if .latency_ms_at_fmax then " (\(.latency_ms_at_fmax | r(1)) ms at \($fmax) MHz)" else "" end)",
     "\(.tsim.wall_s | r(1)) s / \(.tsim.cpu_s | r(1)) s", "\(.tsim.cycles_per_s | r(0)) / \(.tsim.cycles_per_cpu_s | r(0))",
     "\(.fsim.wall_s | r(3)) s / \(.fsim.cpu_s | r(3)) s\(if .fsim.timing_cycles then " (model: \(.fsim.timing_cycles | mega))" else "" end)",
     "\(.compile.wall_s | r(2)) s / \(.compile.cpu_s | r(2)) s (\(.calib_inputs))"] | row)
elif ($section | startswith("layers_")) then
  ($section | sub("layers_"; "")) as $n |
  head(["job", "layer", "op", "MACs", "cycles", "compiler est.", "util.", "MACs/B", "bound", "of bound"]),
  (net($n).layers[] | [.job, "`\(.layer)`", .op, .macs, .cycles, .est_cycles, (.utilization | pct), (.intensity | r(1)),
     (.bound_macs_per_cycle | r(0)), (.of_bound | pct)] | row)
elif $section == "cpu" then
  head(["network", "PyTorch fp32 wall / CPU", "PyTorch int8 wall / CPU (engine)", "loom --target cpu: inference wall", "loom --target cpu: whole `loom run` wall / CPU", "reference interpreter wall", "host steps of the accel. build: LLVM / C"]),
  (.networks[] as $row | $row.net as $n | $row.target_cpu_run as $c | torch($n) as $p | hostgen($n) as $h |
    [$n, (if $p then "\($p.fp32_s | ms) / \($p.fp32_cpu_s | ms)" else "-" end),
     (if $p and $p.int8_s then "\($p.int8_s | ms) / \($p.int8_cpu_s | ms) (\($p.int8_engine))" elif $p then "n/a: \($p.int8_note)" else "-" end),
     (if $h then ($h.cpu_llvm_s | ms) else "-" end), (if $c then "\($c.wall_s | ms) / \($c.cpu_s | ms)" else "-" end),
     (if $h then ($h.interpreter_s | ms) else "-" end),
     (if $h then "\($h.host_llvm_s * 1e6 | r(1)) us / \($h.host_c_s * 1e6 | r(1)) us (\($h.native_steps)/\($h.host_steps) native)" else "-" end)] | row)
elif $section == "hostops" then
  head(["host op", "LLVM-generated", "portable C reference", "speedup"]),
  ((.hostgen.host_ops // [])[] | [.op, "\(.llvm_s * 1e6 | r(1)) us", "\(.c_s * 1e6 | r(1)) us", "\(.c_s / .llvm_s | r(1))x"] | row)
elif $section == "reference" then
  net("resnet18") as $r |
  head(["figure (ResNet-18)", "VTA, published", "source", "Loom, this run"]),
  (["cycles, baseline hardware", "about 31 M (TSIM)", "[tvm#4694]", ($r.tsim.cycles | mega)] | row),
  (["cycles, baseline / pipelined GEMM", "27.68 M / 7.73 M (TSIM, resnet18_v1)", "[tvm-vta#30]", "\($r.tsim.cycles | mega) (compiler estimate \($r.est_cycles | mega))"] | row),
  (["the same, VTA's share only (convolutions after the stem)", "as above: the stem conv, max pool and classifier run on the CPU", "[deploy_classification]", "\($r.convs_after_stem.cycles | mega) for the \($r.convs_after_stem.jobs) convolutions after the stem (\($r.convs_after_stem.macs | mega) MACs, \($r.convs_after_stem.macs / ($r.convs_after_stem.cycles * $R.config.peak_macs_per_cycle) | pct) of peak)"] | row),
  (["peak utilization", "70% -> 88% with latency hiding", "[VTA paper]", "\($r.utilization | pct) whole network; best conv layer \([$R.workloads[]?.utilization] | max | pct)"] | row),
  (["end to end on the board", "0.42 s (PYNQ, 100 MHz)", "[DESIGN.md, tvm#4986]", "\($r.latency_ms_at_clock | r(1)) ms of accelerator time at \($R.config.clock_mhz) MHz (cycles / clock; no board run)"] | row),
  (["RTL simulation of one inference", "227.73 s (TSIM, Verilator)", "[tvm#4986]", "\($r.tsim.wall_s | r(1)) s wall, \($r.tsim.cpu_s | r(1)) s CPU"] | row),
  (["functional simulation of one inference", "1.01 s (fsim)", "[tvm#4986]", "\($r.fsim.wall_s | r(3)) s wall, \($r.fsim.cpu_s | r(3)) s CPU"] | row)
elif $section == "zoo" then
  head(["network", "compile wall / CPU", "nodes acc. / host", "MACs on acc.", "cycles (fsim timing)", "host share of run time", "refused or failed with"]),
  (.zoo[] | [.net, (if .compile then "\(.compile.wall_s | r(2)) s / \(.compile.cpu_s | r(2)) s" else "-" end),
     (if .placement then "\(.placement.acc_nodes) / \(.placement.host_nodes)" else "-" end),
     (if .placement then "\(.placement.acc_mac_pct)%" else "-" end), (.cycles | mega), (.host_share | pct),
     (if .error then "`" + (.error | sub("^loom: [^ ]*/zoo/"; "") | gsub("\\|"; "/")) + "`" else "" end)] | row)
else error("doc.jq: unknown section \($section)") end
