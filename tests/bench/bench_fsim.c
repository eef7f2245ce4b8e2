/*
 * bench_fsim.c - fsim throughput: simulated int8 MACs and GEMM micro-ops per
 * second of host time (`make bench-fsim`).
 *
 * For each configuration the job is the largest weight-stationary GEMM the
 * buffers hold: all of WGT filled with a KB x NB grid of weight blocks (K =
 * KB * BLOCK_IN, N = NB * BLOCK_OUT), an M-row input tile in INP and the
 * M x N accumulator tile in ACC.  One GEMM instruction sweeps the whole tile
 * with a two-level loop over KB micro-ops (i = row, j = output block, u =
 * input block), and the instruction repeats until the job has done about
 * 2^30 MACs (a 1024 x 1024 x 1024 int8 matmul).  Around it sit the loads,
 * a REQUANT and the store, as a compiled layer would have them, so the
 * figure is end to end fsim_run() time.  The best of a few runs is
 * reported, as a table and as JSON (default path build/bench/fsim.json).
 *
 * This is a benchmark, not a test: it asserts only that the job finished.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/outfile.h"
#include "sim/fsim/fsim.h"
#include "tests/support/stream.h"

#define TARGET_MACS (UINT64_C(1) << 30)
#define RUNS 3

struct bench_result {
  const char *config;
  uint32_t m, k, n;       /* one GEMM instruction's tile */
  uint32_t gemm_insns;
  uint64_t uops, macs;
  double seconds;
};

/* The job's shape for `cfg`, see the essay. */
struct bench_shape {
  uint32_t kb, nb, m, reps;
};

static uint32_t floor_pow2_sqrt(uint32_t v) {
  uint32_t r = 1;
  while ((r * 2) * (r * 2) <= v) r *= 2;
  return r;
}

static struct bench_shape shape_for(const struct loom_hw_config *cfg) {
  struct bench_shape sh;
  sh.kb = sh.nb = floor_pow2_sqrt((uint32_t)cfg->wgt_rows);
  uint32_t m_inp = (uint32_t)cfg->inp_rows / sh.kb, m_acc = (uint32_t)cfg->acc_rows / sh.nb;
  sh.m = m_inp < m_acc ? m_inp : m_acc;
  uint64_t per_insn = (uint64_t)sh.m * sh.kb * sh.nb * loom_hw_peak_macs(cfg);
  sh.reps = (uint32_t)((TARGET_MACS + per_insn - 1) / per_insn);
  return sh;
}

static void build_stream(struct stream *s, const struct bench_shape *sh) {
  struct loom_insn_qcfg q = {.multiplier = 1 << 30, .shift = 40, .clamp_lo = -128, .clamp_hi = 127};
  struct loom_insn_gemm g = {.uop_begin = 0, .uop_end = sh->kb, .iter_out = sh->m,
                             .iter_in = sh->nb, .acc_factor_out = sh->nb, .acc_factor_in = 1,
                             .inp_factor_out = sh->kb, .wgt_factor_in = sh->kb};
  struct loom_insn_alu a = {.alu_op = LOOM_ALU_REQUANT, .use_imm = 1, .uop_begin = sh->kb,
                            .uop_end = sh->kb + 1, .iter_out = sh->m * sh->nb, .iter_in = 1,
                            .dst_factor_out = 1};
  stream_load(s, 0, LOOM_BUF_UOP, 0, 0, 0, sh->kb + 1);
  stream_qcfg(s, 0, &q);
  stream_load(s, 0, LOOM_BUF_WGT, 0, 1, 0, sh->kb * sh->nb);
  stream_load(s, STREAM_PUSH_NEXT, LOOM_BUF_INP, 0, 2, 0, sh->m * sh->kb);
  stream_gemm_range(s, 0, 1, sh->kb, sh->kb + 1); /* reset the first row only: cheap */
  for (uint32_t r = 0; r < sh->reps; r++) stream_gemm(s, r == 0 ? STREAM_POP_PREV : 0, &g);
  stream_alu(s, STREAM_PUSH_NEXT, &a);
  stream_store(s, STREAM_POP_PREV, 0, 3, 0, sh->m * sh->nb);
  stream_finish(s, 0);
}

static uint8_t *random_bytes(size_t n, uint32_t *seed) {
  uint8_t *p = malloc(n ? n : 1);
  if (!p) return NULL;
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (uint8_t)(*seed >> 24);
  }
  return p;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Micro-ops 0..kb-1 (acc 0, inp u, wgt u) and kb (acc 0) for reset/ALU. */
static uint8_t *build_uops(const struct bench_shape *sh) {
  struct stream_uops u;
  stream_uops_init(&u);
  for (uint32_t k = 0; k < sh->kb; k++) stream_uops_add(&u, 0, k, k);
  stream_uops_add(&u, 0, 0, 0);
  return u.bytes;
}

static int bench_config(const struct loom_hw_config *cfg, struct bench_result *out) {
  struct bench_shape sh = shape_for(cfg);
  uint32_t seed = 12345;
  struct stream s;
  stream_init(&s);
  build_stream(&s, &sh);
  uint32_t r_out = loom_hw_row_bytes(cfg, LOOM_BUF_OUT, 0);
  struct fsim_job job = {.insns = s.bytes, .insn_count = s.count};
  job.seg[0] = (struct fsim_segment){build_uops(&sh), (sh.kb + 1) * LOOM_UOP_BYTES};
  job.seg[1].size = (uint64_t)sh.kb * sh.nb * loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  job.seg[2].size = (uint64_t)sh.m * sh.kb * loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0);
  job.seg[3].size = (uint64_t)sh.m * sh.nb * r_out;
  for (int i = 1; i < 4; i++) job.seg[i].data = random_bytes(job.seg[i].size, &seed);
  struct fsim *sim = fsim_create(cfg);
  struct fsim_result res;
  int ok = sim && !s.error;
  for (int i = 0; i < 4; i++) ok = ok && job.seg[i].data;
  double best = 1e30;
  for (int run = 0; ok && run < RUNS; run++) {
    double t0 = now();
    ok = fsim_run(sim, &job, &res) == LOOM_ERR_NONE;
    double t = now() - t0;
    if (t < best) best = t;
  }
  if (!ok && sim) fprintf(stderr, "bench_fsim: %s: %s\n", cfg->name, res.message);
  *out = (struct bench_result){cfg->name, sh.m, sh.kb * (uint32_t)cfg->block_in,
                               sh.nb * (uint32_t)cfg->block_out, sh.reps,
                               res.counters[LOOM_CNT_GEMM_OPS],
                               res.counters[LOOM_CNT_GEMM_OPS] * loom_hw_peak_macs(cfg), best};
  fsim_destroy(sim);
  for (int i = 0; i < 4; i++) free(job.seg[i].data);
  stream_free(&s);
  return ok;
}

static void print_table(const struct bench_result *r, int n) {
  printf("%-8s %-16s %6s %12s %14s %9s %10s %12s\n", "config", "tile MxKxN", "gemms",
         "micro-ops", "MACs", "seconds", "GMAC/s", "Muop/s");
  for (int i = 0; i < n; i++) {
    char tile[32];
    snprintf(tile, sizeof tile, "%ux%ux%u", r[i].m, r[i].k, r[i].n);
    printf("%-8s %-16s %6u %12llu %14llu %9.4f %10.2f %12.1f\n", r[i].config, tile,
           r[i].gemm_insns, (unsigned long long)r[i].uops, (unsigned long long)r[i].macs,
           r[i].seconds, (double)r[i].macs / r[i].seconds / 1e9,
           (double)r[i].uops / r[i].seconds / 1e6);
  }
}

/* Atomically (driver/core/outfile.h): a failed run keeps the last good JSON. */
static int write_json(const char *path, const struct bench_result *r, int n) {
  char msg[LOOM_MSG_MAX];
  struct loom_outfile *o;
  if (loom_outfile_open(path, &o, msg) != LOOM_OK) return fprintf(stderr, "bench_fsim: %s\n", msg), 0;
  FILE *f = loom_outfile_stream(o);
  fprintf(f, "{\n  \"benchmark\": \"fsim\",\n  \"results\": [\n");
  for (int i = 0; i < n; i++)
    fprintf(f,
            "    {\"config\": \"%s\", \"m\": %u, \"k\": %u, \"n\": %u, \"gemm_insns\": %u, "
            "\"gemm_uops\": %llu, \"macs\": %llu, \"seconds\": %.6f, \"macs_per_s\": %.6e, "
            "\"uops_per_s\": %.6e}%s\n",
            r[i].config, r[i].m, r[i].k, r[i].n, r[i].gemm_insns, (unsigned long long)r[i].uops,
            (unsigned long long)r[i].macs, r[i].seconds, (double)r[i].macs / r[i].seconds,
            (double)r[i].uops / r[i].seconds, i + 1 < n ? "," : "");
  fprintf(f, "  ]\n}\n");
  if (loom_outfile_commit(o, msg) == LOOM_OK) return 1;
  fprintf(stderr, "bench_fsim: %s\n", msg);
  return 0;
}

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : "build/bench/fsim.json";
  struct bench_result r[LOOM_CONFIG_COUNT];
  int ok = 1;
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) ok &= bench_config(&loom_hw_configs[i], &r[i]);
  print_table(r, LOOM_CONFIG_COUNT);
  if (!write_json(json, r, LOOM_CONFIG_COUNT)) return 1;
  printf("wrote %s\n", json);
  return ok ? 0 : 1;
}
