/*
 * bench_rtl.c - RTL benchmarks on tsim (`make bench-rtl`): simulation speed,
 * GEMM-core utilization with resident operands, and a streamed,
 * double-buffered GEMM against its roofline bound.
 *
 *   bench_rtl [--config NAME] [--lib PATH] [--lib-mt PATH] [--json FILE]
 *
 * Workloads (the ISA's 1 x BLOCK_IN x BLOCK_OUT GEMM step is one "op", peak
 * one op per cycle; MACs = ops x BATCH x BLOCK_IN x BLOCK_OUT):
 *
 *   resident  job 1 loads M x K inputs, K x N weights and the micro-ops;
 *             job 2 is one GEMM of M x K/BI x N/BO ops on them.  Its
 *             GEMM_OPS / CYCLES is the core's utilization when it is fed.
 *   streamed  inputs stay resident, weights stream in tiles of K x (T x BO)
 *             into alternating halves of the WGT buffer while the other
 *             half computes (tokens: L2C/C2L per tile, C2S/S2C for the two
 *             halves of ACC), outputs stream out.  Roofline bound (ops per
 *             cycle) = min(1, DRAM bytes per cycle x ops / DRAM bytes), the
 *             bytes being weights + outputs (+ the one-time inputs).  Run
 *             twice: M = 64 (compute-bound) and M = 16 (memory-bound).
 *
 * Simulation speed is cycles per wall-clock second of the streamed M = 64
 * job, with the single-threaded library and with the --threads 2 one; also
 * per CPU second of the process, which is what a busy machine does not
 * distort for the single-threaded library (Verilator's threads spin, so
 * --threads 2 needs two idle cores).  Results go to stdout as a table and
 * to the JSON file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/outfile.h"
#include "driver/lib/backend.h"
#include "loom/isa.h"
#include "loom/loom.h"
#include "stream.h"

extern const struct loom_backend_ops loom_backend_tsim;

#define DRAM_BPC 8.0 /* the default DRAM model: bytes per cycle */

struct shape {
  uint32_t m, kb, nb, tile; /* rows, K/BI blocks, N/BO blocks, BO blocks per tile */
};

struct run {
  uint64_t ops, cycles, bytes;
  double secs, cpu_secs; /* wall clock and this process's CPU time */
};

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, loom_device *dev) {
  fprintf(stderr, "bench_rtl: %s: %s\n", what, dev ? loom_device_error(dev) : "");
  exit(1);
}

static loom_buffer *buffer(loom_device *dev, size_t bytes, int fill) {
  loom_buffer *b;
  if (loom_buffer_alloc(dev, bytes, &b) != LOOM_OK) die("alloc", dev);
  uint8_t *p = loom_buffer_map(b);
  for (size_t i = 0; fill && i < bytes; i++) p[i] = (uint8_t)(i * 131 + 7);
  return b;
}

/* Runs `s` with segments `seg`; fills the run's counters. */
static void run_stream(loom_device *dev, const struct stream *s, loom_buffer *seg[8], struct run *r) {
  struct loom_job job = {.insn_count = s->count};
  struct loom_job_result res;
  if (s->error) die(s->error, NULL);
  job.insns = buffer(dev, 16u * s->count, 0);
  memcpy(loom_buffer_map(job.insns), s->bytes, 16u * s->count);
  memcpy(job.segments, seg, sizeof job.segments);
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  if (loom_job_run(dev, &job, 3600000, &res) != LOOM_OK) die("job", dev);
  r->secs = clock_s(CLOCK_MONOTONIC) - t0;
  r->cpu_secs = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  r->ops = res.counters[LOOM_CNT_GEMM_OPS];
  r->cycles = res.counters[LOOM_CNT_CYCLES];
  r->bytes = 0;
  for (int c = LOOM_CNT_BYTES_RD_UOP; c <= LOOM_CNT_BYTES_WR_OUT; c++) r->bytes += res.counters[c];
  loom_buffer_free(job.insns);
}

/* Segments: 0 inputs [m][kb], 1 weights [kb][nb], 2 micro-ops, 3 outputs [m][nb]. */
static void make_segments(loom_device *dev, const struct loom_hw_config *cfg, const struct shape *sh,
                          loom_buffer *seg[8]) {
  uint32_t ri = loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0), rw = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  uint32_t ro = loom_hw_row_bytes(cfg, LOOM_BUF_OUT, 0);
  memset(seg, 0, 8 * sizeof *seg);
  seg[0] = buffer(dev, (size_t)sh->m * sh->kb * ri, 1);
  seg[1] = buffer(dev, (size_t)sh->kb * sh->nb * rw, 1);
  seg[2] = buffer(dev, 2u * sh->tile * LOOM_UOP_BYTES, 0);
  seg[3] = buffer(dev, (size_t)sh->m * sh->nb * ro, 0);
  uint8_t *u = loom_buffer_map(seg[2]);
  for (uint32_t h = 0; h < 2; h++)
    for (uint32_t j = 0; j < sh->tile; j++) {
      struct loom_uop op = {h * sh->m * sh->tile + j, 0, h * sh->kb * sh->tile + j};
      loom_uop_encode(&op, u + 4 * (h * sh->tile + j));
    }
}

static void free_segments(loom_buffer *seg[8]) {
  for (int i = 0; i < 8; i++) loom_buffer_free(seg[i]);
}

/* GEMM over one tile held in half h: ACC[h][m][j] += INP[m][kb] x WGT[h][kb][j]. */
static void tile_gemm(struct stream *s, unsigned tok, const struct shape *sh, uint32_t h, int reset) {
  struct loom_insn_gemm g = {.reset = (uint32_t)reset, .uop_begin = h * sh->tile,
                             .uop_end = (h + 1) * sh->tile, .iter_out = sh->m,
                             .iter_in = reset ? 1 : sh->kb, .acc_factor_out = sh->tile};
  if (!reset) g.inp_factor_out = sh->kb, g.inp_factor_in = 1, g.wgt_factor_in = sh->tile;
  stream_gemm(s, tok, &g);
}

/* The double-buffered stream; tile t lives in half t % 2 of WGT and ACC. */
static void streamed_stream(struct stream *s, const struct shape *sh) {
  uint32_t tiles = sh->nb / sh->tile;
  stream_load(s, 0, LOOM_BUF_UOP, 0, 2, 0, 2 * sh->tile);
  stream_load(s, 0, LOOM_BUF_INP, 0, 0, 0, sh->m * sh->kb);
  for (uint32_t t = 0; t < tiles; t++) {
    uint32_t h = t % 2;
    struct loom_insn_mem w = {.buffer = LOOM_BUF_WGT, .sram_base = h * sh->kb * sh->tile, .segment = 1,
                              .dram_offset = t * sh->tile, .y_size = sh->kb, .x_size = sh->tile,
                              .x_stride = sh->nb};
    stream_load_2d(s, STREAM_PUSH_NEXT | (t >= 2 ? STREAM_POP_NEXT : 0), &w);
    tile_gemm(s, t >= 2 ? STREAM_POP_NEXT : 0, sh, h, 1);
    tile_gemm(s, STREAM_POP_PREV | STREAM_PUSH_PREV | STREAM_PUSH_NEXT, sh, h, 0);
    struct loom_insn_mem o = {.buffer = LOOM_BUF_OUT, .sram_base = h * sh->m * sh->tile, .segment = 3,
                              .dram_offset = t * sh->tile, .y_size = sh->m, .x_size = sh->tile,
                              .x_stride = sh->nb};
    stream_store_2d(s, STREAM_POP_PREV | STREAM_PUSH_PREV, &o);
  }
  for (uint32_t i = 0; i < (tiles < 2 ? tiles : 2); i++) {
    stream_nop(s, STREAM_POP_NEXT, LOOM_Q_LOAD);
    stream_nop(s, STREAM_POP_NEXT, LOOM_Q_COMPUTE);
  }
  stream_finish(s, 0);
}

static void bench_streamed(loom_device *dev, const struct shape *sh, struct run *r) {
  loom_buffer *seg[8];
  struct stream s;
  make_segments(dev, loom_device_config(dev), sh, seg);
  stream_init(&s);
  streamed_stream(&s, sh);
  run_stream(dev, &s, seg, r);
  stream_free(&s);
  free_segments(seg);
}

/* Job 1 loads everything, job 2 is one big GEMM on resident operands. */
static void bench_resident(loom_device *dev, const struct shape *sh, struct run *r) {
  loom_buffer *seg[8];
  struct stream s;
  make_segments(dev, loom_device_config(dev), sh, seg);
  stream_init(&s);
  stream_load(&s, 0, LOOM_BUF_UOP, 0, 2, 0, sh->tile);
  stream_load(&s, 0, LOOM_BUF_INP, 0, 0, 0, sh->m * sh->kb);
  stream_load(&s, 0, LOOM_BUF_WGT, 0, 1, 0, sh->kb * sh->nb);
  stream_finish(&s, 0);
  run_stream(dev, &s, seg, r);
  stream_free(&s);
  stream_init(&s);
  tile_gemm(&s, 0, sh, 0, 0);
  stream_finish(&s, 0);
  run_stream(dev, &s, seg, r);
  stream_free(&s);
  free_segments(seg);
}

static loom_device *open_dev(const char *config, const char *lib) {
  char opts[1024], msg[LOOM_MSG_MAX];
  loom_device *dev;
  snprintf(opts, sizeof opts, "config=%s,dram_mb=64%s%s", config, lib ? ",lib=" : "", lib ? lib : "");
  if (loom_device_open_ops(&loom_backend_tsim, opts, &dev, msg) != LOOM_OK) {
    fprintf(stderr, "bench_rtl: %s\n", msg);
    return NULL;
  }
  return dev;
}

/* Roofline bound in ops per cycle for a run's traffic. */
static double roofline(const struct run *r) {
  double mem = DRAM_BPC * (double)r->ops / (double)r->bytes;
  return mem < 1.0 ? mem : 1.0;
}

static void print_streamed(FILE *j, const char *name, const struct shape *sh, const struct run *r,
                           uint32_t peak, int last) {
  double ach = (double)r->ops / (double)r->cycles, bound = roofline(r);
  printf("%-26s %9llu ops %9llu cycles  %.3f ops/cycle (%5.1f MACs/cycle), roofline %.3f -> %5.1f%%\n",
         name, (unsigned long long)r->ops, (unsigned long long)r->cycles, ach, ach * peak, bound,
         100.0 * ach / bound);
  fprintf(j,
          "  \"%s\": {\"m\": %u, \"k_blocks\": %u, \"n_blocks\": %u, \"tile_blocks\": %u, "
          "\"gemm_ops\": %llu, \"cycles\": %llu, \"dram_bytes\": %llu, \"ops_per_cycle\": %.4f, "
          "\"macs_per_cycle\": %.1f, \"roofline_ops_per_cycle\": %.4f, \"fraction_of_roofline\": %.4f}%s\n",
          name, sh->m, sh->kb, sh->nb, sh->tile, (unsigned long long)r->ops,
          (unsigned long long)r->cycles, (unsigned long long)r->bytes, ach, ach * peak, bound,
          ach / bound, last ? "" : ",");
}

int main(int argc, char **argv) {
  const char *config = "default", *lib = NULL, *lib_mt = NULL, *json = "build/bench/rtl.json";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--config")) config = argv[i + 1];
    else if (!strcmp(argv[i], "--lib")) lib = argv[i + 1];
    else if (!strcmp(argv[i], "--lib-mt")) lib_mt = argv[i + 1];
    else if (!strcmp(argv[i], "--json")) json = argv[i + 1];
    else return fprintf(stderr, "usage: bench_rtl [--config N] [--lib P] [--lib-mt P] [--json F]\n"), 2;
  }
  loom_device *dev = open_dev(config, lib);
  if (!dev) return 1;
  const struct loom_hw_config *cfg = loom_device_config(dev);
  uint32_t peak = loom_hw_peak_macs(cfg);
  struct shape resident = {64, 16, 32, 32}, compute = {64, 16, 128, 8}, memory = {16, 16, 128, 8};
  struct run rr, rc, rm, rmt;
  memset(&rmt, 0, sizeof rmt);
  bench_resident(dev, &resident, &rr);
  bench_streamed(dev, &compute, &rc);
  bench_streamed(dev, &memory, &rm);
  loom_device_close(dev);
  loom_device *mt = lib_mt ? open_dev(config, lib_mt) : NULL;
  if (mt) bench_streamed(mt, &compute, &rmt), loom_device_close(mt);
  char msg[LOOM_MSG_MAX];
  struct loom_outfile *o;
  if (loom_outfile_open(json, &o, msg) != LOOM_OK) return fprintf(stderr, "bench_rtl: %s\n", msg), 1;
  FILE *j = loom_outfile_stream(o);
  printf("tsim benchmarks, config %s (peak %u MACs/cycle, DRAM model 8 B/cycle, latency 32)\n", config, peak);
  printf("simulation speed           %9.0f cycles/s single-threaded (%.0f per CPU second)",
         (double)rc.cycles / rc.secs, (double)rc.cycles / rc.cpu_secs);
  if (mt)
    printf("\n                           %9.0f cycles/s --threads 2 (%.0f per CPU second)",
           (double)rmt.cycles / rmt.secs, (double)rmt.cycles / rmt.cpu_secs);
  printf("\nresident GEMM utilization %9llu ops %9llu cycles  %.1f%% of peak\n",
         (unsigned long long)rr.ops, (unsigned long long)rr.cycles, 100.0 * (double)rr.ops / (double)rr.cycles);
  fprintf(j, "{\n  \"config\": \"%s\", \"peak_macs_per_cycle\": %u, \"dram_bytes_per_cycle\": %.0f,\n", config,
          peak, DRAM_BPC);
  fprintf(j,
          "  \"sim_cycles_per_s\": {\"single\": %.0f, \"threads2\": %.0f, \"single_per_cpu_s\": %.0f, "
          "\"threads2_per_cpu_s\": %.0f},\n",
          (double)rc.cycles / rc.secs, mt ? (double)rmt.cycles / rmt.secs : 0.0,
          (double)rc.cycles / rc.cpu_secs, mt ? (double)rmt.cycles / rmt.cpu_secs : 0.0);
  fprintf(j, "  \"resident_gemm\": {\"gemm_ops\": %llu, \"cycles\": %llu, \"utilization\": %.4f},\n",
          (unsigned long long)rr.ops, (unsigned long long)rr.cycles, (double)rr.ops / (double)rr.cycles);
  print_streamed(j, "streamed_compute_bound", &compute, &rc, peak, 0);
  print_streamed(j, "streamed_memory_bound", &memory, &rm, peak, 1);
  fprintf(j, "}\n");
  if (loom_outfile_commit(o, msg) != LOOM_OK) return fprintf(stderr, "bench_rtl: %s\n", msg), 1;
  printf("(written to %s)\n", json);
  return 0;
}
