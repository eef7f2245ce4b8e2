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
 *
 * ISA v2 adds three flags (docs/isa.md, "GEMM"): `first` makes every
 * period-th micro-op of outer iteration 0 overwrite its row (ACC = dot),
 * `last` makes every period-th micro-op of the last outer iteration write
 * the epilogue E(ACC) into OUT (and leaves OUT alone otherwise), and `dw`
 * replaces the dot product by the depthwise one, lane o summing its own
 * window taps: INP[x + off(t)][b][o] x WGT[w][o][t].  The flags change only
 * which kernel runs per micro-op; the dense kernel stays the hot path.
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
  uint32_t period;
  uint64_t ops;   /* accumulating micro-ops done */
  int8_t *scratch_out; /* OUT row a `last` GEMM's kernel writes and nobody reads */
  int32_t *epi;        /* the epilogue's result row */
};

static uint32_t bad_row(struct fsim *sim, const struct gemm_loop *l, uint32_t u, uint32_t buffer,
                        uint32_t row, uint32_t rows) {
  return fsim_fail(sim, LOOM_ERR_SRAM, l->s,
                   "micro-op %u (i=%u, j=%u): %s row %u is past the buffer's %u rows", u, l->i,
                   l->j, loom_buffer_name(buffer), row, rows);
}

static void uop_multiply(struct fsim *sim, gemm_row_fn *kernel, uint32_t a, uint32_t x,
                         uint32_t w, int8_t *scratch_out) {
  const struct loom_hw_config *c = sim->cfg;
  const int8_t *wrow = sim->wgt + (size_t)w * sim->wgt_elems;
  for (int b = 0; b < c->batch; b++) {
    size_t ab = (size_t)a * sim->acc_elems + (size_t)b * (size_t)c->block_out;
    const int8_t *xrow = sim->inp + (size_t)x * sim->inp_elems + (size_t)b * (size_t)c->block_in;
    int8_t *orow = scratch_out ? scratch_out + (size_t)b * (size_t)c->block_out : sim->out + ab;
    kernel(sim->acc + ab, orow, xrow, wrow, c->block_in, c->block_out);
  }
}

/* ---- depthwise micro-ops ---- */

/* Taps of the window: min(kh * kw, block_in), column-major. */
static uint32_t dw_taps(const struct fsim *sim) {
  uint32_t t = sim->st.gcfg.dw_kh * sim->st.gcfg.dw_kw;
  return t < (uint32_t)sim->cfg->block_in ? t : (uint32_t)sim->cfg->block_in;
}

/* INP row offset of tap t: (t mod kh) window rows and (t div kh) columns. */
static uint32_t dw_off(const struct fsim *sim, uint32_t t) {
  const struct loom_insn_gcfg *g = &sim->st.gcfg;
  return (t % g->dw_kh) * g->dw_row + (t / g->dw_kh) * g->dw_col;
}

/* ACC[a][b][o] += sum_t INP[x + off(t)][b][o] * WGT[w][o][t] (exact, then
 * wrapping into the accumulator), OUT mirrored unless scratch_out. */
static void uop_depthwise(struct fsim *sim, uint32_t a, uint32_t x, uint32_t w, int8_t *scratch_out) {
  const struct loom_hw_config *c = sim->cfg;
  uint32_t taps = dw_taps(sim), bi = (uint32_t)c->block_in, bo = (uint32_t)c->block_out;
  const int8_t *wrow = sim->wgt + (size_t)w * sim->wgt_elems;
  for (uint32_t b = 0; b < (uint32_t)c->batch; b++)
    for (uint32_t o = 0; o < bo; o++) {
      int32_t sum = 0;
      for (uint32_t t = 0; t < taps; t++)
        sum += sim->inp[(size_t)(x + dw_off(sim, t)) * sim->inp_elems + b * bi + o % bi] * wrow[o * bi + t];
      size_t k = (size_t)a * sim->acc_elems + b * bo + o;
      sim->acc[k] = wrap_add(sim->acc[k], sum);
      if (scratch_out) scratch_out[b * bo + o] = fsim_sat8(sim->acc[k]);
      else sim->out[k] = fsim_sat8(sim->acc[k]);
    }
}

/* The first tap past INP, or -1. */
static int64_t dw_bad_tap(const struct fsim *sim, uint32_t x) {
  for (uint32_t t = 0, n = dw_taps(sim); t < n; t++)
    if (x + dw_off(sim, t) >= sim->inp_rows) return t;
  return -1;
}

/* The INP check: x itself, or every window tap of a depthwise micro-op. */
static uint32_t check_inp(struct fsim *sim, const struct gemm_loop *l, uint32_t u, uint32_t x) {
  if (!l->s->insn.gemm.dw)
    return x >= sim->inp_rows ? bad_row(sim, l, u, LOOM_BUF_INP, x, sim->inp_rows) : LOOM_ERR_NONE;
  int64_t t = dw_bad_tap(sim, x);
  if (t < 0) return LOOM_ERR_NONE;
  return fsim_fail(sim, LOOM_ERR_SRAM, l->s,
                   "micro-op %u (i=%u, j=%u): window tap %lld reads INP row %u, past the buffer's %u rows",
                   u, l->i, l->j, (long long)t, x + dw_off(sim, (uint32_t)t), sim->inp_rows);
}

/* One accumulating micro-op at position r of the pass (indices checked). */
static uint32_t accumulate(struct fsim *sim, struct gemm_loop *l, uint32_t u, uint32_t r, uint32_t a,
                           uint32_t x, uint32_t w) {
  const struct loom_insn_gemm *g = &l->s->insn.gemm;
  int first = g->first && l->i == 0 && r % l->period == 0;
  int final = g->last && l->i + 1 == g->iter_out && r % l->period == l->period - 1;
  uint32_t p = 0;
  if (final && (p = fsim_par_row(sim, l->s, u, l->i, l->j)) == UINT32_MAX) return LOOM_ERR_SRAM;
  if (!fsim_charge(sim, l->s, 1)) return LOOM_ERR_TIMEOUT;
  int32_t *acc = sim->acc + (size_t)a * sim->acc_elems;
  if (first) memset(acc, 0, sim->acc_elems * sizeof(int32_t));
  int8_t *scratch = g->last ? l->scratch_out : NULL; /* a `last` GEMM leaves OUT alone... */
  if (g->dw) uop_depthwise(sim, a, x, w, scratch);
  else uop_multiply(sim, l->kernel, a, x, w, scratch);
  if (final) { /* ...but for its final micro-ops, which write E(ACC) */
    fsim_epilogue(sim, acc, p, l->epi);
    for (uint32_t k = 0; k < sim->acc_elems; k++) sim->out[(size_t)a * sim->acc_elems + k] = (int8_t)l->epi[k];
  }
  l->ops++;
  return LOOM_ERR_NONE;
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
    uint32_t err = check_inp(sim, l, u, x);
    if (err) return err;
    if (w >= sim->wgt_rows) return bad_row(sim, l, u, LOOM_BUF_WGT, w, sim->wgt_rows);
    if ((err = accumulate(sim, l, u, u - g->uop_begin, a, x, w))) return err;
  }
  return LOOM_ERR_NONE;
}

uint32_t fsim_gemm(struct fsim *sim, const struct fsim_slot *s) {
  const struct loom_insn_gemm *g = &s->insn.gemm;
  if (g->iter_out == 0 || g->iter_in == 0 || g->uop_end <= g->uop_begin) return LOOM_ERR_NONE;
  fsim_decode_uops(sim, g->uop_begin, g->uop_end);
  struct gemm_loop l = {.s = s, .kernel = pick_kernel(sim->cfg),
                        .period = sim->st.gcfg.period ? sim->st.gcfg.period : 1,
                        .scratch_out = sim->out_scratch, .epi = sim->alu_operand};
  uint32_t err = LOOM_ERR_NONE;
  for (l.i = 0; l.i < g->iter_out && !err; l.i++)
    for (l.j = 0; l.j < g->iter_in && !err; l.j++) err = gemm_pass(sim, &l);
  sim->st.res->counters[LOOM_CNT_GEMM_OPS] += l.ops;
  if (sim->timing && !err && g->dw)
    fsim_timing_dw(sim->timing, s->index, g, &sim->st.gcfg, sim->uop_scratch, (uint32_t)sim->cfg->block_in);
  return err;
}
