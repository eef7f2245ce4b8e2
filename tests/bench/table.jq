# table.jq - the readable table of results.json (jq -r -f table.jq results.json).
def pad($n): tostring | if length >= $n then . else (" " * ($n - length)) + . end;
def lpad($n): tostring | if length >= $n then . else . + (" " * ($n - length)) end;
def f($d): if . == null then "-" else (. * pow(10; $d) | round / pow(10; $d) | tostring) end;
def pct: if . == null then "-" else (. * 1000 | round / 10 | tostring) + "%" end;
def mega: if . == null then "-" else (. / 1e6 * 100 | round / 100 | tostring) + " M" end;
def yes: if . then "yes" else "NO" end;

.config.peak_macs_per_cycle as $cfg_peak | .config.clock_mhz as $clock | .networks as $nets | ((.hostgen.networks) // []) as $hg
| "Loom benchmarks \(.meta.date), \(.meta.host), \(.meta.nproc) cores (\(.meta.cpu)), commit \(.meta.commit)",
"load average \(.meta.load_start) at start, \(.meta.load_end // "-") at end; wall = elapsed, cpu = user + system",
"config \(.config.name) \(.config.batch)x\(.config.block_in)x\(.config.block_out): peak \(.config.peak_macs_per_cycle) MACs/cycle, DRAM \(.config.dram_bytes_per_cycle) B/cycle, \(.config.clock_mhz) MHz (estimated Fmax \(.config.fmax_mhz_estimate // "-") MHz); tsim \(.meta.tsim_options)",
(if .workloads then
  "",
  "ResNet-18 conv workloads, one int8 layer each on tsim (bound = min(peak, B/cycle x MACs/DRAM byte); goal >= 92% of bound)",
  ([ "wl", "HxW", "C->K", "RxS/s", "MACs", "cycles", "est", "util", "MAC/B", "bound", "of bound", "goal", "fsim-t err"]
   | "\(.[0] | lpad(4)) \(.[1] | pad(7)) \(.[2] | pad(9)) \(.[3] | pad(6)) \(.[4] | pad(10)) \(.[5] | pad(9)) \(.[6] | pad(9)) \(.[7] | pad(6)) \(.[8] | pad(6)) \(.[9] | pad(6)) \(.[10] | pad(8)) \(.[11] | pad(4)) \(.[12] | pad(10))"),
  (.workloads[] |
   "\(.name | lpad(4)) \("\(.h)x\(.h)" | pad(7)) \("\(.c)->\(.k)" | pad(9)) \("\(.r)x\(.r)/\(.s)" | pad(6)) \(.macs | pad(10)) \(.cycles | pad(9)) \(.est_cycles | pad(9)) \(.utilization | pct | pad(6)) \(.intensity | f(1) | pad(6)) \(.bound_macs_per_cycle | f(0) | pad(6)) \(.of_bound | pct | pad(8)) \(.goal_met | yes | pad(4)) \(.fsim_timing_error | pct | pad(10))")
 else empty end),
(if .gemm then
  "",
  "GEMM sweep on tsim (sim/tsim/bench_rtl.c streams: MxKxN, weights and outputs streamed, double-buffered)",
  "resident GEMM (operands on chip): \(.gemm.resident.utilization | pct) of peak",
  ("shape" | lpad(20)) + ("ops" | pad(9)) + ("cycles" | pad(10)) + ("MACs/cycle" | pad(12)) + ("bound" | pad(8)) + ("of bound" | pad(10)),
  (.gemm.sweep[] | (.name | lpad(20)) + (.gemm_ops | pad(9)) + (.cycles | pad(10)) + (.macs_per_cycle | f(1) | pad(12))
    + (.roofline_ops_per_cycle * $cfg_peak | f(0) | pad(8)) + (.fraction_of_roofline | pct | pad(10)))
 else empty end),
(.networks[] |
  "",
  "\(.net): \(.macs | mega)MACs, \(.jobs) accelerator jobs + \(.host_steps) host steps; tsim \(.tsim.cycles) cycles (compiler estimate \(.est_cycles)), utilization \(.utilization | pct), \(.latency_ms_at_clock | f(2)) ms at \($clock) MHz\(if .latency_ms_at_fmax then ", \(.latency_ms_at_fmax | f(2)) ms at the estimated Fmax" else "" end)",
  "  Verilator: \(.tsim.wall_s) s wall, \(.tsim.cpu_s | f(1)) s cpu; \(.tsim.cycles_per_s | round) cycles/s wall, \(.tsim.cycles_per_cpu_s | round) cycles/cpu-s",
  "  fsim: \(.fsim.wall_s) s wall, \(.fsim.cpu_s | f(3)) s cpu (median of 3)\(if .fsim.timing_cycles then ", timing model \(.fsim.timing_cycles) cycles" else "" end)",
  "  compile: \(.compile.wall_s) s wall, \(.compile.cpu_s | f(2)) s cpu, calibrated on \(.calib_inputs) inputs\(if .compile_calib1 then "; with 1 input \(.compile_calib1.wall_s) s wall, \(.compile_calib1.cpu_s | f(2)) s cpu" else "" end)",
  ("  " + ("job" | pad(3)) + " " + ("layer" | lpad(24)) + " " + ("op" | lpad(18)) + ("MACs" | pad(11)) + ("cycles" | pad(9)) + ("est" | pad(9)) + ("util" | pad(7)) + ("MAC/B" | pad(7)) + ("bound" | pad(6)) + ("of bound" | pad(9))),
  (.layers[] | "  " + (.job | pad(3)) + " " + (.layer | lpad(24)) + " " + (.op | lpad(18)) + (.macs | pad(11)) + (.cycles | pad(9)) + (.est_cycles | pad(9)) + (.utilization | pct | pad(7)) + (.intensity | f(1) | pad(7)) + (.bound_macs_per_cycle | f(0) | pad(6)) + (.of_bound | pct | pad(9)))),
(if .hostgen then
  "",
  "Host code (bench_hostgen, median wall times): accelerator build's host steps, LLVM against the C reference; whole float network with --target cpu against the reference interpreter",
  (.hostgen.networks[] | "  \(.net | lpad(12)) host steps \(.native_steps)/\(.host_steps) native: LLVM \(.host_llvm_s * 1e6 | f(1)) us, C \(.host_c_s * 1e6 | f(1)) us; --target cpu \(.cpu_llvm_s * 1e3 | f(1)) ms, interpreter \(.interpreter_s * 1e3 | f(1)) ms")
 else empty end),
(if .pytorch then
  "",
  "CPU baseline: PyTorch \(.pytorch.torch) (\(.pytorch.threads) thread), median of \(.pytorch.runs), one image; loom --target cpu from bench_hostgen",
  (.pytorch.networks[] as $p | ($hg | map(select(.net == $p.net)) | first) as $h |
   "  \($p.net | lpad(12)) fp32 \($p.fp32_s * 1e3 | f(1)) ms wall (\($p.fp32_cpu_s * 1e3 | f(1)) cpu); int8 \(if $p.int8_s then "\($p.int8_s * 1e3 | f(1)) ms wall (\($p.int8_cpu_s * 1e3 | f(1)) cpu, \($p.int8_engine))" else "n/a (\($p.int8_note))" end); loom --target cpu \(if $h then "\($h.cpu_llvm_s * 1e3 | f(1)) ms wall" else "-" end)\(($nets | map(select(.net == $p.net)) | first | .target_cpu_run) as $c | if $c then " (whole loom run \($c.wall_s * 1e3 | f(1)) ms wall, \($c.cpu_s * 1e3 | f(1)) cpu)" else "" end)")
 else empty end),
(if .zoo then
  "",
  "Model zoo (tests/zoo/zoo.list): compile time, placement, one check input on fsim --timing; host share = host / (host + accelerator time at the clock)",
  ("  " + ("network" | lpad(18)) + ("compile" | pad(9)) + ("acc/host nodes" | pad(16)) + ("MACs on acc" | pad(12)) + ("cycles" | pad(12)) + ("host share" | pad(11)) + "  error"),
  (.zoo[] | "  " + (.net | lpad(18)) + (if .compile then "\(.compile.wall_s | f(2)) s" else "-" end | pad(9))
     + (if .placement then "\(.placement.acc_nodes)/\(.placement.host_nodes)" else "-" end | pad(16))
     + (if .placement then "\(.placement.acc_mac_pct)%" else "-" end | pad(12))
     + (.cycles // "-" | pad(12)) + (.host_share | pct | pad(11)) + "  " + (.error // ""))
 else empty end),
(if .transformers then
  "",
  "Transformers (issue 17): fsim --timing on check input 000; host time = min of the runs; end to end = host + cycles at the clock; speedup over the --target cpu run (goal >= 5x; GEMM-only offload ~1.4x); bound: host time 0, jobs at their roofline bound",
  ("  " + ("model" | lpad(20)) + ("MACs acc" | pad(9)) + ("cycles" | pad(9)) + ("util" | pad(7)) + ("host" | pad(10)) + ("share" | pad(7)) + ("e2e" | pad(10)) + ("host-only" | pad(11)) + ("speedup" | pad(8)) + ("bound" | pad(8)) + ("cos min" | pad(8)) + ("top-1" | pad(7)) + "  error"),
  (.transformers[] | "  " + ("\(.net) \(.variant)" | lpad(20))
     + (if .placement then "\(.placement.acc_mac_pct)%" else "-" end | pad(9)) + (.cycles // "-" | pad(9))
     + (.utilization | pct | pad(7)) + (if .host_s then "\(.host_s * 1e3 | f(2)) ms" else "-" end | pad(10))
     + (.host_share | pct | pad(7)) + (if .end_to_end_s then "\(.end_to_end_s * 1e3 | f(2)) ms" else "-" end | pad(10))
     + (if .host_only.s then "\(.host_only.s * 1e3 | f(2)) ms" else "-" end | pad(11)) + (.speedup | f(2) | pad(8))
     + (.speedup_bound | f(2) | pad(8)) + (.accuracy.cos_min | f(3) | pad(8)) + (.accuracy.top1 | f(3) | pad(7)) + "  " + (.error // .host_only.error // ""))
 else empty end),
(if .dram then
  "",
  "DRAM bytes with and without cross-layer fusion (fsim --counters, one input; act = inputs + ACC rows + outputs)",
  ("  " + ("network" | lpad(22)) + ("chains" | pad(12)) + ("--no-chain" | pad(12)) + ("ratio" | pad(8)) + ("act chains" | pad(12)) + ("act no-chain" | pad(13)) + ("act ratio" | pad(10)) + ("weights" | pad(10))),
  (.dram[] | "  " + (.net | lpad(22)) + (.chains.dram_bytes | pad(12)) + (.no_chain.dram_bytes | pad(12)) + (.ratio | f(3) | pad(8))
     + (.chains.act_bytes | pad(12)) + (.no_chain.act_bytes | pad(13)) + (.act_ratio | f(3) | pad(10)) + (.chains.weight_bytes | pad(10)))
 else empty end),
"",
"Goals",
(.goals[] | "  \(if .met then "met " else "MISS" end)  \(.goal | lpad(58)) \(.value | f(3)) \(.unit) (goal \(if .unit == "workloads" then "\(.target)" else "\(.cmp // "<=") \(.target)" end))")
