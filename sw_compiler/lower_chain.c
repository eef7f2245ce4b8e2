/*
 * lower_chain.c - a chain of layers as one job, the intermediate tensors
 * staying on chip: [1x1 expansion ->] depthwise -> 1x1 projection [+ Add]
 * (MobileNetV2's inverted residual block; struct lower_qchain).
 *
 * The job walks bands of th output rows (full width); each band's expanded
 * channels go through in groups of g blocks, a three-stage software
 * pipeline over the flat list of (band, group) items k:
 *
 *   PW1(k)   GEMM: the group's expansion of the band's input rows A (loaded
 *            from DRAM once per band, all channels) into P, epilogue -> OUT
 *   MV2(k)   LOAD INP from OUT (load module): P -> B, the depthwise window,
 *            with the depthwise padding (the expansion's zero point)
 *   DW(k)    depthwise GEMM: B -> D, epilogue -> OUT
 *   MV4(k)   LOAD INP from OUT: D -> C
 *   PW2(k)   GEMM: the projection's partial sum over this group's channels
 *            into Q (`first` on a band's first group, `last` on its last)
 *   TAIL(b)  the fused residual Add on Q, the residual read from A (stride
 *            1: the band's own input rows), as lower_conv's residual_tail
 *   ST(b)    STORE Q
 *
 * with compute running PW1(k), DW(k - 1), PW2(k - 2) per step, so that a
 * move always has two GEMMs to hide behind.  Without the expansion, the
 * depthwise window comes from DRAM per group (LB(k)).  Buffers alternate by
 * item parity (P, B, D, C), by band parity (A, Q), and weights, when they
 * do not all fit WGT, come per group into three slots (a slot is free again
 * once PW2 of item k - 3 ran).  emit_deps.c derives the tokens from the
 * dependencies each op names.
 *
 * The cost: a band recomputes the expansion of the rows its depthwise
 * window shares with the previous band (k_h - stride rows), and every
 * intermediate row moves once through the SRAM ports (one row per cycle,
 * on the load module, beside the GEMMs).  The saving: the expanded tensor
 * and the depthwise output never go to DRAM and back.  lower_chain() finds
 * the cheapest (th, g); compile_fuse.c compares the fused job with the
 * separate ones and keeps the cheaper.
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower_chain.h"

static int is_int8(int32_t v) { return v >= -128 && v <= 127; }

static int check_layer(const struct loom_hw_config *cfg, const struct lower_qconv *l, int dw, const char *what,
                       const char *where, char *msg) {
  if (!l->weights || !l->multiplier) return lower_fail(msg, where, "%s: missing weights or multipliers", what);
  if (l->n < 1 || l->in_c < 1 || l->out_c < 1 || l->in_h < 1 || l->in_w < 1)
    return lower_fail(msg, where, "%s: empty tensor", what);
  if ((l->flags & LOWER_CONV_ACC_OUT) || l->in_passes > 1 || l->pool || l->shift > 63 || l->round_even > 1)
    return lower_fail(msg, where, "%s: only plain int8 layers fuse", what);
  if (!is_int8(l->in_zero_point) || !is_int8(l->out_zero_point) || !is_int8(l->clamp_lo) || !is_int8(l->clamp_hi))
    return lower_fail(msg, where, "%s: zero points and clamps must be int8", what);
  if (dw) {
    if (l->groups != l->in_c || l->out_c != l->in_c || l->k_w > cfg->block_in || l->dil_h < 1 || l->dil_w < 1 ||
        l->stride_h < 1 || l->stride_w < 1 || l->pad_t > 7 || l->pad_l > 7 || l->pad_b > 7 || l->pad_r > 7 ||
        l->pad_t >= (l->k_h - 1) * l->dil_h + 1 || l->pad_l >= (l->k_w - 1) * l->dil_w + 1 || l->residual)
      return lower_fail(msg, where, "%s: not a depthwise convolution the chain runs", what);
  } else if (l->k_h != 1 || l->k_w != 1 || l->stride_h != 1 || l->stride_w != 1 || l->groups != 1 || l->pad_t ||
             l->pad_l || l->pad_b || l->pad_r) {
    return lower_fail(msg, where, "%s: not a 1x1 convolution", what);
  }
  return 0;
}

static int32_t out_size(int32_t in, int32_t k, int32_t s, int32_t d, int32_t p0, int32_t p1) {
  return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

static int check_chain(const struct loom_hw_config *cfg, const struct lower_qchain *c, const char *where,
                       char *msg) {
  if (cfg->batch != 1 || cfg->block_in != cfg->block_out)
    return lower_fail(msg, where, "configuration %s is not supported (batch 1, square blocks)", cfg->name);
  if (!c->dw || !c->pw2) return lower_fail(msg, where, "a chain needs a depthwise and a 1x1 layer");
  if ((c->pw1 && check_layer(cfg, c->pw1, 0, "expansion", where, msg)) ||
      check_layer(cfg, c->dw, 1, "depthwise", where, msg) || check_layer(cfg, c->pw2, 0, "projection", where, msg))
    return -1;
  const struct lower_qconv *d = c->dw, *p = c->pw2;
  int32_t oh = out_size(d->in_h, d->k_h, d->stride_h, d->dil_h, d->pad_t, d->pad_b);
  int32_t ow = out_size(d->in_w, d->k_w, d->stride_w, d->dil_w, d->pad_l, d->pad_r);
  if ((c->pw1 && (c->pw1->out_c != d->in_c || c->pw1->in_h != d->in_h || c->pw1->in_w != d->in_w ||
                  c->pw1->n != d->n || c->pw1->out_zero_point != d->in_zero_point)) ||
      p->in_c != d->out_c || p->in_h != oh || p->in_w != ow || p->n != d->n || p->in_zero_point != d->out_zero_point)
    return lower_fail(msg, where, "the chain's layers do not connect");
  if (p->residual && (!c->pw1 || d->stride_h != 1 || d->stride_w != 1 || oh != d->in_h || ow != d->in_w ||
                      c->pw1->in_c != p->out_c))
    return lower_fail(msg, where, "a fused Add in a chain reads the chain's input: expansion and stride 1 needed");
  const struct lower_qresidual *r = p->residual;
  if (r && (!is_int8(r->a_weight) || !is_int8(r->b_weight) || !is_int8(r->b_zero_point) ||
            !is_int8(r->out_zero_point) || !is_int8(r->clamp_lo) || !is_int8(r->clamp_hi) || r->shift > 63))
    return lower_fail(msg, where, "fused Add: weights, zero points and clamps must be int8, shift <= 63");
  return 0;
}

static void geom_of(const struct loom_hw_config *cfg, const struct lower_qchain *c, struct chain_geom *g) {
  const struct lower_qconv *d = c->dw, *p = c->pw2;
  int32_t b = cfg->block_in;
  memset(g, 0, sizeof *g);
  g->n = d->n, g->h = d->in_h, g->w = d->in_w;
  g->kh = d->k_h, g->kw = d->k_w, g->sh = d->stride_h, g->sw = d->stride_w, g->dh = d->dil_h, g->dwl = d->dil_w;
  g->pt = d->pad_t, g->pl = d->pad_l;
  g->ho = out_size(d->in_h, d->k_h, d->stride_h, d->dil_h, d->pad_t, d->pad_b);
  g->wo = out_size(d->in_w, d->k_w, d->stride_w, d->dil_w, d->pad_l, d->pad_r);
  g->cb = c->pw1 ? tile_ceil_div(c->pw1->in_c, b) : 0;
  g->eb = tile_ceil_div(d->in_c, b);
  g->pb = tile_ceil_div(p->out_c, b);
  g->dw_rows = b / d->k_w < d->k_h ? b / d->k_w : d->k_h;
  g->passes = tile_ceil_div(d->k_h, g->dw_rows);
  g->has_pw1 = c->pw1 != NULL;
  g->residual = p->residual != NULL;
  g->iw = (uint32_t)((g->wo - 1) * g->sw + (g->kw - 1) * g->dwl + 1);
  g->cols = g->w < (int32_t)g->iw - g->pl ? g->w : (int32_t)g->iw - g->pl;
  /* an odd row pitch: a window column's rows alternate between the INP
   * banks (loom_dw_read_cycles), one more padding column if there is room */
  if (g->iw % 2 == 0 && g->dh % 2 && g->kh > 1 && (int32_t)g->iw - g->pl - g->cols < 7) g->iw++;
}

/* The dw input rows of output rows [oy0, oy0 + rows): the image rows
 * [*ys, *ys + *nr) and the padding rows above and below. */
void chain_band_rows(const struct chain_geom *g, int32_t oy0, int32_t rows, int32_t *ys, int32_t *nr,
                     int32_t *pad_t, int32_t *pad_b) {
  int32_t y0 = oy0 * g->sh - g->pt, y1 = (oy0 + rows - 1) * g->sh - g->pt + (g->kh - 1) * g->dh + 1;
  int32_t a = y0 < 0 ? 0 : y0, e = y1 > g->h ? g->h : y1;
  *ys = a, *nr = e - a, *pad_t = a - y0, *pad_b = y1 - e;
}

/* ---- the layout of a tiling ---- */

int32_t chain_group_blocks(const struct chain_geom *g, const struct chain_tiling *t, int32_t grp) {
  int32_t left = g->eb - grp * t->g;
  return left < t->g ? left : t->g;
}

static uint32_t wgt_total(const struct chain_geom *g) {
  return (uint32_t)(g->eb * g->cb + g->eb * g->passes + g->pb * g->eb);
}

/* PAR rows of one group: its expansion's and its depthwise's. */
static uint32_t par_mult(const struct chain_geom *g) { return g->has_pw1 ? 2u : 1u; }

/* 0 and the layout when tiling t fits the buffers, fields and micro-ops. */
int chain_layout(const struct loom_hw_config *cfg, const struct chain_geom *g, struct chain_tiling *t,
                 struct chain_layout *L) {
  memset(L, 0, sizeof *L);
  t->bands = tile_ceil_div(g->ho, t->th);
  t->groups = tile_ceil_div(g->eb, t->g);
  L->ih = (uint32_t)((t->th - 1) * g->sh + (g->kh - 1) * g->dh + 1);
  L->ia = L->ih < (uint32_t)g->h ? L->ih : (uint32_t)g->h;
  /* The residual reads A at the band's end, two steps after its last
   * expansion: more A buffers let the next bands' inputs load before they
   * are needed (with one group per band, three are the least that work). */
  L->na = !g->residual ? 2 : t->groups == 1 ? 4 : t->groups == 2 ? 3 : 2;
  uint32_t w = (uint32_t)g->w, grp = (uint32_t)t->g;
  L->a_blk = L->ia * w, L->b_blk = L->ih * g->iw, L->to = (uint32_t)(t->th * g->wo);
  uint32_t a = g->has_pw1 ? (uint32_t)g->cb * L->a_blk : 0, bsz = grp * L->b_blk, csz = grp * L->to;
  uint32_t fixed = 2 * bsz + 2 * csz, least = g->residual && t->groups == 1 ? 3 : 2;
  while (L->na > least && L->na * a + fixed > (uint32_t)cfg->inp_rows) L->na--;
  for (uint32_t i = 0; i < L->na; i++) L->a_base[i] = i * a;
  uint32_t at = L->na * a;
  L->b_base[0] = at, L->b_base[1] = at + bsz, at += 2 * bsz;
  L->c_base[0] = at, L->c_base[1] = at + csz, at += 2 * csz;
  if (at > (uint32_t)cfg->inp_rows) return -1;
  uint32_t psz = g->has_pw1 ? grp * L->a_blk : 0, dsz = grp * L->to, qsz = (uint32_t)g->pb * L->to;
  L->p_base[0] = 0, L->p_base[1] = psz, at = 2 * psz;
  L->d_base[0] = at, L->d_base[1] = at + dsz, at += 2 * dsz;
  L->q_base[0] = at, L->q_base[1] = at + qsz, at += 2 * qsz;
  if (at > (uint32_t)cfg->acc_rows) return -1;
  uint32_t wrows = (uint32_t)cfg->wgt_rows - 1; /* the last row: the residual's */
  L->res_row = wrows;
  t->wgt_resident = t->groups == 1;
  if (t->wgt_resident) {
    if (wgt_total(g) > wrows) return -1;
    L->w1[0] = L->w1[1] = 0;
    L->wd[0] = L->wd[1] = (uint32_t)(g->eb * g->cb);
    L->w2[0] = L->w2[1] = (uint32_t)(g->eb * g->cb + g->eb * g->passes);
  } else {
    uint32_t s1 = grp * (uint32_t)g->cb, sd = grp * (uint32_t)g->passes, s2 = (uint32_t)g->pb * grp;
    if (2 * (s1 + sd + s2) > wrows) return -1;
    L->w1[0] = 0, L->w1[1] = s1;
    L->wd[0] = 2 * s1, L->wd[1] = 2 * s1 + sd;
    L->w2[0] = 2 * (s1 + sd), L->w2[1] = 2 * (s1 + sd) + s2;
  }
  uint32_t m = par_mult(g);
  t->par_resident = (uint32_t)g->pb + m * (uint32_t)g->eb <= LOOM_PAR_ROWS;
  if (!t->par_resident && (uint32_t)g->pb + 2 * m * grp > LOOM_PAR_ROWS) return -1;
  L->par_slot[0] = (uint32_t)g->pb, L->par_slot[1] = (uint32_t)g->pb + m * grp;
  if (L->a_blk > 2047 || L->b_blk > 2047 || L->to > 2047 || g->dh * g->iw > 4095 || t->g > 1023 ||
      g->eb > 1023 || g->cb > 1023 || g->pb > 4095 || g->cb * (int32_t)w * (int32_t)L->ia > 65535)
    return -1;
  /* micro-op sets: expansion per (A, P) buffer pair, depthwise per pass and
   * parity, projection per (C, Q) pair, the residual per (Q, A) pair */
  uint64_t uops = (g->has_pw1 ? 2ull * L->na * L->a_blk : 0) + 2ull * L->to * (uint64_t)g->passes +
                  4ull * L->to + (g->residual ? 2ull * L->na * L->to + 4 : 0);
  return uops <= (uint64_t)cfg->uop_rows ? 0 : -1;
}

int32_t chain_lin_step(const struct chain_geom *g, const struct chain_tiling *t, const struct chain_layout *L,
                       int32_t band) {
  int32_t prev = band - (int32_t)L->na, G = t->groups;
  if (prev < 0) return 0;
  int32_t s = (prev + 1) * G - 1 + (g->residual ? 2 : 0) + 1;
  LOOM_ASSERT(s <= band * G);
  return s;
}

/* ---- constants ---- */

/* CONST: PAR rows (projection; per group: expansion, depthwise), the
 * weights, the residual's row. */
static void place_consts(struct lower_program *p, const struct lower_qchain *c, const struct chain_geom *g,
                         const struct chain_tiling *t, struct chain_consts *k) {
  const struct loom_hw_config *cfg = p->cfg;
  uint64_t align = emit_const_align(cfg), wrow = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  uint64_t prow = loom_hw_row_bytes(cfg, LOOM_BUF_PAR, 0);
  const struct lower_qconv *layers[3] = {c->pw2, c->pw1, c->dw};
  int32_t blocks[3] = {g->pb, g->eb, g->eb};
  uint8_t *rows[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) {
    const struct lower_qconv *l = layers[i];
    if (!l) continue;
    rows[i] = calloc((size_t)blocks[i] * prow, 1);
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)l->out_c + 1);
    LOOM_ASSERT(rows[i] && bias);
    int32_t per = l->groups == 1 ? l->in_c * l->k_h * l->k_w : l->k_h * l->k_w;
    pack_bias_correct(l->weights, l->bias, l->out_c, per, l->in_zero_point, bias);
    pack_par_rows(cfg, bias, l->multiplier, l->out_c, rows[i]);
    free(bias);
  }
  uint64_t total = (uint64_t)g->pb + (uint64_t)par_mult(g) * (uint64_t)g->eb;
  uint8_t *par = malloc(total * prow);
  LOOM_ASSERT(par);
  memcpy(par, rows[0], (size_t)g->pb * prow);
  uint64_t at = (uint64_t)g->pb;
  for (int32_t grp = 0; grp < t->groups; grp++) {
    uint64_t e0 = (uint64_t)grp * (uint64_t)t->g, ng = (uint64_t)chain_group_blocks(g, t, grp);
    for (int i = 1; i < 3; i++)
      if (rows[i]) memcpy(par + at * prow, rows[i] + e0 * prow, ng * prow), at += ng;
  }
  uint64_t off = emit_const(p, par, total * prow, align);
  k->par_row0 = (uint32_t)(off / prow);
  p->param_offset = off;
  for (int i = 0; i < 3; i++) free(rows[i]);
  free(par);
  size_t n = wgt_total(g);
  int8_t *w = calloc(n * wrow + wrow, 1);
  LOOM_ASSERT(w);
  if (c->pw1) pack_wgt_dense(cfg, c->pw1->weights, c->pw1->out_c, c->pw1->in_c, 1, w);
  pack_wgt_dw(cfg, c->dw->weights, c->dw->in_c, g->kh, g->kw, g->dw_rows, w + (size_t)g->eb * g->cb * wrow);
  pack_wgt_dense(cfg, c->pw2->weights, c->pw2->out_c, c->pw2->in_c, 1,
                 w + (size_t)(g->eb * g->cb + g->eb * g->passes) * wrow);
  p->wgt_offset = emit_const(p, w, n * wrow, align);
  k->wgt_row0 = (uint32_t)(p->wgt_offset / wrow);
  if (c->pw2->residual) {
    memset(w, 0, wrow);
    for (int32_t i = 0; i < cfg->block_out; i++)
      w[(size_t)i * (size_t)cfg->block_in + (size_t)i] = (int8_t)c->pw2->residual->b_weight;
    k->res_row = (uint32_t)(emit_const(p, w, wrow, wrow) / wrow);
  }
  free(w);
}

static void fill_acts(struct lower_program *p, const struct lower_qchain *c, const struct chain_geom *g) {
  const struct lower_qconv *first = c->pw1 ? c->pw1 : c->dw;
  struct lower_act in = {LOWER_ACT_NCHWC, first->n, first->in_c, first->in_h, first->in_w, p->cfg->block_in, {0}, 0};
  struct lower_act out = {LOWER_ACT_NCHWC, g->n, c->pw2->out_c, g->ho, g->wo, p->cfg->block_out, {0}, 0};
  in.bytes = lower_act_bytes(&in), out.bytes = lower_act_bytes(&out);
  p->act[LOWER_SEG_IN] = in, p->act[LOWER_SEG_OUT] = out;
  p->seg_bytes[LOWER_SEG_IN] = in.bytes, p->seg_bytes[LOWER_SEG_OUT] = out.bytes;
  if (g->residual) p->act[LOWER_SEG_IN2] = in, p->seg_bytes[LOWER_SEG_IN2] = in.bytes;
}

static uint64_t macs_of(const struct lower_qconv *l, int32_t oh, int32_t ow) {
  return l ? (uint64_t)l->n * (uint64_t)oh * (uint64_t)ow * (uint64_t)l->out_c *
                 (uint64_t)(l->in_c / l->groups) * (uint64_t)(l->k_h * l->k_w)
           : 0;
}

/* ---- the search ---- */

/* Emits tiling t (its layout fits) into out. */
static void emit_tiling(const struct loom_hw_config *cfg, const struct lower_qchain *c, const struct chain_geom *g,
                        struct chain_tiling *t, struct lower_program *out) {
  struct chain_layout L;
  struct chain_consts k;
  memset(&k, 0, sizeof k);
  emit_program_init(out, cfg);
  LOOM_ASSERT(chain_layout(cfg, g, t, &L) == 0);
  if (!t->est) t->est = chain_estimate(cfg, g, t, &L);
  place_consts(out, c, g, t, &k);
  fill_acts(out, c, g);
  chain_emit(out, c, g, t, &L, &k);
  struct lower_report *r = &out->report;
  r->kind = LOWER_KIND_CHAIN;
  r->residual = g->residual;
  r->tiling = (struct lower_tiling){.th = t->th, .tw = g->wo, .tco = g->pb, .tci = t->g,
                                    .wgt = t->wgt_resident ? TILE_WGT_RESIDENT : TILE_WGT_STREAM,
                                    .tiles = (uint32_t)(g->n * t->bands), .est_cycles = t->est};
  r->macs = macs_of(c->pw1, g->h, g->w) + macs_of(c->dw, g->ho, g->wo) + macs_of(c->pw2, g->ho, g->wo);
  r->min_bytes = out->act[LOWER_SEG_IN].bytes + out->act[LOWER_SEG_OUT].bytes + (out->uop_offset - out->param_offset);
  emit_report(out);
}

int lower_chain_tiled(const struct loom_hw_config *cfg, const struct lower_qchain *c, int32_t th, int32_t grp,
                      const char *where, struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  emit_program_init(out, cfg);
  if (check_chain(cfg, c, where, msg)) return -1;
  struct chain_geom g;
  geom_of(cfg, c, &g);
  struct chain_tiling t = {.th = th, .g = grp};
  struct chain_layout L;
  if (th < 1 || grp < 1 || th > g.ho || grp > g.eb || chain_layout(cfg, &g, &t, &L))
    return lower_fail(msg, where, "tiling %d rows x %d blocks does not fit", th, grp);
  emit_tiling(cfg, c, &g, &t, out);
  return 0;
}

int lower_chain(const struct loom_hw_config *cfg, const struct lower_qchain *c, const char *where,
                struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  emit_program_init(out, cfg);
  if (check_chain(cfg, c, where, msg)) return -1;
  struct chain_geom g;
  geom_of(cfg, c, &g);
  struct chain_tiling best[CHAIN_CANDIDATES];
  int n = 0;
  int32_t *ths = malloc(sizeof(int32_t) * 2 * TILE_SIZES_MAX), *gs = ths + TILE_SIZES_MAX;
  LOOM_ASSERT(ths);
  int32_t nth = tile_distinct_sizes(g.ho, ths), ng = tile_distinct_sizes(g.eb, gs);
  for (int32_t a = 0; a < nth; a++)
    for (int32_t b = 0; b < ng; b++) {
      struct chain_tiling t = {.th = ths[a], .g = gs[b]};
      struct chain_layout L;
      if (chain_layout(cfg, &g, &t, &L)) continue;
      t.est = chain_estimate(cfg, &g, &t, &L);
      int pos = n;
      while (pos > 0 && t.est < best[pos - 1].est) pos--;
      if (pos >= CHAIN_CANDIDATES) continue;
      int keep = n < CHAIN_CANDIDATES ? n : CHAIN_CANDIDATES - 1; /* entries that stay */
      memmove(&best[pos + 1], &best[pos], (size_t)(keep - pos) * sizeof *best);
      best[pos] = t;
      if (n < CHAIN_CANDIDATES) n++;
    }
  free(ths);
  if (!n) return lower_fail(msg, where, "no tiling of the fused chain fits the %s configuration", cfg->name);
  for (int i = 0; i < n; i++) { /* emit the best few, keep the one the timed walk likes */
    struct lower_program cand;
    emit_tiling(cfg, c, &g, &best[i], &cand);
    if (i == 0 || cand.report.est_cycles < out->report.est_cycles) {
      lower_program_free(out);
      *out = cand;
    } else {
      lower_program_free(&cand);
    }
  }
  return 0;
}
