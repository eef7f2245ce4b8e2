/*
 * lower_conv_emit.c - the instruction stream of a folded convolution: per
 * chunk of the tiling (tile.c), with A = th x tw ACC rows per output block
 * and I = ih x iw INP rows per input block,
 *
 *   LOAD INP     one 2-D transfer per input block, padding = input zero point
 *   LOAD WGT     the chunk's weight slice, unless its half already holds it
 *   QCFG         (first chunk of a tile) the tile's PAR rows: par_base = co0
 *   GEMM         for ci < nci: for co < nco: for each micro-op (oy, ox, kh, kw):
 *                  ACC[acc + oy*tw + ox + co*A] += INP[inp + (oy*s + kh*d)*iw + ox*s + kw*d + ci*I]
 *                                                x WGT[wgt + kh*kw + kw + ci*kk + co*nci*kk]
 *                (transposed runtime weights, kk = 1: WGT[wgt + ci*nco + co],
 *                the order one LOAD of their [ci][co] DRAM rows writes)
 *                `first` on the tile's first chunk, `last` on its last: with
 *                GCFG period kk the first tap of each output pixel overwrites
 *                its row and the last one writes the epilogue E (bias,
 *                requantization, clamps) into OUT
 *   STORE        one transfer per output block
 *
 * so the whole epilogue of ISA v1 (a bias MOV and a REQUANT per output row,
 * each two cycles) rides on the GEMM micro-ops.  The micro-ops enumerate
 * (output row, output column, kh, kw), taps innermost: a pixel's taps are a
 * group of kk consecutive micro-ops, which is what `first`/`last` select
 * (consecutive micro-ops on one row are fine: the GEMM core forwards).  The
 * set is built once per buffer-half combination and reused by every tile;
 * a shorter last row tile runs a prefix of it (the output row is the
 * outermost micro-op dimension).  The two GEMM loops run over input and
 * output blocks, the output block being the inner one, which is the PAR
 * row's index (docs/isa.md: p = par_base + j).
 *
 * Depthwise layers (LOWER_GEMM_DW) use depthwise GEMM micro-ops instead:
 * one micro-op per output pixel computes all its taps (GCFG describes the
 * window in INP), the output columns of a row run right to left so the
 * hardware's window slides (docs/rtl.md), and a window with more taps than
 * lanes is split into passes of whole window rows, one GEMM (and GCFG)
 * each.  The weights are one WGT row per block and pass (pack_wgt_dw).
 *
 * A residual Add (lower_qconv.residual) is fused at the tile's end: the
 * residual tile comes into INP with the last chunk, and
 *   ALU EPI (q = the convolution's epilogue, into ACC), ALU MUL a_weight,
 *   QCFG of the Add (bias -(a_w zp_q + b_w zp_r), its multiplier),
 *   GEMM += b_weight x identity x residual, `last` with period 1
 * gives exactly lower_add() of the convolution's output and the residual,
 * for three compute cycles per output row.  A fully connected layer's
 * residual (geom.nc_rows) is [N, C]: one LOAD brings the tile's nco blocks
 * of each of its rows (contiguous in DRAM, the rows cob apart), so in INP
 * it is [row][block], which the residual GEMM's micro-ops (row i at i * nco)
 * and inner loop (block stride 1) read.
 *
 * int32 results (LOWER_CONV_ACC_OUT) keep the version 1 epilogue: a bias
 * MOV from ACC parameter rows and five ALU instructions that leave byte k
 * of the accumulator in lane k (acc_out_tail; docs/lowering.md).
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

struct conv_emit {
  struct lower_program *p;
  const struct lower_qconv *l;
  const struct tile_ctx *c;
  struct lower_conv_consts k;
  struct loom_uop *scratch;
  uint32_t cache_key[TILE_MAX_SETS][3], cache_begin[TILE_MAX_SETS], ncache; /* GEMM sets built */
  int32_t par_co0[2];   /* first block whose PAR rows each slot holds (not resident), -1: none */
};

/* Window rows of depthwise pass p. */
static uint32_t pass_rows(const struct lower_geom *g, int32_t p) {
  int32_t left = g->k_h - p * g->dw_rows;
  return (uint32_t)(left < g->dw_rows ? left : g->dw_rows);
}

static uint32_t build_set(struct conv_emit *e, uint32_t acc, uint32_t inp, uint32_t wgt, int32_t pass) {
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  int32_t th = e->c->t.th, tw = e->c->t.tw, sh = g->row_skip ? 1 : g->stride_h;
  uint32_t n = 0;
  if (g->mode == LOWER_GEMM_DW) { /* a micro-op per pixel, columns right to left */
    int32_t r0 = pass * g->dw_rows;
    for (int32_t oy = 0; oy < th; oy++)
      for (int32_t ox = tw - 1; ox >= 0; ox--) {
        struct loom_uop *u = &e->scratch[n++];
        u->acc = acc + (uint32_t)(oy * tw + ox);
        u->inp = inp + (uint32_t)((oy * sh + r0 * g->dil_h) * (int32_t)L->iw + ox * g->stride_w);
        u->wgt = wgt + (uint32_t)pass;
      }
    return emit_uop_set(e->p, e->scratch, n);
  }
  for (int32_t oy = 0; oy < th; oy++)
    for (int32_t ox = 0; ox < tw; ox++)
      for (int32_t kh = 0; kh < g->k_h; kh++)
        for (int32_t kw = 0; kw < g->k_w; kw++) {
          struct loom_uop *u = &e->scratch[n++];
          u->acc = acc + (uint32_t)(oy * tw + ox);
          u->inp = inp + (uint32_t)((oy * sh + kh * g->dil_h) * (int32_t)L->iw + ox * g->stride_w +
                                    kw * g->dil_w);
          u->wgt = wgt + (g->wgt_uniform ? 0 : (uint32_t)(kh * g->k_w + kw));
        }
  return emit_uop_set(e->p, e->scratch, n);
}

/* The micro-op set for the given bases (and depthwise pass), built once. */
static uint32_t gemm_set(struct conv_emit *e, uint32_t acc, uint32_t inp, uint32_t wgt, int32_t pass) {
  uint32_t key_inp = inp + (uint32_t)pass * (1u << 20); /* passes differ in their rows */
  for (uint32_t i = 0; i < e->ncache; i++)
    if (e->cache_key[i][0] == acc && e->cache_key[i][1] == key_inp && e->cache_key[i][2] == wgt)
      return e->cache_begin[i];
  uint32_t b = build_set(e, acc, inp, wgt, pass);
  if (e->ncache < TILE_MAX_SETS) {
    e->cache_key[e->ncache][0] = acc, e->cache_key[e->ncache][1] = key_inp, e->cache_key[e->ncache][2] = wgt;
    e->cache_begin[e->ncache++] = b;
  }
  return b;
}

static void load_inputs(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                        struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  struct tile_window w;
  tile_window(g, ch->oy0, ch->rows, ch->ox0, e->c->t.tw, &w);
  for (int32_t i = 0; i < ch->nci; i++) {
    int32_t blk = (ch->ci0 + i) % g->cib_data; /* weight passes read the input again */
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cib_data + blk) * g->in_h + w.y0) * g->in_w + w.x0);
    uint32_t stride = (uint32_t)(g->row_skip ? g->stride_h * g->in_w : g->in_w);
    if (g->nc_rows) off = (uint32_t)((int64_t)w.y0 * g->cib_data + blk), stride = (uint32_t)g->cib_data;
    struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, st->inp_base + (uint32_t)i * e->c->L.inp_block,
                                   LOWER_SEG_IN, off, (uint32_t)w.ny, (uint32_t)w.nx, stride);
    in.mem.y_pad_top = (uint32_t)w.pt, in.mem.y_pad_bottom = (uint32_t)w.pb;
    in.mem.x_pad_left = (uint32_t)w.pl, in.mem.x_pad_right = (uint32_t)w.pr + e->c->L.iw_pad;
    in.mem.pad_value = e->l->in_zero_point;
    emit_vec_push(v, &in);
  }
}

static void load_weights(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                         struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  uint32_t kk = e->c->L.kk, per = g->mode == LOWER_GEMM_DW ? (uint32_t)g->dw_passes : kk;
  struct loom_insn in;
  if (g->wgt_uniform) {
    uint32_t x = g->mode == LOWER_GEMM_DW ? per : 1;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_CONST, e->k.wgt_row0, 1, x, x);
  } else if (g->mode != LOWER_GEMM_DENSE) {
    uint32_t x = (uint32_t)ch->nco * per;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_CONST,
                  e->k.wgt_row0 + (uint32_t)ch->co0 * per, 1, x, x);
  } else if (g->wgt_trans) { /* DRAM [ci][co] read transposed, kept [ci][co] in SRAM (chunk_gemms) */
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_IN2, (uint32_t)(ch->ci0 * g->cob + ch->co0),
                  (uint32_t)ch->nci, (uint32_t)ch->nco, (uint32_t)g->cob);
    in.mem.wgt_transpose = 1;
  } else {
    uint32_t off = e->k.wgt_row0 + (uint32_t)(ch->co0 * g->cib + ch->ci0) * kk;
    uint32_t seg = g->wgt_runtime ? LOWER_SEG_IN2 : LOWER_SEG_CONST;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, seg, off, (uint32_t)ch->nco,
                  (uint32_t)ch->nci * kk, (uint32_t)g->cib * kk);
  }
  emit_vec_push(v, &in);
}

/* ALU over a tile's ACC rows: io = output blocks, ii = pixels; the source
 * is parameter row `src` + block (version 1 epilogue). */
static struct loom_insn tile_alu(struct conv_emit *e, uint32_t op, const struct tile_chunk *ch,
                                 uint32_t acc, uint32_t src) {
  struct loom_uop u = {acc, src, 0};
  uint32_t b = emit_uop_set(e->p, &u, 1);
  return emit_alu(op, b, b + 1, (uint32_t)ch->nco, (uint32_t)(ch->rows * e->c->t.tw),
                  e->c->L.tile_pix, 1, 1, 0);
}

/* ALU with an immediate over a tile's rows, the output block as the inner
 * loop (j: the PAR row of EPI). */
static struct loom_insn tile_alu_imm(struct conv_emit *e, uint32_t op, const struct tile_chunk *ch,
                                     uint32_t acc, int32_t imm) {
  struct loom_uop u = {acc, 0, 0};
  uint32_t b = emit_uop_set(e->p, &u, 1);
  struct loom_insn in = emit_alu(op, b, b + 1, (uint32_t)(ch->rows * e->c->t.tw), (uint32_t)ch->nco, 1,
                                 e->c->L.tile_pix, 0, 0);
  in.alu.use_imm = 1;
  in.alu.imm = imm;
  return in;
}

/* The GEMMs of a chunk (one, or one per depthwise pass with its GCFG). */
static void chunk_gemms(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                        struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  int epi_last = ch->last && g->epi && !g->residual && !g->pool;
  struct loom_insn in;
  if (g->mode != LOWER_GEMM_DW) {
    uint32_t b = gemm_set(e, st->acc_base, st->inp_base, st->wgt_base, 0);
    uint32_t end = b + (uint32_t)ch->rows * L->kk * (uint32_t)e->c->t.tw; /* prefix for short tiles */
    if (g->mode == LOWER_GEMM_DIAG)
      in = emit_gemm(b, end, 1, (uint32_t)ch->nco, 0, L->tile_pix, 0, L->inp_block, 0, g->wgt_uniform ? 0 : L->kk);
    else
      in = emit_gemm(b, end, (uint32_t)ch->nci, (uint32_t)ch->nco, 0, L->tile_pix, L->inp_block, 0,
                     g->wgt_trans ? (uint32_t)ch->nco : L->kk, g->wgt_trans ? 1 : (uint32_t)ch->nci * L->kk);
    in.gemm.first = ch->first && g->epi;
    in.gemm.last = epi_last;
    emit_vec_push(v, &in);
    return;
  }
  for (int32_t p = 0; p < g->dw_passes; p++) {
    if (g->dw_passes > 1) {
      in = emit_gcfg(1, pass_rows(g, p), (uint32_t)g->k_w, (uint32_t)g->dil_h * L->iw, (uint32_t)g->dil_w);
      emit_vec_push(v, &in);
    }
    uint32_t b = gemm_set(e, st->acc_base, st->inp_base, st->wgt_base, p);
    uint32_t end = b + (uint32_t)ch->rows * (uint32_t)e->c->t.tw;
    in = emit_gemm(b, end, 1, (uint32_t)ch->nco, 0, L->tile_pix, 0, L->inp_block, 0,
                   g->wgt_uniform ? 0 : (uint32_t)g->dw_passes);
    in.gemm.dw = 1;
    in.gemm.first = p == 0 && g->epi;
    in.gemm.last = epi_last && p == g->dw_passes - 1;
    emit_vec_push(v, &in);
  }
}

static void store_tile(struct conv_emit *e, const struct tile_chunk *ch, uint32_t acc,
                       struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  int32_t tw = e->c->t.tw;
  for (int32_t b = 0; b < ch->nco; b++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + b) * g->out_h + ch->oy0) * g->out_w + ch->ox0);
    uint32_t sram = acc + (uint32_t)b * e->c->L.tile_pix;
    if (g->nc_rows) { /* one pixel per DRAM row, blocks apart */
      off = (uint32_t)((int64_t)ch->oy0 * g->cob + ch->co0 + b);
      struct loom_insn nc = emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, sram, LOWER_SEG_OUT, off, (uint32_t)ch->rows, 1,
                                     (uint32_t)g->cob);
      emit_vec_push(v, &nc);
      continue;
    }
    struct loom_insn in =
        tw == g->out_w
            ? emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, sram, LOWER_SEG_OUT, off, 1,
                       (uint32_t)(ch->rows * tw), (uint32_t)(ch->rows * tw))
            : emit_mem(LOOM_OP_STORE, LOOM_BUF_OUT, sram, LOWER_SEG_OUT, off, (uint32_t)ch->rows,
                       (uint32_t)tw, (uint32_t)g->out_w);
    emit_vec_push(v, &in);
  }
}

/* ---- the fused residual Add ---- */

/* The residual tile into INP after the chunk's inputs. */
static void load_residual(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                          struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  int32_t tw = e->c->t.tw;
  for (int32_t b = 0; b < ch->nco; b++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + b) * g->out_h + ch->oy0) * g->out_w + ch->ox0);
    uint32_t sram = st->inp_base + L->res_offset + (uint32_t)b * L->tile_pix;
    if (g->nc_rows) { /* [N, C]: the tile's nco blocks of each row in one transfer, [row][block] in INP */
      off = (uint32_t)((int64_t)ch->oy0 * g->cob + ch->co0);
      struct loom_insn nc = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, st->inp_base + L->res_offset, LOWER_SEG_IN2, off,
                                     (uint32_t)ch->rows, (uint32_t)ch->nco, (uint32_t)g->cob);
      emit_vec_push(v, &nc);
      return;
    }
    struct loom_insn in =
        tw == g->out_w ? emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, LOWER_SEG_IN2, off, 1,
                                  (uint32_t)(ch->rows * tw), (uint32_t)(ch->rows * tw))
                       : emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, LOWER_SEG_IN2, off, (uint32_t)ch->rows,
                                  (uint32_t)tw, (uint32_t)g->out_w);
    emit_vec_push(v, &in);
  }
}

/* After the convolution's GEMMs (raw sums in ACC):
 *   EPI (q), MUL a_weight, [GCFG period 1], QCFG of the Add,
 *   GEMM += b_weight x residual with `last`: OUT = the Add's requantization. */
static void residual_tail(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                          struct emit_vec *main) {
  const struct lower_qresidual *r = e->l->residual;
  const struct tile_layout *L = &e->c->L;
  uint32_t n = (uint32_t)(ch->rows * e->c->t.tw), inp = st->inp_base + L->res_offset;
  struct loom_insn in = tile_alu_imm(e, LOOM_ALU_EPI, ch, st->acc_base, 0);
  emit_vec_push(main, &in);
  in = tile_alu_imm(e, LOOM_ALU_MUL, ch, st->acc_base, r->a_weight);
  emit_vec_push(main, &in);
  if (e->k.period != 1) {
    in = emit_gcfg(1, 0, 0, 0, 0);
    emit_vec_push(main, &in);
  }
  int64_t k = -((int64_t)r->a_weight * e->l->out_zero_point + (int64_t)r->b_weight * r->b_zero_point);
  in = emit_qcfg(r->multiplier, r->shift, r->out_zero_point, r->clamp_lo, r->clamp_hi, r->round_even);
  in.qcfg.par_src = 1, in.qcfg.bias = (int32_t)k;
  emit_vec_push(main, &in);
  uint32_t nc = e->c->g->nc_rows ? (uint32_t)ch->nco : 1; /* [row][block] residual (load_residual) */
  for (uint32_t i = 0; i < L->tile_pix; i++) { /* pixel i: ACC and the residual tile share the layout */
    struct loom_uop u = {st->acc_base + i, inp + i * nc, L->res_wgt_row};
    e->scratch[i] = u;
  }
  uint32_t b = emit_uop_set(e->p, e->scratch, L->tile_pix);
  in = emit_gemm(b, b + n, 1, (uint32_t)ch->nco, 0, L->tile_pix, 0, e->c->g->nc_rows ? 1 : L->tile_pix, 0, 0);
  in.gemm.last = 1;
  emit_vec_push(main, &in); /* reads INP: stays before the chunk's C2L push */
}

/* Byte k of the int32 accumulator into lane k of each group of four
 * (lower_conv.c's constant rows): MAX, ADD, SHR with the constant rows,
 * MUL 2^24, SHR 24. */
static void acc_out_tail(struct conv_emit *e, const struct tile_chunk *ch, uint32_t acc, struct emit_vec *post) {
  static const uint32_t ops[LOWER_ACC_OUT_ROWS] = {LOOM_ALU_MAX, LOOM_ALU_ADD, LOOM_ALU_SHR, LOOM_ALU_MUL};
  uint32_t row0 = e->k.param_row0 + (uint32_t)e->c->g->cob;
  struct loom_insn in;
  for (int r = 0; r < LOWER_ACC_OUT_ROWS; r++) {
    in = tile_alu(e, ops[r], ch, acc, row0 + (uint32_t)r);
    in.alu.src_factor_out = 0; /* the same row for every output block */
    emit_vec_push(post, &in);
  }
  in = tile_alu(e, LOOM_ALU_SHR, ch, acc, 0);
  in.alu.use_imm = 1, in.alu.imm = 24;
  emit_vec_push(post, &in);
}

/* The tile's PAR rows, on the load module with the chunk's operands: all
 * of them once when they fit PAR, else the tile's blocks into slot o % 2
 * (the slot's last reader, tile o - 2 or before, finished the GEMMs of
 * chunk k - 2, which the load of chunk k waits for). */
static void load_par(struct conv_emit *e, const struct tile_chunk *ch, struct emit_vec *load) {
  uint64_t prow = loom_hw_row_bytes(e->p->cfg, LOOM_BUF_PAR, 0);
  uint32_t row0 = (uint32_t)(e->k.par_offset / prow), n = (uint32_t)e->c->g->cob;
  struct loom_insn in;
  if (e->c->L.par_resident) {
    if (ch->k != 0) return;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_PAR, 0, LOWER_SEG_CONST, row0, 1, n, n);
  } else {
    uint32_t slot = ch->o % 2;
    if (e->par_co0[slot] == ch->co0) return;
    e->par_co0[slot] = ch->co0;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_PAR, slot * (uint32_t)e->c->t.tco, LOWER_SEG_CONST, row0 + (uint32_t)ch->co0,
                  1, (uint32_t)ch->nco, (uint32_t)ch->nco);
  }
  emit_vec_push(load, &in);
}

/* The tile's start: the QCFG that points the epilogue at its PAR rows, the
 * GEMM period when the previous tile's residual changed it. */
static void tile_start(struct conv_emit *e, const struct tile_chunk *ch, struct emit_vec *pre) {
  const struct lower_qconv *l = e->l;
  uint32_t par_base = e->c->L.par_resident ? (uint32_t)ch->co0 : (ch->o % 2) * (uint32_t)e->c->t.tco;
  struct loom_insn in = emit_qcfg_par(par_base, l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
  in.qcfg.act = e->k.lut_row >= 0;
  emit_vec_push(pre, &in);
  if (l->residual && e->k.period != 1 && ch->k > 0) {
    in = emit_gcfg(e->k.period, 0, 0, 0, 0);
    emit_vec_push(pre, &in);
  }
}

static void conv_chunk(struct conv_emit *e, struct tile_state *s, const struct tile_chunk *ch,
                       struct emit_chunk *out) {
  const struct lower_geom *g = e->c->g;
  struct tile_step st;
  tile_step(e->c, s, ch, &st);
  emit_chunk_reset(out);
  out->k = ch->k, out->o = ch->o, out->first = ch->first, out->last = ch->last;
  if (st.load_inp) load_inputs(e, ch, &st, &out->load);
  if (st.load_wgt) load_weights(e, ch, &st, &out->load);
  if (e->l->residual && ch->last) load_residual(e, ch, &st, &out->load);
  if (g->epi && ch->first) load_par(e, ch, &out->load);
  if (e->k.lut_row >= 0 && ch->k == 0) { /* the activation table, before the first tile's GEMMs */
    struct loom_insn t = emit_mem(LOOM_OP_LOAD, LOOM_BUF_LUT, 0, LOWER_SEG_CONST, (uint32_t)e->k.lut_row, 1, 1, 1);
    emit_vec_push(&out->load, &t);
  }
  if (e->l->residual && ch->k == 0) {
    struct loom_insn w = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, e->c->L.res_wgt_row, LOWER_SEG_CONST,
                                  e->k.res_row, 1, 1, 1);
    emit_vec_push(&out->load, &w);
  }
  struct loom_insn in;
  if (ch->first && g->acc_out) {
    in = tile_alu(e, LOOM_ALU_MOV, ch, st.acc_base, e->k.param_row0 + (uint32_t)ch->co0);
    emit_vec_push(&out->pre, &in);
  } else if (ch->first) {
    tile_start(e, ch, &out->pre);
  }
  chunk_gemms(e, ch, &st, &out->main);
  if (ch->last && e->l->residual) residual_tail(e, ch, &st, &out->main);
  else if (ch->last && g->acc_out) acc_out_tail(e, ch, st.acc_base, &out->post);
  if (ch->last && g->pool) lower_conv_pool_tail(e->p, e->c, ch, &out->post, &out->store);
  else if (ch->last) store_tile(e, ch, st.acc_base, &out->store);
}

/* ---- the job ---- */

/* The prologue (compute queue): micro-ops, then the parameters (ACC rows
 * for int32 results, else the resident PAR rows) and the GEMM and
 * requantization registers. */
static void prologue(struct conv_emit *e) {
  struct lower_program *p = e->p;
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  const struct lower_qconv *l = e->l;
  struct loom_insn in;
  if (g->acc_out) {
    uint64_t acc_row = loom_hw_row_bytes(p->cfg, LOOM_BUF_ACC, 0);
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_ACC, e->k.param_row0, LOWER_SEG_CONST,
                  (uint32_t)(e->k.par_offset / acc_row), 1, L->param_rows, L->param_rows);
    emit_insn(p, &in);
    in = emit_qcfg(0, l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
    emit_insn(p, &in);
    return;
  }
  if (g->mode == LOWER_GEMM_DW)
    in = emit_gcfg(1, pass_rows(g, 0), (uint32_t)g->k_w, (uint32_t)g->dil_h * L->iw, (uint32_t)g->dil_w);
  else
    in = emit_gcfg(e->k.period, 0, 0, 0, 0);
  emit_insn(p, &in);
}

void lower_conv_emit(struct lower_program *p, const struct lower_qconv *l, const struct tile_ctx *c,
                     const struct lower_conv_consts *k) {
  struct conv_emit e = {p, l, c, *k, NULL, {{0}}, {0}, 0, {-1, -1}};
  e.scratch = malloc(sizeof *e.scratch * (tile_gemm_set_size(c->g, &c->t) + c->L.tile_pix + 1));
  LOOM_ASSERT(e.scratch != NULL);
  uint32_t uload = emit_uop_load(p);
  prologue(&e);
  struct emit_pipe pipe;
  emit_pipe_begin(&pipe, p, c->t.chunks, c->t.tiles, 1);
  struct tile_state s;
  LOOM_ASSERT(tile_state_init(&s, c) == 0);
  struct tile_iter it;
  struct emit_chunk ch;
  memset(&ch, 0, sizeof ch);
  tile_iter_init(&it, c);
  while (tile_iter_next(&it)) {
    conv_chunk(&e, &s, &it.ch, &ch);
    emit_pipe_chunk(&pipe, &ch);
  }
  emit_pipe_end(&pipe);
  emit_uop_table(p, uload);
  emit_chunk_free(&ch);
  tile_state_free(&s);
  free(e.scratch);
}
