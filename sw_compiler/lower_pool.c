/*
 * lower_pool.c - max pooling on the ALU; average pooling through the
 * convolution path.
 *
 * Average pooling (and GlobalAveragePool, the window of the whole image) is
 * a depthwise convolution whose diagonal weights are all one: the GEMM core
 * sums the window, the input zero point becomes the bias -kk * zp (padding
 * loads the zero point, so it counts as a real zero: count_include_pad),
 * and REQUANT with multiplier / 2^shift = in_scale / (out_scale * kk)
 * divides.  Its loads then run on the load module, overlapped with compute,
 * which the ALU path below cannot do.
 *
 * Max pooling has no GEMM form.  Each tile of th x tw outputs and tcb
 * channel blocks uses one ACC half: the input window of every block (LOAD
 * ACC with src_int8, padding -128 so it never wins) followed by the output
 * rows.  Every ALU micro-op here has a vector operand, i.e. costs two
 * cycles (the ACC buffer has one read port), so the lowering minimizes
 * micro-ops.  When the window is separable in place (below), per tile:
 *
 *   ALU MAX  H(kw), kw = k_w-1 .. 1   win[yy][ox*s_w] = max(., win[yy][ox*s_w + kw])
 *                                     for every window row yy (in place)
 *   ALU MOV  V(0)                     out[oy][ox] = win[oy*s_h][ox*s_w]
 *   ALU MAX  V(kh), kh >= 1           out[oy][ox] = max(., win[oy*s_h + kh][ox*s_w])
 *
 * about (k_w - 1) * ih / th + k_h micro-ops per output (7.1 for 3x3/2
 * with th = 19) instead of k_h * k_w (9).  In place is exact when no pass
 * reads a column an earlier pass wrote: the passes run kw downwards and,
 * within one, outputs left to right, so a source column ox*s_w + kw that
 * is some later output's column ox'*s_w is still unwritten exactly when
 * kw is the first pass's tap, i.e. when no kw in 1..k_w-2 is a multiple of
 * s_w (k_w <= s_w + 1 suffices; ResNet's 3x3/2 qualifies).  Otherwise,
 * with T(off) the micro-op set {dst = out + oy*tw + ox,
 * src = in + off + (oy*s_h)*iw + ox*s_w} over the tile's pixels:
 *
 *   ALU MOV  T(0)                 io = blocks                      tap (0, 0)
 *   ALU MAX  T(1)                 io = blocks, ii = k_w - 1        taps (0, 1..)
 *   ALU MAX  T(kh * iw), kh >= 1  io = blocks, ii = k_w            taps (kh, 0..)
 *
 * one ALU micro-op per output and tap.  In both forms consecutive
 * micro-ops write different rows.  LOAD ACC belongs to the compute
 * module, so loads do not overlap the ALU; the store of tile o-1 does
 * (two ACC halves, C2S / S2C tokens, no load-module chunks).
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

static int is_int8(int32_t v) { return v >= -128 && v <= 127; }

static int check_pool(const struct loom_hw_config *cfg, const struct lower_qpool *l,
                      const char *where, char *msg) {
  if (cfg->batch != 1 || cfg->block_in != cfg->block_out)
    return lower_fail(msg, where, "configuration %s is not supported (batch 1, square blocks)", cfg->name);
  if (l->kind < 0 || l->kind >= LOWER_POOL_COUNT) return lower_fail(msg, where, "unknown pooling kind");
  if (l->n < 1 || l->c < 1 || l->in_h < 1 || l->in_w < 1 || l->k_h < 1 || l->k_w < 1 ||
      l->stride_h < 1 || l->stride_w < 1)
    return lower_fail(msg, where, "empty tensor, window or stride");
  if (l->pad_t < 0 || l->pad_l < 0 || l->pad_b < 0 || l->pad_r < 0 || l->pad_t >= l->k_h ||
      l->pad_b >= l->k_h || l->pad_l >= l->k_w || l->pad_r >= l->k_w || l->pad_t > 7 ||
      l->pad_b > 7 || l->pad_l > 7 || l->pad_r > 7)
    return lower_fail(msg, where, "padding must be in 0..min(7, window - 1)");
  if (l->in_h + l->pad_t + l->pad_b < l->k_h || l->in_w + l->pad_l + l->pad_r < l->k_w)
    return lower_fail(msg, where, "window larger than the padded input");
  if (l->kind == LOWER_POOL_AVG &&
      (l->shift > 63 || !is_int8(l->in_zero_point) || !is_int8(l->out_zero_point) ||
       !is_int8(l->clamp_lo) || !is_int8(l->clamp_hi) || l->round_even > 1))
    return lower_fail(msg, where, "bad requantization parameters");
  return 0;
}

/* Average pooling = depthwise convolution with weights 1. */
static int lower_avgpool(const struct loom_hw_config *cfg, const struct lower_qpool *l,
                         const char *where, struct lower_program *out, char *msg) {
  size_t kk = (size_t)l->k_h * (size_t)l->k_w;
  int8_t *w = malloc((size_t)l->c * kk);
  int32_t *m = malloc(sizeof(int32_t) * (size_t)l->c);
  LOOM_ASSERT(w && m);
  memset(w, 1, (size_t)l->c * kk);
  for (int32_t i = 0; i < l->c; i++) m[i] = l->multiplier;
  struct lower_qconv c = {
      .n = l->n, .in_c = l->c, .in_h = l->in_h, .in_w = l->in_w, .out_c = l->c, .k_h = l->k_h,
      .k_w = l->k_w, .stride_h = l->stride_h, .stride_w = l->stride_w, .pad_t = l->pad_t,
      .pad_l = l->pad_l, .pad_b = l->pad_b, .pad_r = l->pad_r, .dil_h = 1, .dil_w = 1,
      .groups = l->c, .weights = w, .multiplier = m, .shift = l->shift,
      .in_zero_point = l->in_zero_point, .out_zero_point = l->out_zero_point,
      .clamp_lo = l->clamp_lo, .clamp_hi = l->clamp_hi, .round_even = l->round_even};
  int rc = lower_conv_kind(cfg, &c, LOWER_KIND_AVGPOOL, where, out, msg);
  free(w), free(m);
  return rc;
}

/* ---- max pooling ---- */

static void pool_geom(const struct loom_hw_config *cfg, const struct lower_qpool *l, struct lower_geom *g) {
  memset(g, 0, sizeof *g);
  g->mode = LOWER_GEMM_DIAG;
  g->n = l->n, g->in_h = l->in_h, g->in_w = l->in_w;
  g->k_h = l->k_h, g->k_w = l->k_w, g->stride_h = l->stride_h, g->stride_w = l->stride_w;
  g->dil_h = g->dil_w = 1;
  g->pad_t = l->pad_t, g->pad_l = l->pad_l, g->pad_b = l->pad_b, g->pad_r = l->pad_r;
  g->out_h = (l->in_h + l->pad_t + l->pad_b - l->k_h) / l->stride_h + 1;
  g->out_w = (l->in_w + l->pad_l + l->pad_r - l->k_w) / l->stride_w + 1;
  g->cib = g->cob = tile_ceil_div(l->c, cfg->block_out);
}

/* The in-place separable form is exact (see the top of the file). */
static int pool_separable(const struct lower_geom *g) {
  if (g->k_w < 2 || g->stride_h > g->k_h) return 0;
  for (int32_t kw = 1; kw <= g->k_w - 2; kw++)
    if (kw % g->stride_w == 0) return 0;
  return 1;
}

/* Window rows a tile of `rows` output rows reads. */
static uint32_t pool_rows_in(const struct lower_geom *g, int32_t rows) {
  return (uint32_t)((rows - 1) * g->stride_h + g->k_h);
}

/* ACC layout of a max-pooling tiling; 0 when it fits. */
static int pool_layout(const struct loom_hw_config *cfg, const struct lower_geom *g,
                       struct lower_tiling *t, struct tile_layout *L) {
  memset(L, 0, sizeof *L);
  t->tci = t->tco;
  t->n_rt = tile_ceil_div(g->out_h, t->th), t->n_ct = tile_ceil_div(g->out_w, t->tw);
  t->n_cot = tile_ceil_div(g->cob, t->tco), t->n_cic = 1;
  t->tiles = t->chunks = (uint32_t)(g->n * t->n_rt * t->n_ct * t->n_cot);
  L->acc_half = (uint32_t)cfg->acc_rows / 2;
  L->acc_base[1] = L->acc_half;
  L->ih = (uint32_t)((t->th - 1) * g->stride_h + g->k_h);
  L->iw = (uint32_t)((t->tw - 1) * g->stride_w + g->k_w);
  L->inp_block = L->ih * L->iw;
  L->tile_pix = (uint32_t)(t->th * t->tw);
  L->kk = (uint32_t)(g->k_h * g->k_w);
  if (pool_separable(g))
    t->uops = 2 * ((uint32_t)(g->k_w - 1) * L->ih * (uint32_t)t->tw + (uint32_t)g->k_h * L->tile_pix);
  else
    t->uops = 2 * (uint32_t)(g->k_h + 1) * L->tile_pix;
  uint64_t need = (uint64_t)t->tco * (L->inp_block + L->tile_pix);
  return need <= L->acc_half && t->uops <= (uint32_t)cfg->uop_rows && L->inp_block <= 2047 &&
                 L->tile_pix <= 2047
             ? 0
             : -1;
}

static uint64_t pool_tile_cost(const struct loom_hw_config *cfg, const struct tile_ctx *c,
                               const struct tile_chunk *ch, uint64_t *store, uint64_t *bytes) {
  struct tile_window w;
  tile_window(c->g, ch->oy0, ch->rows, ch->ox0, c->t.tw, &w);
  uint64_t pix = (uint64_t)ch->rows * (uint64_t)c->t.tw * (uint64_t)ch->nco;
  uint64_t pad = (uint64_t)(w.pt + w.ny + w.pb) * c->L.iw - (uint64_t)w.nx * (uint64_t)w.ny;
  uint64_t row = (uint64_t)w.nx * loom_hw_row_bytes(cfg, LOOM_BUF_ACC, 1);
  uint64_t cyc = (uint64_t)ch->nco * cost_dma(cfg, row, (uint64_t)w.ny, pad);
  if (pool_separable(c->g)) {
    uint64_t h = (uint64_t)pool_rows_in(c->g, ch->rows) * (uint64_t)c->t.tw * (uint64_t)ch->nco;
    cyc += (uint64_t)(c->g->k_w - 1) * cost_alu(h, 1) + (uint64_t)c->g->k_h * cost_alu(pix, 1);
  } else {
    cyc += cost_alu(pix, 1) + (uint64_t)c->g->k_h * cost_alu(pix * (uint64_t)(c->g->k_w), 1);
  }
  uint64_t orow = (uint64_t)c->t.tw * loom_hw_row_bytes(cfg, LOOM_BUF_OUT, 0);
  *store = (uint64_t)ch->nco * cost_dma(cfg, orow, (uint64_t)ch->rows, 0);
  *bytes += (uint64_t)ch->nco * (row * (uint64_t)w.ny + orow * (uint64_t)ch->rows);
  return cyc;
}

static uint64_t pool_cost(const struct tile_ctx *c) {
  struct cost_pipe p;
  struct tile_iter it;
  cost_pipe_init(&p, 0);
  tile_iter_init(&it, c);
  while (tile_iter_next(&it)) {
    uint64_t store;
    uint64_t comp = pool_tile_cost(c->cfg, c, &it.ch, &store, &p.bus_bytes);
    cost_pipe_chunk(&p, c->cfg, 0, 0, comp, 1, 1, store, 0);
  }
  return cost_pipe_total(c->cfg, &p);
}

/* Cheapest (blocks, rows, columns) per tile.  Narrow columns are tried
 * too: a taller tile carries less window halo per output row.  Per
 * (blocks, columns) only the tallest few row counts that fit are costed
 * (shorter ones only add halo), which keeps the search to a few ms. */
static int pool_search(const struct loom_hw_config *cfg, const struct lower_geom *g, struct tile_ctx *best) {
  int32_t bs[TILE_SIZES_MAX], hs[TILE_SIZES_MAX], ws[TILE_SIZES_MAX];
  int32_t nb = tile_distinct_sizes(g->cob, bs), nh = tile_distinct_sizes(g->out_h, hs);
  int32_t nw = tile_distinct_sizes(g->out_w, ws);
  int found = 0;
  for (int32_t a = 0; a < nb; a++)
    for (int32_t c = 0; c < nw; c++)
      for (int32_t b = 0, tried = 0; b < nh && tried < 3; b++) {
        struct tile_ctx x = {cfg, g, {0}, {0}};
        x.t.tco = bs[a], x.t.th = hs[b], x.t.tw = ws[c];
        if (pool_layout(cfg, g, &x.t, &x.L) != 0) continue;
        tried++;
        x.t.est_cycles = pool_cost(&x);
        if (!found || x.t.est_cycles < best->t.est_cycles) *best = x, found = 1;
      }
  return found ? 0 : -1;
}

struct pool_emit {
  struct lower_program *p;
  const struct tile_ctx *c;
  struct loom_uop *scratch;
};

/* T(off): the tile's pixels, reading the input window at offset `off`. */
static uint32_t pool_set(struct pool_emit *e, uint32_t acc, uint32_t off) {
  const struct tile_ctx *c = e->c;
  uint32_t out = acc + (uint32_t)c->t.tco * c->L.inp_block, n = 0;
  for (int32_t oy = 0; oy < c->t.th; oy++)
    for (int32_t ox = 0; ox < c->t.tw; ox++) {
      struct loom_uop *u = &e->scratch[n++];
      u->acc = out + (uint32_t)(oy * c->t.tw + ox);
      u->inp = acc + off + (uint32_t)(oy * c->g->stride_h) * c->L.iw + (uint32_t)(ox * c->g->stride_w);
      u->wgt = 0;
    }
  return emit_uop_set(e->p, e->scratch, n);
}

static void pool_loads(struct pool_emit *e, const struct tile_chunk *ch, uint32_t acc, struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  struct tile_window w;
  tile_window(g, ch->oy0, ch->rows, ch->ox0, e->c->t.tw, &w);
  for (int32_t i = 0; i < ch->nco; i++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cib + ch->co0 + i) * g->in_h + w.y0) * g->in_w + w.x0);
    struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_ACC, acc + (uint32_t)i * e->c->L.inp_block,
                                   LOWER_SEG_IN, off, (uint32_t)w.ny, (uint32_t)w.nx, (uint32_t)g->in_w);
    in.mem.src_int8 = 1;
    in.mem.pad_value = -128;
    in.mem.y_pad_top = (uint32_t)w.pt, in.mem.y_pad_bottom = (uint32_t)w.pb;
    in.mem.x_pad_left = (uint32_t)w.pl, in.mem.x_pad_right = (uint32_t)w.pr;
    emit_vec_push(v, &in);
  }
}

/* H(kw): every window row yy, output column ox: dst = win[yy][ox*s_w],
 * src = dst + kw (yy outermost, so a short tile runs a prefix). */
static uint32_t pool_hset(struct pool_emit *e, uint32_t acc, uint32_t kw) {
  const struct tile_ctx *c = e->c;
  uint32_t n = 0;
  for (uint32_t yy = 0; yy < c->L.ih; yy++)
    for (int32_t ox = 0; ox < c->t.tw; ox++) {
      struct loom_uop *u = &e->scratch[n++];
      u->acc = acc + yy * c->L.iw + (uint32_t)(ox * c->g->stride_w);
      u->inp = u->acc + kw;
      u->wgt = 0;
    }
  return emit_uop_set(e->p, e->scratch, n);
}

/* The separable form's row maxima, in place in the window rows. */
static void pool_alu_rows(struct pool_emit *e, const struct tile_chunk *ch, uint32_t acc,
                          struct emit_vec *v) {
  const struct tile_ctx *c = e->c;
  uint32_t nh = pool_rows_in(c->g, ch->rows) * (uint32_t)c->t.tw, I = c->L.inp_block;
  if (!pool_separable(c->g)) return;
  for (int32_t kw = c->g->k_w - 1; kw >= 1; kw--) {
    uint32_t b = pool_hset(e, acc, (uint32_t)kw);
    struct loom_insn in = emit_alu(LOOM_ALU_MAX, b, b + nh, (uint32_t)ch->nco, 1, I, 0, I, 0);
    emit_vec_push(v, &in);
  }
}

/* What writes the output rows: the column maxima of the separable form,
 * or every tap of the other one. */
static void pool_alu_out(struct pool_emit *e, const struct tile_chunk *ch, uint32_t acc,
                         struct emit_vec *v) {
  const struct tile_ctx *c = e->c;
  uint32_t n = (uint32_t)(ch->rows * c->t.tw), blocks = (uint32_t)ch->nco;
  uint32_t A = c->L.tile_pix, I = c->L.inp_block;
  if (pool_separable(c->g)) {
    for (int32_t kh = 0; kh < c->g->k_h; kh++) {
      uint32_t b = pool_set(e, acc, (uint32_t)kh * c->L.iw);
      struct loom_insn in = emit_alu(kh ? LOOM_ALU_MAX : LOOM_ALU_MOV, b, b + n, blocks, 1, A, 0, I, 0);
      emit_vec_push(v, &in);
    }
    return;
  }
  uint32_t b = pool_set(e, acc, 0);
  struct loom_insn in = emit_alu(LOOM_ALU_MOV, b, b + n, blocks, 1, A, 0, I, 0);
  emit_vec_push(v, &in);
  if (c->g->k_w > 1) {
    b = pool_set(e, acc, 1);
    in = emit_alu(LOOM_ALU_MAX, b, b + n, blocks, (uint32_t)c->g->k_w - 1, A, 0, I, 1);
    emit_vec_push(v, &in);
  }
  for (int32_t kh = 1; kh < c->g->k_h; kh++) {
    b = pool_set(e, acc, (uint32_t)kh * c->L.iw);
    in = emit_alu(LOOM_ALU_MAX, b, b + n, blocks, (uint32_t)c->g->k_w, A, 0, I, 1);
    emit_vec_push(v, &in);
  }
}

static void pool_stores(struct pool_emit *e, const struct tile_chunk *ch, uint32_t acc, struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  uint32_t out = acc + (uint32_t)e->c->t.tco * e->c->L.inp_block, tw = (uint32_t)e->c->t.tw;
  for (int32_t i = 0; i < ch->nco; i++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + i) * g->out_h + ch->oy0) * g->out_w + ch->ox0);
    struct loom_insn in = emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, out + (uint32_t)i * e->c->L.tile_pix,
                                   LOWER_SEG_OUT, off, (uint32_t)ch->rows, tw, (uint32_t)g->out_w);
    emit_vec_push(v, &in);
  }
}

/* Appends v to the program, its first instruction popping and its last
 * pushing the given tokens. */
static void emit_wired(struct lower_program *p, struct emit_vec *v, int pop_next, int pop_prev,
                       int push_next, int push_prev) {
  LOOM_ASSERT(v->n > 0);
  v->v[0].pop_next |= pop_next, v->v[0].pop_prev |= pop_prev;
  v->v[v->n - 1].push_next |= push_next, v->v[v->n - 1].push_prev |= push_prev;
  for (uint32_t i = 0; i < v->n; i++) emit_insn(p, &v->v[i]);
  v->n = 0;
}

/* Tile j's window load L(j) goes to ACC half j % 2 and is followed by its
 * row maxima H(j) (separable form only), then by the output passes V(j-1)
 * of the previous tile and its store:
 *
 *   L(0) H(0) L(1) V(0) S(0) H(1) L(2) V(1) S(1) H(2) ... V(T-1) S(T-1)
 *
 * so that the store S(j-1) runs beside H(j) rather than beside a LOAD ACC,
 * with which it would share the bus.  Tokens: V(j) pushes C2S for S(j);
 * S(j) pushes S2C for L(j+2), which overwrites what S(j) reads.  Every
 * token's producer precedes its consumer in the stream, so no queue depth
 * can deadlock it. */
static void emit_maxpool(struct lower_program *p, const struct tile_ctx *c) {
  uint32_t scratch = c->L.ih * (uint32_t)c->t.tw > c->L.tile_pix ? c->L.ih * (uint32_t)c->t.tw : c->L.tile_pix;
  struct pool_emit e = {p, c, malloc(sizeof(struct loom_uop) * scratch)};
  LOOM_ASSERT(e.scratch != NULL);
  uint32_t uload = emit_uop_load(p), T = c->t.tiles;
  struct emit_vec load = {0}, rows = {0}, out = {0}, store = {0};
  struct tile_chunk prev;
  struct tile_iter it;
  memset(&prev, 0, sizeof prev);
  tile_iter_init(&it, c);
  for (uint32_t j = 0; j <= T; j++) {
    struct tile_chunk cur;
    if (j < T) { /* L(j) */
      LOOM_ASSERT(tile_iter_next(&it));
      cur = it.ch;
      pool_loads(&e, &cur, c->L.acc_base[j & 1], &load);
      emit_wired(p, &load, j >= 2, 0, 0, 0);
    }
    if (j > 0) { /* V(j-1), S(j-1) */
      uint32_t acc = c->L.acc_base[(j - 1) & 1];
      pool_alu_out(&e, &prev, acc, &out);
      emit_wired(p, &out, 0, 0, 1, 0);
      pool_stores(&e, &prev, acc, &store);
      emit_wired(p, &store, 0, 1, 0, j + 1 < T);
    }
    if (j == T) break;
    pool_alu_rows(&e, &cur, c->L.acc_base[j & 1], &rows); /* H(j) */
    if (rows.n) emit_wired(p, &rows, 0, 0, 0, 0);
    prev = cur;
  }
  emit_vec_free(&load), emit_vec_free(&rows), emit_vec_free(&out), emit_vec_free(&store);
  struct loom_insn fin;
  memset(&fin, 0, sizeof fin);
  fin.opcode = LOOM_OP_FINISH;
  emit_insn(p, &fin);
  emit_uop_table(p, uload);
  free(e.scratch);
}

static void pool_acts(struct lower_program *p, const struct lower_qpool *l, const struct lower_geom *g) {
  struct lower_act in = {LOWER_ACT_NCHWC, l->n, l->c, l->in_h, l->in_w, p->cfg->block_in, {0}, 0};
  struct lower_act out = {LOWER_ACT_NCHWC, l->n, l->c, g->out_h, g->out_w, p->cfg->block_out, {0}, 0};
  in.bytes = lower_act_bytes(&in), out.bytes = lower_act_bytes(&out);
  p->act[LOWER_SEG_IN] = in, p->act[LOWER_SEG_OUT] = out;
  p->seg_bytes[LOWER_SEG_IN] = in.bytes, p->seg_bytes[LOWER_SEG_OUT] = out.bytes;
}

static int lower_maxpool(const struct loom_hw_config *cfg, const struct lower_qpool *l,
                         const char *where, struct lower_program *p, char *msg) {
  struct lower_geom g;
  pool_geom(cfg, l, &g);
  if ((uint64_t)g.n * (uint64_t)g.cib * (uint64_t)g.in_h * (uint64_t)g.in_w >= (UINT64_C(1) << 28) ||
      g.in_w > 65535)
    return lower_fail(msg, where, "tensor too large for the transfer fields");
  struct tile_ctx c;
  if (pool_search(cfg, &g, &c) != 0)
    return lower_fail(msg, where, "no max-pooling tile fits the %s configuration", cfg->name);
  pool_acts(p, l, &g);
  emit_maxpool(p, &c);
  p->report.kind = LOWER_KIND_MAXPOOL;
  p->report.tiling = c.t;
  p->report.min_bytes = p->act[LOWER_SEG_IN].bytes + p->act[LOWER_SEG_OUT].bytes;
  emit_report(p);
  return 0;
}

int lower_pool(const struct loom_hw_config *cfg, const struct lower_qpool *l, const char *where,
               struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  emit_program_init(out, cfg);
  if (check_pool(cfg, l, where, msg)) return -1;
  if (l->kind == LOWER_POOL_AVG) return lower_avgpool(cfg, l, where, out, msg);
  return lower_maxpool(cfg, l, where, out, msg);
}
