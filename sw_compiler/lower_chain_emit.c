/*
 * lower_chain_emit.c - the instruction stream of a fused chain (the design
 * is in lower_chain.c) and the estimate the tiling search ranks with.
 *
 * Items k = (band, group) in order; the stream is a sequence of steps s,
 * each
 *
 *   load     prefetch: the input band A (LIN) when its buffer is free, the
 *            weights of coming items into their parity slots (LW1 of item
 *            s + 1, LWd of s; one load of everything when a band is one
 *            group), item s's PAR rows (LP, when they are not all
 *            resident), or the depthwise window from DRAM (LB(s), chains
 *            without the expansion)
 *   compute  PW1(s)             load  MV2(s):     P -> B
 *   compute  DW(s - 1)          load  MV4(s - 1): D -> C, then LW2(s - 1)
 *   compute  PW2(s - 2) (+ the residual tail at a band's end), then STORE
 *
 * Each op names what it must follow (its inputs, and the last reader of
 * the buffer it overwrites); emit_deps.c turns that into tokens.  A move
 * has at least two GEMMs to hide behind: MV2(s) runs beside DW(s - 1),
 * PW2(s - 2) and PW1(s + 1), MV4(s - 1) beside PW2(s - 2) and PW1(s + 1).
 *
 * Micro-op sets are one per buffer combination (emit_uop_set shares equal
 * ones); a band with fewer rows runs a prefix (rows are the outermost
 * micro-op dimension), its blocks laid out densely by the loads.
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower_chain.h"

struct chain_emit {
  struct lower_program *p;
  const struct lower_qchain *c;
  const struct chain_geom *g;
  const struct chain_tiling *t;
  const struct chain_layout *L;
  const struct chain_consts *k;
  struct emit_deps d;
  struct loom_uop *scratch;
  int32_t items, nb;          /* items, bands (all images) */
  int *pw1, *mv2, *dw, *mv4, *pw2, *lw1, *lwd, *lw2, *lp; /* op per item, -1: none */
  int *lin, *last;            /* per band: its input load, the op that ends its compute */
  int res, par0;              /* the residual row's load, the first PAR load */
};

/* Where item k is: flat band, group, image, first output row and rows, and
 * the image rows the band reads. */
struct chain_item {
  int32_t band, grp, img, oy0, rows, ng;
  int32_t ys, nr, pad_t, pad_b;
};

static void item_of(const struct chain_emit *e, int32_t k, struct chain_item *it) {
  const struct chain_tiling *t = e->t;
  it->band = k / t->groups, it->grp = k % t->groups;
  it->img = it->band / t->bands;
  it->oy0 = (it->band % t->bands) * t->th;
  it->rows = e->g->ho - it->oy0 < t->th ? e->g->ho - it->oy0 : t->th;
  it->ng = chain_group_blocks(e->g, t, it->grp);
  chain_band_rows(e->g, it->oy0, it->rows, &it->ys, &it->nr, &it->pad_t, &it->pad_b);
}

static int at(const int *ops, int32_t i, int32_t n) { return i >= 0 && i < n ? ops[i] : -1; }

static struct emit_vec *op_new(struct chain_emit *e, int module, int *out) {
  *out = emit_deps_op(&e->d, module);
  return &e->d.ops[*out].insns;
}

static void push(struct emit_vec *v, struct loom_insn in) { emit_vec_push(v, &in); }

/* ---- micro-op sets ---- */

static uint32_t set_linear(struct chain_emit *e, uint32_t acc, uint32_t inp, uint32_t wgt, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) e->scratch[i] = (struct loom_uop){acc + i, inp + i, wgt};
  return emit_uop_set(e->p, e->scratch, n);
}

static uint32_t set_dw(struct chain_emit *e, uint32_t acc, uint32_t inp, uint32_t wgt, int32_t pass) {
  const struct chain_geom *g = e->g;
  uint32_t n = 0, r0 = (uint32_t)(pass * g->dw_rows * g->dh);
  for (int32_t oy = 0; oy < e->t->th; oy++)
    for (int32_t ox = g->wo - 1; ox >= 0; ox--) /* right to left: the window slides */
      e->scratch[n++] = (struct loom_uop){acc + (uint32_t)(oy * g->wo + ox),
                                          inp + ((uint32_t)(oy * g->sh) + r0) * g->iw + (uint32_t)(ox * g->sw),
                                          wgt + (uint32_t)pass};
  return emit_uop_set(e->p, e->scratch, n);
}

static uint32_t pass_rows(const struct chain_geom *g, int32_t pass) {
  int32_t left = g->kh - pass * g->dw_rows;
  return (uint32_t)(left < g->dw_rows ? left : g->dw_rows);
}

static struct loom_insn qcfg_of(const struct lower_qconv *l, uint32_t par_base) {
  return emit_qcfg_par(par_base, l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
}

/* PAR rows of item k's expansion (its depthwise rows follow). */
static uint32_t par_base(const struct chain_emit *e, int32_t k, const struct chain_item *it) {
  if (e->t->par_resident)
    return (uint32_t)e->g->pb + (e->g->has_pw1 ? 2u : 1u) * (uint32_t)(it->grp * e->t->g);
  return e->L->par_slot[k % 2];
}

/* LP(k): item k's PAR rows into slot k % 2 (when not all resident), after
 * the slot's last reader DW(k - 2). */
static void op_par(struct chain_emit *e, int32_t k) {
  if (e->t->par_resident) return;
  struct chain_item it;
  item_of(e, k, &it);
  uint32_t m = e->g->has_pw1 ? 2u : 1u, x = m * (uint32_t)it.ng;
  push(op_new(e, LOOM_Q_LOAD, &e->lp[k]),
       emit_mem(LOOM_OP_LOAD, LOOM_BUF_PAR, e->L->par_slot[k % 2], LOWER_SEG_CONST,
                e->k->par_row0 + (uint32_t)e->g->pb + m * (uint32_t)(it.grp * e->t->g), 1, x, x));
  emit_deps_after(&e->d, e->lp[k], at(e->dw, k - 2, e->items));
}

/* ---- loads ---- */

static void op_lin(struct chain_emit *e, int32_t band) {
  const struct chain_geom *g = e->g;
  struct chain_item it;
  item_of(e, band * e->t->groups, &it);
  struct emit_vec *v = op_new(e, LOOM_Q_LOAD, &e->lin[band]);
  uint32_t off = (uint32_t)(((int64_t)it.img * g->cb * g->h + it.ys) * g->w);
  push(v, emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, e->L->a_base[band % e->L->na], LOWER_SEG_IN, off, (uint32_t)g->cb,
                   (uint32_t)(it.nr * g->w), (uint32_t)(g->h * g->w)));
  /* A's buffer: free once the expansions (and the residual) of band - na ran */
  int32_t prev = band - (int32_t)e->L->na;
  if (prev >= 0) {
    emit_deps_after(&e->d, e->lin[band], e->pw1[(prev + 1) * e->t->groups - 1]);
    if (g->residual) emit_deps_after(&e->d, e->lin[band], e->pw2[(prev + 1) * e->t->groups - 1]);
  }
}

/* The step at which band's input load can go: after its buffer's readers
 * (the expansions of band - na, at the end of its last group's step, and
 * its residual tail, two steps later). */
static int32_t lin_step(const struct chain_emit *e, int32_t band) {
  return chain_lin_step(e->g, e->t, e->L, band);
}

/* The depthwise window of item k: from P (MV2) or from DRAM (LB). */
static void window_load(struct chain_emit *e, int32_t k, struct emit_vec *v) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  struct chain_item it;
  item_of(e, k, &it);
  for (int32_t b = 0; b < it.ng; b++) {
    uint32_t sram = L->b_base[k % 2] + (uint32_t)b * L->b_blk;
    struct loom_insn in;
    if (g->has_pw1) {
      in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, 0, L->p_base[k % 2] + (uint32_t)(b * it.nr * g->w),
                    (uint32_t)it.nr, (uint32_t)g->cols, (uint32_t)g->w);
      in.mem.src_out = 1;
    } else {
      int32_t blk = it.grp * e->t->g + b;
      uint32_t off = (uint32_t)((((int64_t)it.img * g->eb + blk) * g->h + it.ys) * g->w);
      in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, LOWER_SEG_IN, off, (uint32_t)it.nr, (uint32_t)g->cols,
                    (uint32_t)g->w);
    }
    in.mem.y_pad_top = (uint32_t)it.pad_t, in.mem.y_pad_bottom = (uint32_t)it.pad_b;
    in.mem.x_pad_left = (uint32_t)g->pl, in.mem.x_pad_right = g->iw - (uint32_t)g->pl - (uint32_t)g->cols;
    in.mem.pad_value = e->c->dw->in_zero_point;
    push(v, in);
  }
}

static void lw1(struct chain_emit *e, int32_t k) {
  const struct chain_geom *g = e->g;
  if (!g->has_pw1 || k >= e->items) return;
  struct chain_item it;
  item_of(e, k, &it);
  uint32_t x = (uint32_t)(it.ng * g->cb);
  push(op_new(e, LOOM_Q_LOAD, &e->lw1[k]), emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, e->L->w1[k % 2], LOWER_SEG_CONST,
                                                    e->k->wgt_row0 + (uint32_t)(it.grp * e->t->g * g->cb), 1, x, x));
  emit_deps_after(&e->d, e->lw1[k], at(e->pw1, k - 2, e->items));
}

static void op_weights(struct chain_emit *e, int32_t s) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  uint32_t w0 = e->k->wgt_row0;
  if (e->t->wgt_resident) {
    if (s != 0) return;
    int op;
    struct emit_vec *v = op_new(e, LOOM_Q_LOAD, &op);
    uint32_t n = (uint32_t)(g->eb * g->cb + g->eb * g->passes + g->pb * g->eb);
    push(v, emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, 0, LOWER_SEG_CONST, w0, 1, n, n));
    for (int32_t k = 0; k < e->items; k++) e->lw1[k] = e->lwd[k] = e->lw2[k] = op;
    return;
  }
  /* LW1(k) at step k - 1 (the first one at step 0), LWd(k) at step k (LW2(k)
   * at step k + 1, op_lw2): each after the previous user of its slot, the
   * sooner needed first */
  if (s == 0) lw1(e, 0);
  struct chain_item it;
  if (s < e->items) {
    item_of(e, s, &it);
    uint32_t x = (uint32_t)(it.ng * g->passes);
    push(op_new(e, LOOM_Q_LOAD, &e->lwd[s]),
         emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, L->wd[s % 2], LOWER_SEG_CONST,
                  w0 + (uint32_t)(g->eb * g->cb + it.grp * e->t->g * g->passes), 1, x, x));
    emit_deps_after(&e->d, e->lwd[s], at(e->dw, s - 2, e->items));
  }
  lw1(e, s + 1);
}

/* LW2(s - 1), after the move of step s: its slot's last reader PW2(s - 3)
 * ends step s - 1, and the loads in front of it must not wait for that. */
static void op_lw2(struct chain_emit *e, int32_t s) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  uint32_t w0 = e->k->wgt_row0;
  struct chain_item it;
  int32_t k = s - 1;
  if (!e->t->wgt_resident && k >= 0 && k < e->items) {
    item_of(e, k, &it);
    push(op_new(e, LOOM_Q_LOAD, &e->lw2[k]),
         emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, L->w2[k % 2], LOWER_SEG_CONST,
                  w0 + (uint32_t)(g->eb * g->cb + g->eb * g->passes + it.grp * e->t->g), (uint32_t)g->pb,
                  (uint32_t)it.ng, (uint32_t)g->eb));
    emit_deps_after(&e->d, e->lw2[k], at(e->pw2, k - 2, e->items));
  }
}

/* ---- compute ---- */

static void op_pw1(struct chain_emit *e, int32_t k) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  struct chain_item it;
  item_of(e, k, &it);
  struct emit_vec *v = op_new(e, LOOM_Q_COMPUTE, &e->pw1[k]);
  push(v, qcfg_of(e->c->pw1, par_base(e, k, &it)));
  uint32_t blk = (uint32_t)(it.nr * g->w), a = L->a_base[it.band % L->na];
  uint32_t b = set_linear(e, L->p_base[k % 2], a, L->w1[k % 2], L->a_blk);
  struct loom_insn in =
      emit_gemm(b, b + blk, (uint32_t)g->cb, (uint32_t)it.ng, 0, blk, blk, 0, 1, (uint32_t)g->cb);
  in.gemm.first = in.gemm.last = 1;
  push(v, in);
  emit_deps_after(&e->d, e->pw1[k], e->lin[it.band]);
  emit_deps_after(&e->d, e->pw1[k], e->par0);
  emit_deps_after(&e->d, e->pw1[k], e->lp[k]);
  emit_deps_after(&e->d, e->pw1[k], e->lw1[k]);
  emit_deps_after(&e->d, e->pw1[k], at(e->mv2, k - 2, e->items)); /* P's buffer read */
}

static void op_dw(struct chain_emit *e, int32_t k) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  struct chain_item it;
  item_of(e, k, &it);
  struct emit_vec *v = op_new(e, LOOM_Q_COMPUTE, &e->dw[k]);
  push(v, qcfg_of(e->c->dw, par_base(e, k, &it) + (g->has_pw1 ? (uint32_t)it.ng : 0)));
  for (int32_t pass = 0; pass < g->passes; pass++) {
    if (g->passes > 1)
      push(v, emit_gcfg(1, pass_rows(g, pass), (uint32_t)g->kw, (uint32_t)g->dh * g->iw, (uint32_t)g->dwl));
    uint32_t b = set_dw(e, L->d_base[k % 2], L->b_base[k % 2], L->wd[k % 2], pass);
    struct loom_insn in = emit_gemm(b, b + (uint32_t)(it.rows * g->wo), 1, (uint32_t)it.ng, 0, L->to, 0, L->b_blk,
                                    0, (uint32_t)g->passes);
    in.gemm.dw = 1;
    in.gemm.first = pass == 0;
    in.gemm.last = pass == g->passes - 1;
    push(v, in);
  }
  emit_deps_after(&e->d, e->dw[k], e->mv2[k]);
  emit_deps_after(&e->d, e->dw[k], e->par0);
  emit_deps_after(&e->d, e->dw[k], e->lp[k]);
  emit_deps_after(&e->d, e->dw[k], e->lwd[k]);
  emit_deps_after(&e->d, e->dw[k], at(e->mv4, k - 2, e->items)); /* D's buffer read */
}

/* After the projection of a band's last group: EPI (the projection's
 * output q into ACC), MUL a_weight, QCFG of the Add, the GEMM adding
 * b_weight x the input rows (stride 1: the band's own rows of A) with
 * `last`, as lower_conv_emit.c's residual_tail. */
static void residual_tail(struct chain_emit *e, const struct chain_item *it, struct emit_vec *v) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  const struct lower_qresidual *r = e->c->pw2->residual;
  uint32_t q = L->q_base[it->band % 2], n = (uint32_t)(it->rows * g->wo), blk = (uint32_t)(it->nr * g->w);
  push(v, qcfg_of(e->c->pw2, 0));
  uint32_t ops[2] = {LOOM_ALU_EPI, LOOM_ALU_MUL};
  int32_t imm[2] = {0, r->a_weight};
  for (int i = 0; i < 2; i++) {
    struct loom_uop u = {q, 0, 0};
    uint32_t b = emit_uop_set(e->p, &u, 1);
    struct loom_insn in = emit_alu(ops[i], b, b + 1, n, (uint32_t)g->pb, 1, L->to, 0, 0);
    in.alu.use_imm = 1, in.alu.imm = imm[i];
    push(v, in);
  }
  int64_t bias = -((int64_t)r->a_weight * e->c->pw2->out_zero_point + (int64_t)r->b_weight * r->b_zero_point);
  struct loom_insn in = emit_qcfg(r->multiplier, r->shift, r->out_zero_point, r->clamp_lo, r->clamp_hi, r->round_even);
  in.qcfg.par_src = 1, in.qcfg.bias = (int32_t)bias;
  push(v, in);
  uint32_t a = L->a_base[it->band % L->na] + (uint32_t)((it->oy0 - it->ys) * g->w);
  uint32_t b = set_linear(e, q, a, L->res_row, L->to);
  in = emit_gemm(b, b + n, 1, (uint32_t)g->pb, 0, L->to, 0, blk, 0, 0);
  in.gemm.last = 1;
  push(v, in);
}

static void op_pw2(struct chain_emit *e, int32_t k) {
  const struct chain_geom *g = e->g;
  const struct chain_layout *L = e->L;
  struct chain_item it;
  item_of(e, k, &it);
  int last = it.grp == e->t->groups - 1;
  struct emit_vec *v = op_new(e, LOOM_Q_COMPUTE, &e->pw2[k]);
  if (last && !g->residual) push(v, qcfg_of(e->c->pw2, 0));
  uint32_t n = (uint32_t)(it.rows * g->wo), q = L->q_base[it.band % 2];
  uint32_t b = set_linear(e, q, L->c_base[k % 2], L->w2[k % 2], L->to);
  uint32_t stride = e->t->wgt_resident ? (uint32_t)g->eb : (uint32_t)it.ng;
  struct loom_insn in = emit_gemm(b, b + n, (uint32_t)it.ng, (uint32_t)g->pb, 0, L->to, n, 0, 1, stride);
  in.gemm.first = it.grp == 0;
  in.gemm.last = last && !g->residual;
  push(v, in);
  if (last && g->residual) residual_tail(e, &it, v);
  emit_deps_after(&e->d, e->pw2[k], e->mv4[k]);
  emit_deps_after(&e->d, e->pw2[k], e->par0);
  emit_deps_after(&e->d, e->pw2[k], e->lw2[k]);
  if (g->residual) emit_deps_after(&e->d, e->pw2[k], e->res);
  if (it.grp == 0 && it.band >= 2) emit_deps_after(&e->d, e->pw2[k], e->last[it.band - 2]); /* Q stored */
  if (!last) return;
  /* the band's store */
  int st;
  v = op_new(e, LOOM_Q_STORE, &st);
  uint32_t off = (uint32_t)(((int64_t)it.img * g->pb * g->ho + it.oy0) * g->wo);
  if (it.rows == e->t->th) {
    push(v, emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, q, LOWER_SEG_OUT, off, (uint32_t)g->pb, L->to,
                     (uint32_t)(g->ho * g->wo)));
  } else {
    for (int32_t o = 0; o < g->pb; o++)
      push(v, emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, q + (uint32_t)o * L->to, LOWER_SEG_OUT,
                       off + (uint32_t)(o * g->ho * g->wo), 1, n, n));
  }
  emit_deps_after(&e->d, st, e->pw2[k]);
  e->last[it.band] = st;
}

/* MV4(k): the depthwise output D -> C, dense (block stride rows x wo). */
static void op_mv4(struct chain_emit *e, int32_t k) {
  struct chain_item it;
  item_of(e, k, &it);
  struct emit_vec *v = op_new(e, LOOM_Q_LOAD, &e->mv4[k]);
  struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, e->L->c_base[k % 2], 0, e->L->d_base[k % 2],
                                 (uint32_t)it.ng, (uint32_t)(it.rows * e->g->wo), e->L->to);
  in.mem.src_out = 1;
  push(v, in);
  emit_deps_after(&e->d, e->mv4[k], e->dw[k]);
  emit_deps_after(&e->d, e->mv4[k], at(e->pw2, k - 2, e->items)); /* C's buffer read */
}

/* ---- the job ---- */

/* The GEMM registers (compute prologue), and the first load op: the PAR
 * rows of the projection (every PAR row when they fit). */
static void prologue(struct chain_emit *e) {
  const struct chain_geom *g = e->g;
  struct loom_insn in = emit_gcfg(1, pass_rows(g, 0), (uint32_t)g->kw, (uint32_t)g->dh * g->iw, (uint32_t)g->dwl);
  emit_insn(e->p, &in);
  uint32_t rows = e->t->par_resident ? (uint32_t)g->pb + (g->has_pw1 ? 2u : 1u) * (uint32_t)g->eb : (uint32_t)g->pb;
  push(op_new(e, LOOM_Q_LOAD, &e->par0),
       emit_mem(LOOM_OP_LOAD, LOOM_BUF_PAR, 0, LOWER_SEG_CONST, e->k->par_row0, 1, rows, rows));
}

void chain_emit(struct lower_program *p, const struct lower_qchain *c, const struct chain_geom *g,
                const struct chain_tiling *t, const struct chain_layout *L, const struct chain_consts *k) {
  struct chain_emit e = {.p = p, .c = c, .g = g, .t = t, .L = L, .k = k, .res = -1, .par0 = -1};
  e.nb = g->n * t->bands, e.items = e.nb * t->groups;
  int **item_ops[] = {&e.pw1, &e.mv2, &e.dw, &e.mv4, &e.pw2, &e.lw1, &e.lwd, &e.lw2, &e.lp};
  for (size_t i = 0; i < sizeof item_ops / sizeof *item_ops; i++) {
    *item_ops[i] = malloc(sizeof(int) * (size_t)e.items);
    LOOM_ASSERT(*item_ops[i]);
    for (int32_t j = 0; j < e.items; j++) (*item_ops[i])[j] = -1;
  }
  e.lin = malloc(sizeof(int) * (size_t)e.nb), e.last = malloc(sizeof(int) * (size_t)e.nb);
  uint32_t scratch = L->a_blk > L->to ? L->a_blk : L->to;
  e.scratch = malloc(sizeof *e.scratch * (scratch + 1));
  LOOM_ASSERT(e.lin && e.last && e.scratch);
  for (int32_t b = 0; b < e.nb; b++) e.lin[b] = e.last[b] = -1;
  emit_deps_init(&e.d);
  uint32_t uload = emit_uop_load(p);
  prologue(&e);
  int32_t next_lin = 0;
  for (int32_t s = 0; s < e.items + 2; s++) {
    while (g->has_pw1 && next_lin < e.nb && lin_step(&e, next_lin) <= s) op_lin(&e, next_lin++);
    if (s < e.items) op_par(&e, s);
    op_weights(&e, s);
    if (s == 0 && g->residual) {
      push(op_new(&e, LOOM_Q_LOAD, &e.res),
           emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, L->res_row, LOWER_SEG_CONST, k->res_row, 1, 1, 1));
    }
    if (!g->has_pw1 && s < e.items) { /* LB(s): B's buffer free once DW(s - 2) ran */
      window_load(&e, s, op_new(&e, LOOM_Q_LOAD, &e.mv2[s]));
      emit_deps_after(&e.d, e.mv2[s], at(e.dw, s - 2, e.items));
    }
    if (g->has_pw1 && s < e.items) {
      op_pw1(&e, s);
      window_load(&e, s, op_new(&e, LOOM_Q_LOAD, &e.mv2[s]));
      emit_deps_after(&e.d, e.mv2[s], e.pw1[s]);
      emit_deps_after(&e.d, e.mv2[s], at(e.dw, s - 2, e.items)); /* B's buffer read */
    }
    if (s >= 1 && s - 1 < e.items) op_dw(&e, s - 1), op_mv4(&e, s - 1);
    op_lw2(&e, s);
    if (s >= 2) op_pw2(&e, s - 2);
  }
  emit_deps_finish(&e.d, p);
  emit_uop_table(p, uload);
  emit_deps_free(&e.d);
  for (size_t i = 0; i < sizeof item_ops / sizeof *item_ops; i++) free(*item_ops[i]);
  free(e.lin), free(e.last), free(e.scratch);
}

/* ---- the estimate ---- */

/* Per item: compute = its three GEMMs (and the tail), load = its moves and
 * prefetches; a step takes the longer of the two, the bus bounds the whole. */
uint64_t chain_estimate(const struct loom_hw_config *cfg, const struct chain_geom *g, const struct chain_tiling *t,
                        const struct chain_layout *L) {
  uint64_t rb = loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0), wrow = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  uint64_t prow = loom_hw_row_bytes(cfg, LOOM_BUF_PAR, 0), m = g->has_pw1 ? 2 : 1;
  uint64_t steps = 0, bus = 0, fill = 0;
  for (int32_t band = 0; band < t->bands; band++) {
    int32_t oy0 = band * t->th, rows = g->ho - oy0 < t->th ? g->ho - oy0 : t->th, ys, nr, pt, pb;
    chain_band_rows(g, oy0, rows, &ys, &nr, &pt, &pb);
    uint64_t pix = (uint64_t)rows * (uint64_t)g->wo, ipix = (uint64_t)nr * (uint64_t)g->w;
    uint64_t win = (uint64_t)(pt + nr + pb) * g->iw;
    uint64_t lin = g->has_pw1 ? cost_dma(cfg, ipix * rb, (uint64_t)g->cb, 0) : 0;
    uint64_t store = cost_dma(cfg, pix * rb, (uint64_t)g->pb, 0);
    uint64_t tail = g->residual ? 2 * cost_alu(pix * (uint64_t)g->pb, 0) + cost_gemm(pix * (uint64_t)g->pb) + 3 : 0;
    bus += (uint64_t)g->cb * ipix * rb + (uint64_t)g->pb * pix * rb;
    /* the first group, the middle ones (alike), the last one */
    int32_t kinds[3] = {0, 1, t->groups - 1};
    uint64_t count[3] = {1, t->groups > 2 ? (uint64_t)(t->groups - 2) : 0, t->groups > 1 ? 1 : 0};
    for (int kind = 0; kind < 3; kind++) {
      if (!count[kind]) continue;
      int32_t grp = kinds[kind];
      uint64_t ng = (uint64_t)chain_group_blocks(g, t, grp), times = count[kind];
      uint64_t comp = 3, load = 0, b = 0;
      if (g->has_pw1) comp += cost_gemm(ipix * (uint64_t)g->cb * ng), load += ng * cost_onchip(win);
      else load += ng * cost_dma(cfg, (uint64_t)g->cols * rb, (uint64_t)nr, win - (uint64_t)g->cols * nr),
           b += ng * (uint64_t)g->cols * (uint64_t)nr * rb;
      for (int32_t pass = 0; pass < g->passes; pass++) {
        uint32_t kh = (uint32_t)(g->kh - pass * g->dw_rows < g->dw_rows ? g->kh - pass * g->dw_rows : g->dw_rows);
        uint32_t step = g->sw % g->dwl ? (uint32_t)g->kw : (uint32_t)(g->sw / g->dwl);
        comp += cost_dw((uint64_t)rows, (uint64_t)g->wo, ng, kh, (uint32_t)g->kw, step, (uint32_t)g->dh * g->iw,
                        (uint32_t)g->dwl) + 1;
      }
      comp += cost_gemm(pix * ng * (uint64_t)g->pb);
      load += cost_onchip(ng * pix);
      if (!t->par_resident) load += cost_dma(cfg, m * ng * prow, 1, 0), b += m * ng * prow;
      if (!t->wgt_resident) {
        uint64_t w = ng * (uint64_t)(g->cb + g->passes + g->pb);
        load += cost_dma(cfg, ng * wrow, (uint64_t)g->pb, 0) + 2 * cost_dma(cfg, ng * (uint64_t)(g->cb + g->passes) * wrow, 1, 0);
        b += w * wrow;
      }
      if (grp == 0) load += lin;
      if (grp == 0 && band >= (int32_t)L->na && chain_lin_step(g, t, L, band) == band * t->groups)
        comp += lin; /* the input rows load only once the previous ones are done with */
      if (grp == t->groups - 1) comp += tail, load = load > store ? load : store;
      steps += times * (comp > load ? comp : load);
      bus += times * b;
      if (band == 0 && grp == 0) fill = lin + load + comp + store;
    }
  }
  steps *= (uint64_t)g->n, bus *= (uint64_t)g->n;
  if (t->wgt_resident) {
    uint64_t w = (uint64_t)(g->eb * g->cb + g->eb * g->passes + g->pb * g->eb) * wrow;
    bus += w, fill += cost_dma(cfg, w, 1, 0);
  }
  uint64_t bus_cycles = bus / ((uint64_t)cfg->bus_bits / 8);
  return (steps > bus_cycles ? steps : bus_cycles) + fill;
}
