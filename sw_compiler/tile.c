/*
 * tile.c - tiling of a folded convolution (struct lower_geom) and the walk
 * over its chunks, shared by the tiler's cost estimate and the emitter.
 *
 * A tile is th output rows x tw output columns x tco output-channel blocks
 * of one image; its reduction over input blocks is split into chunks of tci
 * blocks (all of them when they fit), accumulated in ACC.  A chunk is one
 * double-buffered step: chunk k loads into INP/WGT half k % 2 while the
 * GEMM core works on half (k - 1) % 2; output tile o accumulates in ACC half
 * o % 2 while the store of tile o - 1 drains the other one.
 *
 * Invariants the emitter relies on:
 *  - every tile has the full shape th x tw in SRAM.  The last row tile may
 *    be shorter (its GEMMs run a prefix of the micro-op set, whose outermost
 *    loop is the output row); the last column tile is shifted left to end at
 *    the image's edge instead, recomputing a few columns, so the column
 *    layout never changes.
 *  - an input block occupies inp_block = ih x iw INP rows at a fixed stride,
 *    whatever the tile's real window; LOAD padding (pad value = the input
 *    zero point) fills the part outside the image.
 *  - a load is skipped when its half already holds the same data
 *    (struct tile_state): weights then stay put across spatial tiles, and
 *    RESIDENT weights are loaded exactly once, slice by slice on first use,
 *    so the first GEMM does not wait for all of them.
 *
 * tile_search() enumerates the distinct tile sizes (ceil(n / m) for all m),
 * both loop orders and both weight modes, rejects what does not fit the
 * buffers (halved for double buffering) or the ISA's fields, estimates the
 * rest with the chunk pipeline of cost_model.c and keeps the cheapest; ties
 * go to fewer DRAM bytes, then to the first candidate in enumeration order,
 * so the choice is deterministic.
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

const char *const tile_order_names[TILE_ORDER_COUNT] = {"spatial", "channel"};
_Static_assert(sizeof tile_order_names / sizeof *tile_order_names == TILE_ORDER_COUNT, "names");
const char *const tile_wgt_names[TILE_WGT_COUNT] = {"stream", "resident"};
_Static_assert(sizeof tile_wgt_names / sizeof *tile_wgt_names == TILE_WGT_COUNT, "names");

int32_t tile_ceil_div(int32_t a, int32_t b) { return (a + b - 1) / b; }

static uint32_t kk_of(const struct lower_geom *g) { return (uint32_t)(g->k_h * g->k_w); }

/* Input blocks one chunk loads. */
static int32_t chunk_in_blocks(const struct lower_geom *g, const struct lower_tiling *t) {
  return g->mode == LOWER_GEMM_DENSE ? t->tci : t->tco;
}

/* WGT rows one output block needs per input block: a tap each (dense,
 * diagonal), or a row per pass over the window (depthwise). */
static uint32_t rows_per_block(const struct lower_geom *g) {
  return g->mode == LOWER_GEMM_DW ? (uint32_t)g->dw_passes : kk_of(g);
}

/* Weight rows of a full slice (one chunk's weights). */
static uint32_t slice_rows(const struct lower_geom *g, int32_t nco, int32_t nci) {
  if (g->wgt_uniform) return g->mode == LOWER_GEMM_DW ? (uint32_t)g->dw_passes : 1;
  return g->mode == LOWER_GEMM_DENSE ? (uint32_t)(nco * nci) * kk_of(g) : (uint32_t)nco * rows_per_block(g);
}

static uint32_t total_wgt_rows(const struct lower_geom *g) {
  return slice_rows(g, g->cob, g->cib);
}

/* Dense and diagonal: th * tw * kk (a micro-op per tap); depthwise:
 * th * tw per pass (a micro-op per output pixel). */
uint32_t tile_gemm_set_size(const struct lower_geom *g, const struct lower_tiling *t) {
  return (uint32_t)(t->th * t->tw) * (g->mode == LOWER_GEMM_DW ? (uint32_t)g->dw_passes : kk_of(g));
}

static void layout(const struct loom_hw_config *cfg, const struct lower_geom *g,
                   const struct lower_tiling *t, uint32_t param_rows, struct tile_layout *L) {
  memset(L, 0, sizeof *L);
  L->param_rows = param_rows;
  L->acc_half = ((uint32_t)cfg->acc_rows - param_rows) / 2;
  L->acc_base[0] = param_rows;
  L->acc_base[1] = param_rows + L->acc_half;
  L->inp_half = (uint32_t)cfg->inp_rows / 2;
  L->inp_base[1] = L->inp_half;
  uint32_t wgt_rows = (uint32_t)cfg->wgt_rows - (g->residual ? 1 : 0); /* last row: residual's */
  L->res_wgt_row = (uint32_t)cfg->wgt_rows - 1;
  L->wgt_half = t->wgt == TILE_WGT_RESIDENT ? wgt_rows : wgt_rows / 2;
  L->wgt_base[1] = t->wgt == TILE_WGT_RESIDENT ? 0 : L->wgt_half;
  L->ih = g->row_skip ? (uint32_t)t->th
                      : (uint32_t)((t->th - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1);
  L->iw = (uint32_t)((t->tw - 1) * g->stride_w + (g->k_w - 1) * g->dil_w + 1);
  /* depthwise: an odd row pitch alternates a window column's rows between
   * the INP banks (two reads per cycle, loom_dw_read_cycles): one more
   * padding column when the right padding has room */
  L->tile_pix = (uint32_t)(t->th * t->tw);
  uint32_t res = g->residual ? L->tile_pix * (uint32_t)t->tco : 0, wide = L->ih * (L->iw + 1);
  L->iw_pad = g->mode == LOWER_GEMM_DW && g->dil_h % 2 && L->iw % 2 == 0 && g->pad_r < 7 && g->k_h > 1 &&
              wide <= 2047 && (uint32_t)chunk_in_blocks(g, t) * wide + res <= L->inp_half;
  L->iw += L->iw_pad;
  L->inp_block = L->ih * L->iw;
  L->kk = kk_of(g);
  L->res_offset = (uint32_t)chunk_in_blocks(g, t) * L->inp_block;
  L->par_resident = g->cob <= LOOM_PAR_ROWS;
}

static void counts(const struct lower_geom *g, struct lower_tiling *t) {
  if (g->mode != LOWER_GEMM_DENSE) t->tci = t->tco;
  t->n_rt = tile_ceil_div(g->out_h, t->th);
  t->n_ct = tile_ceil_div(g->out_w, t->tw);
  t->n_cot = tile_ceil_div(g->cob, t->tco);
  t->n_cic = g->mode == LOWER_GEMM_DENSE ? tile_ceil_div(g->cib, t->tci) : 1;
  t->tiles = (uint32_t)(g->n * t->n_rt * t->n_ct * t->n_cot);
  t->chunks = t->tiles * (uint32_t)t->n_cic;
}

/* The buffer and field limits of a tiling, cheapest first. */
static const char *check_fit(const struct loom_hw_config *cfg, const struct lower_geom *g,
                             const struct lower_tiling *t, const struct tile_layout *L) {
  if (t->th < 1 || t->th > g->out_h || t->tw < 1 || t->tw > g->out_w || t->tco < 1 ||
      t->tco > g->cob || t->tci < 1 || t->tci > g->cib)
    return "tile size out of range";
  if (L->tile_pix * (uint32_t)t->tco > L->acc_half) return "ACC half too small";
  uint32_t res = g->residual ? L->tile_pix * (uint32_t)t->tco : 0;
  if ((uint32_t)chunk_in_blocks(g, t) * L->inp_block + res > L->inp_half) return "INP half too small";
  if (t->wgt == TILE_WGT_RESIDENT && total_wgt_rows(g) > L->wgt_half)
    return "weights do not fit WGT";
  if (t->wgt == TILE_WGT_STREAM && slice_rows(g, t->tco, t->tci) > L->wgt_half)
    return "WGT half too small";
  if (L->tile_pix > 2047 || L->inp_block > 2047) return "GEMM factor field";
  if (g->mode == LOWER_GEMM_DENSE && t->tco > 1 && (uint32_t)t->tci * L->kk > 1023)
    return "GEMM weight factor field";
  if (g->mode == LOWER_GEMM_DIAG && L->kk > 1023) return "GEMM weight factor field";
  if (g->epi && !L->par_resident && (2 * t->tco > LOOM_PAR_ROWS || g->pool))
    return "PAR too small for two tiles' output blocks";
  if (g->pool && (t->th != 2 || t->tw != g->out_w || t->tco != g->cob || t->order != TILE_ORDER_SPATIAL))
    return "a fused max pooling needs tiles of two whole rows of every block";
  if (t->tco > 4095 || t->tci > 4095) return "GEMM loop field";
  if (tile_gemm_set_size(g, t) > (uint32_t)cfg->uop_rows) return "UOP too small";
  return NULL;
}

/* ---- the chunk walk ---- */

void tile_iter_init(struct tile_iter *it, const struct tile_ctx *c) {
  const struct lower_tiling *t = &c->t;
  memset(it, 0, sizeof *it);
  it->c = c;
  int32_t ext_sp[5] = {c->g->n, t->n_rt, t->n_ct, t->n_cot, t->n_cic};
  int32_t ext_ch[5] = {c->g->n, t->n_cot, t->n_rt, t->n_ct, t->n_cic};
  memcpy(it->ext, t->order == TILE_ORDER_SPATIAL ? ext_sp : ext_ch, sizeof it->ext);
}

/* Advances the odometer; 0 when the walk is over. */
static int odometer(struct tile_iter *it) {
  if (!it->started) {
    it->started = 1;
    return 1;
  }
  for (int d = 4; d >= 0; d--) {
    if (++it->idx[d] < it->ext[d]) return 1;
    it->idx[d] = 0;
  }
  return 0;
}

static void fill_chunk(struct tile_iter *it) {
  const struct lower_geom *g = it->c->g;
  const struct lower_tiling *t = &it->c->t;
  struct tile_chunk *ch = &it->ch;
  int sp = t->order == TILE_ORDER_SPATIAL;
  ch->n = it->idx[0];
  ch->rt = sp ? it->idx[1] : it->idx[2];
  ch->ct = sp ? it->idx[2] : it->idx[3];
  ch->cot = sp ? it->idx[3] : it->idx[1];
  ch->cic = it->idx[4];
  ch->oy0 = ch->rt * t->th;
  ch->rows = g->out_h - ch->oy0 < t->th ? g->out_h - ch->oy0 : t->th;
  ch->ox0 = ch->ct * t->tw;
  if (ch->ox0 + t->tw > g->out_w) ch->ox0 = g->out_w - t->tw; /* shift the last column tile */
  ch->co0 = ch->cot * t->tco;
  ch->nco = g->cob - ch->co0 < t->tco ? g->cob - ch->co0 : t->tco;
  if (g->mode == LOWER_GEMM_DENSE) {
    ch->ci0 = ch->cic * t->tci;
    ch->nci = g->cib - ch->ci0 < t->tci ? g->cib - ch->ci0 : t->tci;
  } else {
    ch->ci0 = ch->co0;
    ch->nci = ch->nco;
  }
  ch->first = ch->cic == 0;
  ch->last = ch->cic == t->n_cic - 1;
}

int tile_iter_next(struct tile_iter *it) {
  int first_call = !it->started;
  if (!odometer(it)) return 0;
  if (!first_call) {
    it->ch.k++;
    if (it->ch.last) it->ch.o++;
  }
  fill_chunk(it);
  return 1;
}

void tile_window(const struct lower_geom *g, int32_t oy0, int32_t rows, int32_t ox0, int32_t tw,
                 struct tile_window *w) {
  memset(w, 0, sizeof *w);
  if (g->row_skip) {
    w->y0 = oy0 * g->stride_h;
    w->ny = rows;
  } else {
    int32_t ys = oy0 * g->stride_h - g->pad_t;
    int32_t ye = (oy0 + rows - 1) * g->stride_h + (g->k_h - 1) * g->dil_h - g->pad_t + 1;
    w->y0 = ys < 0 ? 0 : ys;
    int32_t y1 = ye > g->in_h ? g->in_h : ye;
    w->ny = y1 - w->y0;
    w->pt = w->y0 - ys;
    w->pb = ye - y1;
  }
  int32_t xs = ox0 * g->stride_w - g->pad_l;
  int32_t xe = (ox0 + tw - 1) * g->stride_w + (g->k_w - 1) * g->dil_w - g->pad_l + 1;
  w->x0 = xs < 0 ? 0 : xs;
  int32_t x1 = xe > g->in_w ? g->in_w : xe;
  w->nx = x1 - w->x0;
  w->pl = w->x0 - xs;
  w->pr = xe - x1;
  LOOM_ASSERT(w->ny > 0 && w->nx > 0);
}

/* ---- what each half holds ---- */

int tile_state_init(struct tile_state *s, const struct tile_ctx *c) {
  memset(s, 0, sizeof *s);
  s->inp_key[0] = s->inp_key[1] = s->wgt_key[0] = s->wgt_key[1] = -1;
  size_t slices = (size_t)c->t.n_cot * (size_t)c->t.n_cic;
  s->res_base = malloc(slices * sizeof *s->res_base);
  if (!s->res_base) return -1;
  for (size_t i = 0; i < slices; i++) s->res_base[i] = -1;
  return 0;
}

void tile_state_free(struct tile_state *s) {
  free(s->res_base);
  s->res_base = NULL;
}

void tile_step(const struct tile_ctx *c, struct tile_state *s, const struct tile_chunk *ch,
               struct tile_step *st) {
  const struct lower_tiling *t = &c->t;
  uint32_t h = ch->k & 1;
  int32_t in_idx = c->g->mode == LOWER_GEMM_DENSE ? ch->cic : ch->cot;
  int32_t n_in = c->g->mode == LOWER_GEMM_DENSE ? t->n_cic : t->n_cot;
  int64_t ikey = (((int64_t)ch->n * t->n_rt + ch->rt) * t->n_ct + ch->ct) * n_in + in_idx;
  int64_t wkey = c->g->wgt_uniform ? 0 : (int64_t)ch->cot * t->n_cic + ch->cic;
  memset(st, 0, sizeof *st);
  st->acc_base = c->L.acc_base[ch->o & 1];
  st->inp_base = c->L.inp_base[h];
  st->load_inp = s->inp_key[h] != ikey;
  s->inp_key[h] = ikey;
  st->wgt_slice_rows = slice_rows(c->g, ch->nco, ch->nci);
  if (t->wgt == TILE_WGT_STREAM) {
    st->wgt_base = c->L.wgt_base[h];
    st->load_wgt = s->wgt_key[h] != wkey;
    s->wgt_key[h] = wkey;
    return;
  }
  if (s->res_base[wkey] < 0) {
    s->res_base[wkey] = (int32_t)s->res_next;
    s->res_next += st->wgt_slice_rows;
    st->load_wgt = 1;
    LOOM_ASSERT(s->res_next <= (uint32_t)c->cfg->wgt_rows);
  }
  st->wgt_base = (uint32_t)s->res_base[wkey];
}

/* ---- the estimate of one tiling ---- */

struct eval {
  uint64_t sets[TILE_MAX_SETS][3];
  uint32_t nsets;
  uint64_t alu_sets[TILE_MAX_SETS][3];
  uint32_t nalu;
  uint64_t res_sets[TILE_MAX_SETS][3];
  uint32_t nres;
  int overflow;
};

static void note_key(uint64_t (*keys)[3], uint32_t *n, int width, const uint64_t *k, int *overflow) {
  /* plain compares, not memcmp: this runs for every chunk of every candidate */
  for (uint32_t i = 0; i < *n; i++)
    if (keys[i][0] == k[0] && keys[i][1] == k[1] && (width < 3 || keys[i][2] == k[2])) return;
  if (*n == TILE_MAX_SETS) {
    *overflow = 1;
    return;
  }
  memcpy(keys[(*n)++], k, (size_t)width * sizeof *k);
}

static uint64_t load_cycles(const struct tile_ctx *c, const struct tile_chunk *ch,
                            const struct tile_step *st, uint64_t *bytes) {
  const struct loom_hw_config *cfg = c->cfg;
  uint64_t cyc = 0;
  if (st->load_inp) {
    struct tile_window w;
    tile_window(c->g, ch->oy0, ch->rows, ch->ox0, c->t.tw, &w);
    uint64_t row = (uint64_t)w.nx * loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0);
    uint64_t pad = (uint64_t)(w.pt + w.ny + w.pb) * c->L.iw - (uint64_t)w.nx * w.ny;
    cyc += (uint64_t)ch->nci * cost_dma(cfg, row, (uint64_t)w.ny, pad);
    *bytes += (uint64_t)ch->nci * row * (uint64_t)w.ny;
  }
  if (st->load_wgt) {
    uint64_t wrow = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
    uint64_t y = c->g->mode == LOWER_GEMM_DENSE ? (uint64_t)ch->nco : 1; /* rows per transfer row */
    cyc += cost_dma(cfg, st->wgt_slice_rows / y * wrow, y, 0);
    *bytes += st->wgt_slice_rows * wrow;
  }
  if (c->g->residual && ch->last) { /* the residual tile, one transfer per block */
    uint64_t row = loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0), b = (uint64_t)ch->rows * (uint64_t)c->t.tw * row;
    int whole = c->t.tw == c->g->out_w;
    if (c->g->nc_rows) /* one transfer: nco blocks of each of the rows, cob apart */
      cyc += ch->nco == c->g->cob ? cost_dma(cfg, (uint64_t)ch->nco * b, 1, 0)
                                  : cost_dma(cfg, (uint64_t)ch->nco * row, (uint64_t)ch->rows, 0);
    else
      cyc += (uint64_t)ch->nco * cost_dma(cfg, whole ? b : (uint64_t)c->t.tw * row, whole ? 1 : (uint64_t)ch->rows, 0);
    *bytes += (uint64_t)ch->nco * b;
  }
  if (c->g->residual && ch->k == 0) cyc += cost_dma(cfg, loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0), 1, 0);
  if (c->g->epi && ch->first && (!c->L.par_resident || ch->k == 0)) { /* the tile's PAR rows, or all once */
    uint64_t b = (uint64_t)(c->L.par_resident ? c->g->cob : ch->nco) * loom_hw_row_bytes(cfg, LOOM_BUF_PAR, 0);
    cyc += cost_dma(cfg, b, 1, 0);
    *bytes += b;
  }
  return cyc ? cyc : 1;
}

/* GEMM micro-ops of one chunk. */
static uint64_t chunk_gemm_uops(const struct tile_ctx *c, const struct tile_chunk *ch) {
  uint64_t pix = (uint64_t)ch->rows * (uint64_t)c->t.tw;
  uint64_t blocks = c->g->mode == LOWER_GEMM_DENSE ? (uint64_t)ch->nci * ch->nco : (uint64_t)ch->nco;
  return pix * (c->g->mode == LOWER_GEMM_DW ? (uint64_t)c->g->dw_passes : c->L.kk) * blocks;
}

/* Cycles of the GEMMs of one chunk: a micro-op per cycle, or the
 * depthwise window's reads per micro-op (one pass after another). */
static uint64_t chunk_gemm_cycles(const struct tile_ctx *c, const struct tile_chunk *ch) {
  const struct lower_geom *g = c->g;
  if (g->mode != LOWER_GEMM_DW) return cost_gemm(chunk_gemm_uops(c, ch));
  uint64_t cyc = 0;
  uint32_t step = (uint32_t)(g->stride_w / g->dil_w);
  if (g->stride_w % g->dil_w) step = (uint32_t)g->k_w; /* no reuse */
  for (int32_t p = 0; p < g->dw_passes; p++) {
    uint32_t kh = (uint32_t)(g->k_h - p * g->dw_rows < g->dw_rows ? g->k_h - p * g->dw_rows : g->dw_rows);
    cyc += cost_dw((uint64_t)ch->rows, (uint64_t)c->t.tw, (uint64_t)ch->nco, kh, (uint32_t)g->k_w, step,
                   (uint32_t)g->dil_h * c->L.iw, (uint32_t)g->dil_w);
  }
  return cyc;
}

/* GEMM micro-ops every tiling needs at least: each output pixel of each
 * block once (shifted column tiles only add to it). */
static uint64_t min_gemm_uops(const struct tile_ctx *c) {
  const struct lower_geom *g = c->g;
  uint64_t blocks = g->mode == LOWER_GEMM_DENSE ? (uint64_t)g->cib * g->cob : (uint64_t)g->cob;
  uint64_t per = g->mode == LOWER_GEMM_DW ? (uint64_t)g->dw_passes : c->L.kk;
  return (uint64_t)g->n * (uint64_t)g->out_h * (uint64_t)g->out_w * per * blocks;
}

/* ISA v2 (epi): the bias and the requantization ride on the GEMMs' first
 * and last micro-ops, so a chunk costs its GEMMs, a QCFG at a tile's start
 * (its PAR rows come with the chunk's loads), and for a fused residual the
 * EPI and MUL passes, two QCFGs and the residual GEMM.  int32 results keep
 * the version 1 epilogue: the bias MOV and the byte lanes read parameter
 * rows (vector operands: two cycles per micro-op). */
static uint64_t compute_cycles(const struct tile_ctx *c, const struct tile_chunk *ch) {
  uint64_t rows = (uint64_t)ch->rows * (uint64_t)c->t.tw * (uint64_t)ch->nco;
  uint64_t cyc = chunk_gemm_cycles(c, ch);
  if (c->g->mode == LOWER_GEMM_DW && c->g->dw_passes > 1) cyc += (uint64_t)c->g->dw_passes; /* GCFGs */
  if (c->g->acc_out) {
    if (ch->first) cyc += cost_alu(rows, 1);
    if (ch->last) cyc += 4 * cost_alu(rows, 1) + cost_alu(rows, 0); /* byte lanes: four passes and a SHR */
    return cyc;
  }
  if (ch->first) cyc += 1; /* QCFG: the tile's PAR rows */
  if (ch->last && c->g->residual) /* QCFG x 2, GCFG x 2, EPI, MUL, residual GEMM */
    cyc += 4 + 2 * cost_alu(rows, 0) + cost_gemm(rows);
  if (ch->last && c->g->pool) cyc += lower_conv_pool_cycles(c, ch);
  return cyc;
}

/* Store of a tile: one transfer per output block (one contiguous run when
 * the tile spans whole rows). */
static uint64_t store_cycles(const struct tile_ctx *c, const struct tile_chunk *ch, uint64_t *bytes) {
  uint64_t orow = loom_hw_row_bytes(c->cfg, LOOM_BUF_OUT, 0);
  uint64_t b = (uint64_t)ch->rows * (uint64_t)c->t.tw * orow;
  int whole = c->t.tw == c->g->out_w;
  *bytes += b * (uint64_t)ch->nco;
  return (uint64_t)ch->nco *
         cost_dma(c->cfg, whole ? b : (uint64_t)c->t.tw * orow, whole ? 1 : (uint64_t)ch->rows, 0);
}

static void note_sets(const struct tile_ctx *c, const struct tile_chunk *ch,
                      const struct tile_step *st, struct eval *e) {
  uint64_t key[3] = {st->acc_base, st->inp_base, st->wgt_base};
  note_key(e->sets, &e->nsets, 3, key, &e->overflow);
  uint64_t akey[3] = {st->acc_base, c->g->acc_out ? (uint64_t)ch->co0 : 0, 0};
  if (ch->first || (ch->last && c->g->residual)) note_key(e->alu_sets, &e->nalu, 2, akey, &e->overflow);
  uint64_t rkey[3] = {st->acc_base, st->inp_base + c->L.res_offset, c->g->nc_rows ? (uint64_t)ch->nco : 0};
  if (ch->last && c->g->residual) note_key(e->res_sets, &e->nres, 3, rkey, &e->overflow);
}

/* Walks the chunks of c->t: fills uops and est_cycles; -1 when the micro-op
 * sets do not fit UOP or the estimate exceeds `bound`. */
static int evaluate(struct tile_ctx *c, uint64_t bound, uint64_t *bus) {
  struct eval *e = calloc(1, sizeof *e);
  struct tile_state s;
  LOOM_ASSERT(e && tile_state_init(&s, c) == 0);
  uint64_t acc_row = loom_hw_row_bytes(c->cfg, LOOM_BUF_ACC, 0);
  struct cost_pipe p;
  uint64_t prologue = c->g->acc_out ? cost_dma(c->cfg, (uint64_t)c->L.param_rows * acc_row, 1, 0) : 1;
  cost_pipe_init(&p, prologue);
  struct tile_iter it;
  tile_iter_init(&it, c);
  int ok = 1;
  /* The estimate is at least comp_prev plus the GEMM micro-ops still to
   * run (chunks compute one after another, each at one micro-op per
   * cycle or more), so a candidate is abandoned as soon as that exceeds
   * `bound`: a tiling that loses anyway is not walked to its end. */
  uint64_t need = min_gemm_uops(c), done = 0, first_load = 0;
  while (ok && tile_iter_next(&it)) {
    struct tile_step st;
    tile_step(c, &s, &it.ch, &st);
    note_sets(c, &it.ch, &st, e);
    uint64_t store = 0, lb = 0, sb = 0;
    uint64_t load = load_cycles(c, &it.ch, &st, &lb);
    if (it.ch.last) store = store_cycles(c, &it.ch, &sb);
    cost_pipe_chunk(&p, c->cfg, load, lb, compute_cycles(c, &it.ch), it.ch.first, it.ch.last, store, sb);
    if (p.k == 1) first_load = p.load_prev;
    done += chunk_gemm_uops(c, &it.ch);
    ok = !e->overflow && p.comp_prev + (need > done ? need - done : 0) <= bound;
  }
  c->t.uops = e->nsets * tile_gemm_set_size(c->g, &c->t) + (c->g->acc_out ? 2 : 1) * e->nalu;
  if (c->g->residual) c->t.uops += e->nres * c->L.tile_pix + 2; /* pixel sets, MUL / ADD */
  if (c->g->acc_out) c->t.uops += 2 * 5; /* byte lanes: five ALU micro-ops per ACC half */
  if (c->g->pool) c->t.uops += lower_conv_pool_uops(c->g);
  ok = ok && c->t.uops <= (uint32_t)c->cfg->uop_rows;
  /* The micro-op load (known only now) runs on the compute module while
   * the load module brings the first chunk's operands: it delays compute
   * by what it takes beyond them. */
  uint64_t uop_load = cost_dma(c->cfg, (uint64_t)c->t.uops * 4, 1, 0);
  c->t.est_cycles = cost_pipe_total(c->cfg, &p) + (uop_load > first_load ? uop_load - first_load : 0);
  *bus = p.bus_bytes;
  tile_state_free(&s);
  free(e);
  return ok ? 0 : -1;
}

int tile_finish(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                struct lower_tiling *t, struct tile_layout *L, const char **why) {
  counts(g, t);
  layout(cfg, g, t, param_rows, L);
  const char *bad = check_fit(cfg, g, t, L);
  if (bad) {
    if (why) *why = bad;
    return -1;
  }
  struct tile_ctx c = {cfg, g, *t, *L};
  uint64_t bus;
  if (evaluate(&c, UINT64_MAX, &bus) != 0) {
    if (why) *why = "UOP too small for the micro-op sets";
    return -1;
  }
  *t = c.t;
  return 0;
}

/* ---- the search ---- */

/* Distinct values of ceil(n / m), m = 1..n, largest first. */
int32_t tile_distinct_sizes(int32_t n, int32_t *out) {
  int32_t k = 0;
  LOOM_ASSERT(n >= 1 && n <= (1 << 24)); /* at most 2 sqrt(n) values */
  for (int32_t m = 1; m <= n; m++) {
    int32_t v = tile_ceil_div(n, m);
    if (k == 0 || out[k - 1] != v) out[k++] = v;
  }
  return k;
}

/* The best `want` tilings so far, cheapest first. */
struct search {
  const struct loom_hw_config *cfg;
  const struct lower_geom *g;
  uint32_t param_rows;
  struct lower_tiling best[TILE_TOP_MAX];
  uint64_t best_bus[TILE_TOP_MAX];
  int found, want;
  const char *why;
};

static void try_tiling(struct search *s, struct lower_tiling t) {
  struct tile_layout L;
  counts(s->g, &t);
  layout(s->cfg, s->g, &t, s->param_rows, &L);
  const char *bad = check_fit(s->cfg, s->g, &t, &L);
  if (bad) {
    s->why = bad;
    return;
  }
  struct tile_ctx c = {s->cfg, s->g, t, L};
  uint64_t bus;
  uint64_t bound = s->found == s->want ? s->best[s->want - 1].est_cycles : UINT64_MAX;
  if (evaluate(&c, bound, &bus) != 0) {
    if (!s->found) s->why = "UOP too small for the micro-op sets";
    return;
  }
  int at = s->found; /* insertion point: after every one at least as good */
  while (at > 0 && (c.t.est_cycles < s->best[at - 1].est_cycles ||
                    (c.t.est_cycles == s->best[at - 1].est_cycles && bus < s->best_bus[at - 1])))
    at--;
  if (at >= s->want) return;
  int n = s->found < s->want ? s->found : s->want - 1;
  memmove(&s->best[at + 1], &s->best[at], (size_t)(n - at) * sizeof s->best[0]);
  memmove(&s->best_bus[at + 1], &s->best_bus[at], (size_t)(n - at) * sizeof s->best_bus[0]);
  s->best[at] = c.t, s->best_bus[at] = bus;
  if (s->found < s->want) s->found++;
}

/* Column tiles only when whole rows do not fit: the widest few that do. */
static int32_t column_sizes(struct search *s, const struct lower_tiling *base, int32_t *out) {
  int32_t all[TILE_SIZES_MAX], n = tile_distinct_sizes(s->g->out_w, all), k = 0;
  for (int32_t i = 0; i < n && k < 3; i++) {
    struct lower_tiling t = *base;
    struct tile_layout L;
    t.th = 1;
    t.tw = all[i];
    counts(s->g, &t);
    layout(s->cfg, s->g, &t, s->param_rows, &L);
    if (!check_fit(s->cfg, s->g, &t, &L)) out[k++] = all[i];
  }
  return k;
}

static void search_rows(struct search *s, struct lower_tiling t) {
  if (s->g->pool) { /* two whole rows (lower_conv_pool.c) */
    t.th = 2, t.tw = s->g->out_w;
    try_tiling(s, t);
    return;
  }
  int32_t tws[3], ntw = column_sizes(s, &t, tws);
  int32_t ths[TILE_SIZES_MAX], nth = tile_distinct_sizes(s->g->out_h, ths);
  for (int32_t a = 0; a < ntw; a++) {
    t.tw = tws[a];
    for (int32_t b = 0; b < nth; b++) {
      t.th = ths[b];
      try_tiling(s, t);
    }
  }
}

int tile_search_top(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                    struct lower_tiling *top, int want, const char **why) {
  struct search s = {cfg, g, param_rows, {{0}}, {0}, 0, want < TILE_TOP_MAX ? want : TILE_TOP_MAX, "no tiling fits"};
  LOOM_ASSERT(want >= 1);
  int32_t tcos[TILE_SIZES_MAX], ntco = tile_distinct_sizes(g->cob, tcos);
  int32_t tcis[TILE_SIZES_MAX], ntci = tile_distinct_sizes(g->cib, tcis);
  for (int order = 0; order < TILE_ORDER_COUNT; order++) {
    for (int wgt = 0; wgt < TILE_WGT_COUNT; wgt++) {
      for (int32_t a = 0; a < ntco; a++) {
        if (order == TILE_ORDER_CHANNEL && tcos[a] == g->cob) continue; /* same walk */
        if (g->pool && (order != TILE_ORDER_SPATIAL || tcos[a] != g->cob)) continue;
        for (int32_t b = 0; b < (g->mode == LOWER_GEMM_DENSE ? ntci : 1); b++) {
          struct lower_tiling t = {0};
          t.order = (enum tile_order)order;
          t.wgt = (enum tile_wgt)wgt;
          t.tco = tcos[a];
          t.tci = g->mode == LOWER_GEMM_DENSE ? tcis[b] : tcos[a];
          search_rows(&s, t);
        }
      }
    }
  }
  if (!s.found) {
    if (why) *why = s.why;
    return 0;
  }
  for (int i = 0; i < s.found; i++) top[i] = s.best[i], counts(g, &top[i]);
  return s.found;
}

int tile_search(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                struct lower_tiling *best, struct tile_layout *L, const char **why) {
  if (!tile_search_top(cfg, g, param_rows, best, 1, why)) return -1;
  layout(cfg, g, best, param_rows, L);
  return 0;
}

void tile_layout_of(const struct loom_hw_config *cfg, const struct lower_geom *g, uint32_t param_rows,
                    const struct lower_tiling *t, struct tile_layout *L) {
  layout(cfg, g, t, param_rows, L);
}
