/*
 * lower_eltwise.c - the requantized element-wise Add (residual connections).
 *
 *   acc = a_weight * (a - a_zp) + b_weight * (b - b_zp)
 *   y   = clamp(rshift(acc * multiplier, shift) + out_zp, lo, hi)
 *
 * Both operands are requantized to the output scale at once: a_weight and
 * b_weight are small integers in the ratio of the two input scales (chosen
 * by lower_add_scales() to within about 1 / 127^2), multiplier / 2^shift
 * carries the rest.
 *
 * It runs on the GEMM core, not the ALU, because the core's operands come
 * from INP, which the load module fills while compute works on the other
 * half.  Per tile of np pixels x nb channel blocks:
 *
 *   LOAD INP   a and b of each block, one contiguous run each
 *   GEMM       for op in {a, b}: for block: for pixel:
 *                ACC[pixel + block*tp] += INP[pixel + (2*block + op)*tp] x WGT[op]
 *              with WGT[op] = op_weight x identity (two resident rows);
 *              `first` on op a, `last` on op b: the epilogue adds the
 *              constant -(a_weight * a_zp + b_weight * b_zp) and
 *              requantizes with QCFG's multiplier (par_src) into OUT
 *   STORE
 *
 * i.e. 2 compute cycles per pixel and block against 48 DRAM bytes (6 bus
 * cycles on a 64-bit bus): the Add is memory-bound and its compute hides
 * under the transfers.  The ALU alternative (LOAD ACC of both operands on
 * the compute module, two MULs, ADD, REQUANT) would serialize the loads
 * with the arithmetic and take about 10 cycles.  After a convolution the
 * same Add is better fused into it (lower_qconv.residual, lower_conv.c):
 * the same integer steps on the accumulator, with only the residual to
 * load.
 *
 * The tensor is walked as a column of h*w pixel rows per channel block
 * (struct lower_geom with out_w = 1), so tile.c's chunk walk and its
 * shorter last tile (a prefix of the micro-op set) apply unchanged.  An
 * [N, C] tensor (h = w = 1: the [S, D] rows of a transformer's residual
 * stream) is one column of N * ceil(C / block) rows instead, since its
 * pixel columns would be one row long: the operands and the result share
 * the layout, and the Add is the same on every row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

int lower_quantize_multiplier(double real, int32_t *multiplier, uint32_t *shift) {
  if (!(real > 0.0) || real >= 2147483648.0) return -1;
  int e;
  double f = frexp(real, &e); /* real = f * 2^e, f in [0.5, 1) */
  int64_t m = llround(f * 2147483648.0);
  if (m == (INT64_C(1) << 31)) m /= 2, e++;
  int s = 31 - e;
  if (s < 0) return -1;
  if (s > 63) {
    m = llround(ldexp(real, 63));
    s = 63;
    if (m == 0) return -1;
  }
  *multiplier = (int32_t)m;
  *shift = (uint32_t)s;
  return 0;
}

/* Weights wa, wb in 1..127 whose ratio is the best approximation of
 * ma / mb (every pair is tried: the smaller over the larger is the best
 * rational approximation with denominator <= 127), and the multiplier
 * that makes the larger term exact; the rounding of the ratio lands on the
 * smaller term. */
int lower_add_scales(double ma, double mb, struct lower_qadd *q) {
  if (!(ma > 0.0) || !(mb > 0.0)) return -1;
  double small = ma < mb ? ma / mb : mb / ma, best = INFINITY;
  int32_t w_big = 0, w_small = 0;
  for (int32_t big = 1; big <= 127; big++) {
    int32_t s = (int32_t)lround(big * small);
    if (s < 1) s = 1;
    if (s > big) s = big;
    double err = fabs((double)s / big - small);
    if (err < best) best = err, w_big = big, w_small = s;
  }
  q->a_weight = ma >= mb ? w_big : w_small;
  q->b_weight = ma >= mb ? w_small : w_big;
  double m = ma >= mb ? ma / q->a_weight : mb / q->b_weight;
  return lower_quantize_multiplier(m, &q->multiplier, &q->shift);
}

static int is_int8(int32_t v) { return v >= -128 && v <= 127; }

static int check_add(const struct loom_hw_config *cfg, const struct lower_qadd *l, const char *where,
                     char *msg) {
  if (cfg->batch != 1 || cfg->block_in != cfg->block_out)
    return lower_fail(msg, where, "configuration %s is not supported (batch 1, square blocks)", cfg->name);
  if (l->n < 1 || l->c < 1 || l->h < 1 || l->w < 1) return lower_fail(msg, where, "empty tensor");
  if (!is_int8(l->a_zero_point) || !is_int8(l->b_zero_point) || !is_int8(l->a_weight) ||
      !is_int8(l->b_weight) || !is_int8(l->out_zero_point) || !is_int8(l->clamp_lo) ||
      !is_int8(l->clamp_hi))
    return lower_fail(msg, where, "zero points, operand weights and clamps must be int8");
  if (l->shift > 63 || l->round_even > 1) return lower_fail(msg, where, "bad shift or round_even");
  uint64_t rows = (uint64_t)l->n * (uint64_t)tile_ceil_div(l->c, cfg->block_in) * (uint64_t)l->h * (uint64_t)l->w;
  if (rows >= (UINT64_C(1) << 24)) return lower_fail(msg, where, "tensor too large");
  return 0;
}

static void add_geom(const struct loom_hw_config *cfg, const struct lower_qadd *l, struct lower_geom *g) {
  memset(g, 0, sizeof *g);
  g->mode = LOWER_GEMM_DIAG;
  g->n = l->n;
  g->in_h = g->out_h = l->h * l->w;
  g->in_w = g->out_w = 1;
  g->k_h = g->k_w = g->stride_h = g->stride_w = g->dil_h = g->dil_w = 1;
  g->cib = g->cob = tile_ceil_div(l->c, cfg->block_out);
  if (l->h * l->w == 1) { /* [N, C] rows (NC layout): one column of N * blocks rows, like any other */
    g->in_h = g->out_h = l->n * g->cob;
    g->n = 1, g->cib = g->cob = 1;
  }
}


static int add_layout(const struct loom_hw_config *cfg, const struct lower_geom *g,
                      struct lower_tiling *t, struct tile_layout *L) {
  memset(L, 0, sizeof *L);
  t->tw = 1, t->tci = t->tco;
  t->n_rt = tile_ceil_div(g->out_h, t->th), t->n_ct = 1;
  t->n_cot = tile_ceil_div(g->cob, t->tco), t->n_cic = 1;
  t->tiles = t->chunks = (uint32_t)(g->n * t->n_rt * t->n_cot);
  L->acc_half = (uint32_t)cfg->acc_rows / 2;
  L->acc_base[1] = L->acc_half;
  L->inp_half = (uint32_t)cfg->inp_rows / 2, L->inp_base[1] = L->inp_half;
  L->tile_pix = (uint32_t)t->th;
  L->inp_block = 2 * (uint32_t)t->th;
  L->kk = 1;
  uint32_t parities = t->tiles > 1 ? 2 : 1;
  t->uops = parities * (uint32_t)t->th;
  return (uint32_t)(t->tco * t->th) <= L->acc_half && (uint32_t)t->tco * L->inp_block <= L->inp_half &&
                 L->inp_block <= 2047 && t->uops <= (uint32_t)cfg->uop_rows
             ? 0
             : -1;
}

static uint64_t add_cost(const struct tile_ctx *c) {
  const struct loom_hw_config *cfg = c->cfg;
  uint64_t row = loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0);
  struct cost_pipe p;
  struct tile_iter it;
  cost_pipe_init(&p, 2);
  tile_iter_init(&it, c);
  while (tile_iter_next(&it)) {
    uint64_t np = (uint64_t)it.ch.rows, nb = (uint64_t)it.ch.nco;
    uint64_t load = 2 * nb * cost_dma(cfg, np * row, 1, 0);
    uint64_t comp = cost_gemm(2 * np * nb);
    cost_pipe_chunk(&p, cfg, load, 2 * nb * np * row, comp, 1, 1, nb * cost_dma(cfg, np * row, 1, 0), nb * np * row);
  }
  return cost_pipe_total(cfg, &p);
}

static int add_search(const struct loom_hw_config *cfg, const struct lower_geom *g, struct tile_ctx *best) {
  int32_t bs[TILE_SIZES_MAX], ps[TILE_SIZES_MAX];
  int32_t nb = tile_distinct_sizes(g->cob, bs), np = tile_distinct_sizes(g->out_h, ps);
  int found = 0;
  for (int32_t a = 0; a < nb; a++)
    for (int32_t b = 0; b < np; b++) {
      struct tile_ctx x = {cfg, g, {0}, {0}};
      x.t.tco = bs[a], x.t.th = ps[b];
      if (add_layout(cfg, g, &x.t, &x.L) != 0) continue;
      x.t.est_cycles = add_cost(&x);
      if (!found || x.t.est_cycles < best->t.est_cycles) *best = x, found = 1;
    }
  return found ? 0 : -1;
}

/* ---- constants and emission ---- */

static uint32_t add_consts(struct lower_program *p, const struct lower_qadd *l) {
  const struct loom_hw_config *cfg = p->cfg;
  int32_t bo = cfg->block_out;
  uint64_t wrow = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  int8_t *w = calloc(2, wrow);
  LOOM_ASSERT(w);
  for (int32_t i = 0; i < bo; i++) {
    w[(size_t)i * (size_t)bo + (size_t)i] = (int8_t)l->a_weight;
    w[wrow + (size_t)i * (size_t)bo + (size_t)i] = (int8_t)l->b_weight;
  }
  p->wgt_offset = emit_const(p, w, 2 * wrow, emit_const_align(cfg));
  free(w);
  return (uint32_t)(p->wgt_offset / wrow);
}

struct add_emit {
  struct lower_program *p;
  const struct tile_ctx *c;
  uint32_t wgt_row0;
  struct loom_uop *scratch;
};

static uint32_t add_set(struct add_emit *e, uint32_t acc, uint32_t inp) {
  for (int32_t i = 0; i < e->c->t.th; i++) {
    struct loom_uop u = {acc + (uint32_t)i, inp + (uint32_t)i, 0};
    e->scratch[i] = u;
  }
  return emit_uop_set(e->p, e->scratch, (uint32_t)e->c->t.th);
}

static struct loom_insn transfer(uint32_t opcode, uint32_t buffer, uint32_t sram, uint32_t seg,
                                 const struct tile_chunk *ch, const struct lower_geom *g, int32_t blk) {
  uint32_t off = (uint32_t)(((int64_t)ch->n * g->cob + ch->co0 + blk) * g->out_h + ch->oy0);
  return emit_mem(opcode, buffer, sram, seg, off, 1, (uint32_t)ch->rows, (uint32_t)ch->rows);
}

static void add_chunk(struct add_emit *e, const struct tile_chunk *ch, struct emit_chunk *out) {
  const struct tile_ctx *c = e->c;
  uint32_t acc = c->L.acc_base[ch->o & 1], inp = c->L.inp_base[ch->k & 1], tp = (uint32_t)c->t.th;
  uint32_t np = (uint32_t)ch->rows, nb = (uint32_t)ch->nco;
  struct loom_insn in;
  emit_chunk_reset(out);
  out->k = ch->k, out->o = ch->o, out->first = out->last = 1;
  for (int32_t i = 0; i < ch->nco; i++) {
    in = transfer(LOOM_OP_LOAD, LOOM_BUF_INP, inp + 2 * (uint32_t)i * tp, LOWER_SEG_IN, ch, c->g, i);
    emit_vec_push(&out->load, &in);
    in = transfer(LOOM_OP_LOAD, LOOM_BUF_INP, inp + (2 * (uint32_t)i + 1) * tp, LOWER_SEG_IN2, ch, c->g, i);
    emit_vec_push(&out->load, &in);
  }
  if (ch->k == 0) {
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, 0, LOWER_SEG_CONST, e->wgt_row0, 1, 2, 2);
    emit_vec_push(&out->load, &in);
  }
  uint32_t b = add_set(e, acc, inp);
  in = emit_gemm(b, b + np, 2, nb, 0, tp, tp, 2 * tp, 1, 0);
  in.gemm.first = in.gemm.last = 1; /* period 1: op a overwrites, op b writes E into OUT */
  emit_vec_push(&out->main, &in);
  for (int32_t i = 0; i < ch->nco; i++) {
    in = transfer(LOOM_OP_STORE, LOOM_BUF_OUT, acc + (uint32_t)i * tp, LOWER_SEG_OUT, ch, c->g, i);
    emit_vec_push(&out->store, &in);
  }
}

static void emit_add(struct lower_program *p, const struct lower_qadd *l, const struct tile_ctx *c,
                     uint32_t wgt_row0) {
  struct add_emit e = {p, c, wgt_row0, malloc(sizeof(struct loom_uop) * (size_t)c->t.th)};
  LOOM_ASSERT(e.scratch != NULL);
  uint32_t uload = emit_uop_load(p);
  struct loom_insn in = emit_qcfg(l->multiplier, l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
  in.qcfg.par_src = 1; /* the epilogue's bias and multiplier: one for every lane */
  in.qcfg.bias = (int32_t)-((int64_t)l->a_weight * l->a_zero_point + (int64_t)l->b_weight * l->b_zero_point);
  emit_insn(p, &in);
  in = emit_gcfg(1, 0, 0, 0, 0);
  emit_insn(p, &in);
  struct emit_pipe pipe;
  struct emit_chunk ch;
  struct tile_iter it;
  memset(&ch, 0, sizeof ch);
  emit_pipe_begin(&pipe, p, c->t.chunks, c->t.tiles, 1);
  tile_iter_init(&it, c);
  while (tile_iter_next(&it)) {
    add_chunk(&e, &it.ch, &ch);
    emit_pipe_chunk(&pipe, &ch);
  }
  emit_pipe_end(&pipe);
  emit_uop_table(p, uload);
  emit_chunk_free(&ch);
  free(e.scratch);
}

int lower_add(const struct loom_hw_config *cfg, const struct lower_qadd *l, const char *where,
              struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  emit_program_init(out, cfg);
  if (check_add(cfg, l, where, msg)) return -1;
  struct lower_geom g;
  add_geom(cfg, l, &g);
  struct tile_ctx c;
  if (add_search(cfg, &g, &c) != 0)
    return lower_fail(msg, where, "no Add tile fits the %s configuration", cfg->name);
  uint32_t wgt_row0 = add_consts(out, l);
  struct lower_act a = {LOWER_ACT_NCHWC, l->n, l->c, l->h, l->w, cfg->block_in, {0}, 0};
  a.bytes = lower_act_bytes(&a);
  for (int s = LOWER_SEG_IN; s <= LOWER_SEG_OUT; s++) out->act[s] = a, out->seg_bytes[s] = a.bytes;
  emit_add(out, l, &c, wgt_row0);
  out->report.kind = LOWER_KIND_ADD;
  out->report.tiling = c.t;
  out->report.min_bytes = 3 * a.bytes + 2 * loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  emit_report(out);
  return 0;
}
