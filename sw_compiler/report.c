/*
 * report.c - the per-layer table `loom compile` prints.
 *
 * One row per step of the model, in execution order: accelerator jobs with
 * the lowering's numbers (struct lower_report: MACs, the tiling, every DRAM
 * byte moved, the cost model's cycle estimate, which roofline bound
 * applies, and utilization = MACs / (cycles x peak)); host steps with their
 * op only.  The totals line adds the jobs up and converts cycles to time
 * at the configuration's clock.  Nothing here decides anything: the
 * numbers are the lowering's, so the table explains the tiling the binary
 * really contains.
 */
#include "sw_compiler/compile.h"

#include <inttypes.h>

static void print_header(FILE *f) {
  fprintf(f, "%-24s %-18s %-14s %12s %-16s %6s %12s %12s %-7s %5s\n", "layer", "op", "shape", "MACs",
          "tile hxwxcoxci", "tiles", "DMA bytes", "est cycles", "bound", "util");
}

static void print_job(FILE *f, const struct compile_layer *l) {
  const struct lower_report *r = &l->report;
  char tile[32];
  snprintf(tile, sizeof tile, "%dx%dx%dx%d", r->tiling.th, r->tiling.tw, r->tiling.tco, r->tiling.tci);
  fprintf(f, "%-24.24s %-18.18s %-14.14s %12" PRIu64 " %-16s %6u %12" PRIu64 " %12" PRIu64 " %-7s %4.0f%%\n",
          l->name, l->op, l->shape, r->macs, tile, r->tiling.tiles, r->dma_bytes, r->est_cycles,
          r->memory_bound ? "memory" : "compute", 100.0 * r->utilization);
}

static void print_host(FILE *f, const struct compile_layer *l) {
  fprintf(f, "%-24.24s %-18.18s %-14.14s %12s %-16s %6s %12s %12s %-7s %5s\n", l->name, l->op, l->shape, "-",
          "-", "-", "-", "-", "host", "-");
}

void compile_report_print(FILE *f, const struct compile_result *r) {
  uint64_t macs = 0, bytes = 0, cycles = 0;
  int jobs = 0;
  print_header(f);
  for (int i = 0; i < r->n_layers; i++) {
    const struct compile_layer *l = &r->layers[i];
    if (!l->is_job) {
      print_host(f, l);
      continue;
    }
    print_job(f, l);
    macs += l->report.macs, bytes += l->report.dma_bytes, cycles += l->report.est_cycles, jobs++;
  }
  double peak = (double)loom_hw_peak_macs(r->cfg), util = cycles ? (double)macs / ((double)cycles * peak) : 0;
  fprintf(f, "total: %d jobs, %d host steps, %" PRIu64 " MACs, %" PRIu64 " DMA bytes, %" PRIu64
          " cycles (%.3f ms at %d MHz), utilization %.0f%% of %.0f MACs/cycle\n",
          jobs, r->n_layers - jobs, macs, bytes, cycles, (double)cycles / (r->cfg->clock_mhz * 1e3),
          r->cfg->clock_mhz, 100.0 * util, peak);
}
