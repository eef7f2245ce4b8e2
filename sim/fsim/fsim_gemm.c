/*
 * fsim_gemm.c - GEMM: the two-level loop of micro-ops on the GEMM core.
 *
 *   for i < iter_out, j < iter_in, u in [uop_begin, uop_end):
 *     a, x, w = UOP[u] + i * *_factor_out + j * *_factor_in
 *     ACC[a][b][o] = reset ? 0 : ACC[a][b][o] + sum_k INP[x][b][k] * WGT[w][o][k]
 *     OUT[a] = sat8(ACC[a])
 *
 * This is where fsim spends its time, so the per-micro-op work is one call
 * to a row kernel per batch row, and the kernels are written for the
 * vectorizer at -O2: restrict pointers, the input row widened once to
 * int16, and the reduction over k with a trip count known at compile time
 * for the block sizes of the shipped configurations (GCC's default cost
 * model at -O2 only vectorizes such loops; it then uses pmaddwd).  Other
 * block sizes take the generic kernel: same results, slower.
 *
 * The sum of block_in int16 products cannot overflow int32; only adding it
 * to the accumulator wraps, and that addition is done in uint32 so the wrap
 * is defined.  Index arithmetic is exact in uint32 (fields are at most
 * 14 + 11 bits), and each index is checked per micro-op: the rows a failing
 * instruction updated before the bad micro-op keep their new values.
 */
#include <string.h>

#include "sim/fsim/fsim_internal.h"

/* ACC[a] += x . w for one batch row, then the OUT mirror of that row. */
typedef void gemm_row_fn(int32_t *restrict acc, int8_t *restrict out, const int8_t *restrict x,
                         const int8_t *restrict w, int k_len, int o_len);

static int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

static void gemm_row_any(int32_t *restrict acc, int8_t *restrict out, const int8_t *restrict x,
                         const int8_t *restrict w, int k_len, int o_len) {
  for (int o = 0; o < o_len; o++) {
    int32_t sum = 0;
    for (int k = 0; k < k_len; k++) sum += x[k] * w[o * k_len + k];
    acc[o] = wrap_add(acc[o], sum);
    out[o] = fsim_sat8(acc[o]);
  }
}

/* The same computation with K and O as constants (the arguments are
 * unused), also built for x86-64-v3 and -v4 (LOOM_TARGET_CLONES, core.h):
 * the integer results cannot differ. */
#define GEMM_ROW_FIXED(K, O)                                                                  \
  LOOM_TARGET_CLONES static void gemm_row_##K##x##O(int32_t *restrict acc, int8_t *restrict out,                 \
                                 const int8_t *restrict x, const int8_t *restrict w,          \
                                 int k_len, int o_len) {                                      \
    int16_t xw[K];                                                                            \
    for (int k = 0; k < K; k++) xw[k] = x[k];                                                 \
    for (int o = 0; o < O; o++) {                                                             \
      int32_t sum = 0;                                                                        \
      for (int k = 0; k < K; k++) sum += xw[k] * (int16_t)w[o * K + k];                       \
      acc[o] = wrap_add(acc[o], sum);                                                         \
    }                                                                                         \
    for (int o = 0; o < O; o++) out[o] = fsim_sat8(acc[o]);                                   \
  }

GEMM_ROW_FIXED(8, 8)
GEMM_ROW_FIXED(16, 16)
GEMM_ROW_FIXED(32, 32)

static gemm_row_fn *pick_kernel(const struct loom_hw_config *cfg) {
  LOOM_ASSERT(cfg->block_in <= 65536 && "the int32 dot product cannot overflow");
  if (cfg->block_in == 8 && cfg->block_out == 8) return gemm_row_8x8;
  if (cfg->block_in == 16 && cfg->block_out == 16) return gemm_row_16x16;
  if (cfg->block_in == 32 && cfg->block_out == 32) return gemm_row_32x32;
  return gemm_row_any;
}

/* Loop state of one GEMM instruction. */
struct gemm_loop {
  const struct fsim_slot *s;
  gemm_row_fn *kernel;
  uint32_t i, j;  /* current outer and inner iteration */
  uint64_t ops;   /* accumulating micro-ops done */
};

static uint32_t bad_row(struct fsim *sim, const struct gemm_loop *l, uint32_t u, uint32_t buffer,
                        uint32_t row, uint32_t rows) {
  return fsim_fail(sim, LOOM_ERR_SRAM, l->s,
                   "micro-op %u (i=%u, j=%u): %s row %u is past the buffer's %u rows", u, l->i,
                   l->j, loom_buffer_name(buffer), row, rows);
}

static void uop_multiply(struct fsim *sim, gemm_row_fn *kernel, uint32_t a, uint32_t x,
                         uint32_t w) {
  const struct loom_hw_config *c = sim->cfg;
  const int8_t *wrow = sim->wgt + (size_t)w * sim->wgt_elems;
  for (int b = 0; b < c->batch; b++) {
    size_t ab = (size_t)a * sim->acc_elems + (size_t)b * (size_t)c->block_out;
    const int8_t *xrow = sim->inp + (size_t)x * sim->inp_elems + (size_t)b * (size_t)c->block_in;
    kernel(sim->acc + ab, sim->out + ab, xrow, wrow, c->block_in, c->block_out);
  }
}

/* One pass over the micro-ops for iteration (l->i, l->j). */
static uint32_t gemm_pass(struct fsim *sim, struct gemm_loop *l) {
  const struct loom_insn_gemm *g = &l->s->insn.gemm;
  uint32_t da = l->i * g->acc_factor_out + l->j * g->acc_factor_in;
  uint32_t dx = l->i * g->inp_factor_out + l->j * g->inp_factor_in;
  uint32_t dw = l->i * g->wgt_factor_out + l->j * g->wgt_factor_in;
  for (uint32_t u = g->uop_begin; u < g->uop_end; u++) {
    if (u >= sim->uop_rows) return bad_row(sim, l, u, LOOM_BUF_UOP, u, sim->uop_rows);
    const struct loom_uop *uop = &sim->uop_scratch[u];
    uint32_t a = uop->acc + da, x = uop->inp + dx, w = uop->wgt + dw;
    if (a >= sim->acc_rows) return bad_row(sim, l, u, LOOM_BUF_ACC, a, sim->acc_rows);
    if (g->reset) {
      if (!fsim_charge(sim, l->s, 1)) return LOOM_ERR_TIMEOUT;
      memset(sim->acc + (size_t)a * sim->acc_elems, 0, sim->acc_elems * sizeof(int32_t));
      memset(sim->out + (size_t)a * sim->acc_elems, 0, sim->acc_elems);
      continue;
    }
    if (x >= sim->inp_rows) return bad_row(sim, l, u, LOOM_BUF_INP, x, sim->inp_rows);
    if (w >= sim->wgt_rows) return bad_row(sim, l, u, LOOM_BUF_WGT, w, sim->wgt_rows);
    if (!fsim_charge(sim, l->s, 1)) return LOOM_ERR_TIMEOUT;
    uop_multiply(sim, l->kernel, a, x, w);
    l->ops++;
  }
  return LOOM_ERR_NONE;
}

uint32_t fsim_gemm(struct fsim *sim, const struct fsim_slot *s) {
  const struct loom_insn_gemm *g = &s->insn.gemm;
  if (g->iter_out == 0 || g->iter_in == 0 || g->uop_end <= g->uop_begin) return LOOM_ERR_NONE;
  fsim_decode_uops(sim, g->uop_begin, g->uop_end);
  struct gemm_loop l = {.s = s, .kernel = pick_kernel(sim->cfg)};
  uint32_t err = LOOM_ERR_NONE;
  for (l.i = 0; l.i < g->iter_out && !err; l.i++)
    for (l.j = 0; l.j < g->iter_in && !err; l.j++) err = gemm_pass(sim, &l);
  sim->st.res->counters[LOOM_CNT_GEMM_OPS] += l.ops;
  return err;
}
