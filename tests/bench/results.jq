# results.jq - derives the benchmark figures from the joined parts
# (assemble.sh).  The one place where utilization, roofline bounds and the
# goals are computed (DESIGN.md, "Performance vocabulary"):
#
#   utilization   useful MACs / (cycles x peak MACs per cycle)
#   intensity     MACs per DRAM byte; measured = every byte the hardware
#                 counters saw (instructions, micro-ops, weights, inputs,
#                 accumulators, outputs), compulsory = input + weights +
#                 output moved once (int8)
#   bound         min(peak, DRAM bytes per cycle x intensity), MACs/cycle
#   of_bound      achieved MACs per cycle / bound
#   compute_other cycles the compute module was busy issuing neither a GEMM
#                 nor an ALU micro-op (instruction fills, interlocks, UOP and
#                 ACC loads): COMPUTE_BUSY - GEMM_OPS - ALU_OPS
#
# MACs are the compiler's count of the layer's own MACs (a 3-channel stem
# folded by im2col pads to 16 lanes; the padding is not useful work).

def dram_bytes: [.BYTES_RD_INSN, .BYTES_RD_UOP, .BYTES_RD_WGT, .BYTES_RD_INP, .BYTES_RD_ACC, .BYTES_WR_OUT]
  | map(. // 0) | add;
def bound($peak; $bpc; $macs; $bytes):
  if $bytes > 0 then [$peak, $bpc * $macs / $bytes] | min else $peak end;
def ratio($a; $b): if $b == null or $b == 0 or $a == null then null else $a / $b end;

# one accelerator job: compile-report row + tsim counters -> figures
def job_figures($peak; $bpc; $row; $c):
  ($c.CYCLES) as $cyc | ($c | dram_bytes) as $bytes | ($row.macs) as $macs
  | {cycles: $cyc, macs: $macs, dram_bytes: $bytes, est_cycles: $row.est_cycles,
     utilization: ratio($macs; $cyc * $peak),
     achieved_macs_per_cycle: ratio($macs; $cyc),
     intensity: ratio($macs; $bytes),
     bound_macs_per_cycle: (if $macs > 0 then bound($peak; $bpc; $macs; $bytes) else null end),
     gemm_ops: $c.GEMM_OPS, alu_ops: $c.ALU_OPS, compute_busy: $c.COMPUTE_BUSY,
     compute_other: (if $c.COMPUTE_BUSY then $c.COMPUTE_BUSY - $c.GEMM_OPS - ($c.ALU_OPS // 0) else null end),
     stalls: {load_mem: $c.LOAD_MEM_STALL, compute_token: $c.COMPUTE_TOKEN_STALL,
              compute_mem: $c.COMPUTE_MEM_STALL, store_mem: $c.STORE_MEM_STALL}}
  | .of_bound = ratio(.achieved_macs_per_cycle; .bound_macs_per_cycle)
  | .est_error = (if $row.est_cycles then ($row.est_cycles / $cyc - 1) else null end);

.config.peak_macs_per_cycle as $peak | .config.dram_bytes_per_cycle as $bpc
| . as $in
| {meta, config}
+ (if $in.workloads then {workloads: [$in.workloads[] as $w
    | ($w.report.layers | map(select(.job != null)) | first) as $row
    | (($w.h + 2 * (($w.r / 2) | floor) - $w.r) / $w.s | floor + 1) as $ho
    | ($w.h * $w.h * $w.c + $w.k * $w.c * $w.r * $w.r + $ho * $ho * $w.k) as $cbytes
    | {name: $w.name, h: $w.h, c: $w.c, k: $w.k, r: $w.r, s: $w.s, op: $row.op, tile: $row.tile,
       compiler_bound: $row.bound}
      + job_figures($peak; $bpc; $row; $w.counters)
      + {compulsory_bytes: $cbytes, compulsory_intensity: ($row.macs / $cbytes),
         compulsory_bound_macs_per_cycle: bound($peak; $bpc; $row.macs; $cbytes),
         fsim_timing_cycles: $w.fsim_timing_cycles,
         fsim_timing_error: (if $w.fsim_timing_cycles then $w.fsim_timing_cycles / $w.counters.CYCLES - 1 else null end)}
      | .goal_met = (.of_bound != null and .of_bound >= 0.92)]} else {} end)
+ (if $in.gemm then {gemm: $in.gemm} else {} end)
+ {networks: [$in | to_entries[] | select(.key | startswith("net_")) | .value
    | . as $n | ($n.tsim.counters.total.CYCLES) as $cyc
    | {net, calib_inputs, compile, compile_calib1, fsim, target_cpu_run, profile,
       macs: $n.report.total.macs, est_cycles: $n.report.total.est_cycles, jobs: $n.report.total.jobs,
       host_steps: $n.report.total.host_steps,
       tsim: {cycles: $cyc, wall_s: $n.tsim.wall_s, cpu_s: $n.tsim.cpu_s,
              cycles_per_s: ($cyc / $n.tsim.wall_s), cycles_per_cpu_s: ($cyc / $n.tsim.cpu_s),
              dram_bytes: ($n.tsim.counters.total | dram_bytes)},
       utilization: ($n.report.total.macs / ($cyc * $peak)),
       latency_ms_at_clock: ($cyc / $in.config.clock_mhz / 1000),
       latency_ms_at_fmax: (if $in.config.fmax_mhz_estimate then $cyc / $in.config.fmax_mhz_estimate / 1000 else null end),
       # What VTA's published ResNet-18 cycles cover: TVM's deploy_classification
       # offloads from the max pool to the global average pool and keeps the
       # first convolution on the CPU (skip_conv_layers=[0]), so only the
       # convolutions after the stem are VTA's (docs/performance.md).
       convs_after_stem: ([$n.report.layers[] | select(.job != null and (.op | test("^conv [0-9]")))] as $l
         | {jobs: ($l | length), macs: ([$l[].macs] | add),
            cycles: ([$l[] | $n.tsim.counters.jobs[.job].CYCLES] | add)}),
       layers: [$n.report.layers[] | select(.job != null) as $row
         | {layer: $row.layer, op: $row.op, shape: $row.shape, job: $row.job, compiler_bound: $row.bound}
           + job_figures($peak; $bpc; $row; $n.tsim.counters.jobs[$row.job])]}]
    | sort_by(.net != "resnet18")}
+ (if $in.hostgen then {hostgen: $in.hostgen} else {} end)
+ (if $in.pytorch then {pytorch: $in.pytorch} else {} end)
+ (if $in.dram then {dram: $in.dram} else {} end)
# The zoo: host share = host steps' wall time / (that + accelerator time at the
# clock, from the fsim timing model's cycles).
+ (if $in.zoo then {zoo: [$in.zoo[] | . + {
    accel_s: (if .cycles and .clock_mhz then .cycles / (.clock_mhz * 1e6) else null end)}
    | .host_share = (if .accel_s != null and .host_s != null and (.accel_s + .host_s) > 0
                     then .host_s / (.accel_s + .host_s) else null end)]} else {} end)
# Transformers (issue 17): per network and build, host times are the minimum
# over the runs (the machine is shared; a run is only ever slowed down);
# accelerator time = cycles at the clock; end to end = host + accelerator;
# speedup = the host-only run (--target cpu) over end to end; speedup_bound =
# the host-only run over the jobs' roofline bound at the clock (no host time,
# every job at min(peak, DRAM bytes x intensity)): no build of this model on
# this configuration can beat it, whatever moves off the host.  The peak is
# the run's own configuration's (variant large has its own).
+ (if $in.transformers then {transformers: [$in.transformers[] as $t
    | ($t.runs // []) as $runs | ($t.host_only.runs // []) as $cruns
    | (if $runs == [] then null else $runs | min_by(.host_s) end) as $best
    | ($best.clock_mhz // $in.config.clock_mhz) as $mhz
    | {net: $t.net, variant: $t.variant, error: $t.error, placement: $t.placement,
       placement_rows: $t.placement_rows, row_ops: $t.row_ops, host_code: $t.host_code, accuracy: $t.accuracy,
       flags: $t.flags, config: ($best.config // $in.config.name), peak: ($best.peak // $peak),
       runs: ($runs | length), macs: $best.macs, cycles: $best.cycles, clock_mhz: $mhz,
       bound_cycles: $best.bound_cycles,
       cycles_vary: ($runs | map(.cycles) | unique | length > 1),
       host_s: $best.host_s, host_s_max: ($runs | map(.host_s) | max), host_ops: $best.host_ops,
       acc_ops: $best.acc_ops,
       host_only: {runs: ($cruns | length), host_code: $t.host_only.host_code, error: $t.host_only.error,
                   s: ($cruns | map(.host_s) | min), s_max: ($cruns | map(.host_s) | max)}}
    | .utilization = (if .cycles and .macs then .macs / (.cycles * .peak) else null end)
    | .accel_s = (if .cycles then .cycles / (.clock_mhz * 1e6) else null end)
    | .accel_bound_s = (if .bound_cycles then .bound_cycles / (.clock_mhz * 1e6) else null end)
    | .speedup_bound = ratio(.host_only.s; .accel_bound_s)
    | .end_to_end_s = (if .accel_s != null and .host_s != null then .accel_s + .host_s else null end)
    | .host_share = ratio(.host_s; .end_to_end_s)
    | .accel_share = ratio(.accel_s; .end_to_end_s)
    | .speedup = ratio(.host_only.s; .end_to_end_s)]} else {} end)
| (.networks | map(select(.net == "resnet18")) | first) as $r
| (.networks | map(select(.net == "mobilenetv2")) | first) as $m
| (.dram // [] | map(select(.net == "mobilenetv2")) | first) as $md
# The goals (issue 16's for cycles, workloads, MobileNetV2 and Verilator
# speed; the earlier ones for wall times). cmp says which side passes.
| def goal($g; $t; $v; $u; $cmp):
    {goal: $g, target: $t, value: $v, unit: $u, cmp: $cmp,
     met: ($v != null and (if $cmp == ">=" then $v >= $t else $v <= $t end))};
  .goals = ([
    (if .workloads then goal("each ResNet-18 conv workload >= 92% of its roofline bound"; 12;
      (.workloads | map(select(.goal_met)) | length); "workloads"; ">=") else empty end),
    (if $r then
      goal("ResNet-18 cycles on tsim"; 7500000; $r.tsim.cycles; "cycles"; "<="),
      goal("ResNet-18 through Verilator, simulated cycles per CPU second"; 420000;
        $r.tsim.cycles_per_cpu_s; "cycles/s"; ">="),
      goal("ResNet-18 through Verilator (wall)"; 30; $r.tsim.wall_s; "s"; "<="),
      goal("ResNet-18 through fsim (CPU)"; 0.3; $r.fsim.cpu_s; "s"; "<="),
      goal("ResNet-18 compile (\($r.calib_inputs) calibration inputs, CPU)"; 1; $r.compile.cpu_s; "s"; "<="),
      (if $r.compile_calib1 then goal("ResNet-18 compile (1 calibration input, CPU)"; 1;
        $r.compile_calib1.cpu_s; "s"; "<=") else empty end)
     else empty end),
    (if $m then goal("MobileNetV2 utilization on tsim (of peak)"; 0.55; $m.utilization; "ratio"; ">=")
     else empty end),
    (if $md then goal("MobileNetV2 DRAM bytes with chains / without"; 0.5; $md.ratio; "ratio"; "<=")
     else empty end),
    # issue 17, for each transformer's default build, and the speedup again on
    # the large configuration (the issue's goal is at the config's clock)
    ((.transformers // [])[] | select(.variant == "default") |
      goal("\(.net): share of MACs on the accelerator"; 0.95;
        (if .placement then .placement.acc_mac_pct / 100 else null end); "ratio"; ">="),
      goal("\(.net): accelerator's share of the end-to-end time"; 0.9; .accel_share; "ratio"; ">="),
      goal("\(.net): modelled end-to-end speedup over the host-only run"; 5; .speedup; "x"; ">=")),
    ((.transformers // [])[] | select(.variant == "large") |
      goal("\(.net) `\(.flags)`: modelled end-to-end speedup over the host-only run"; 5; .speedup; "x"; ">="))])
