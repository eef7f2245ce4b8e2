/*
 * lower_conv_emit.c - the instruction stream of a convolution job
 * (lower_conv.c decides the geometry, the tiling and the constants; see its
 * opening comment for the per-chunk program).  Per chunk: the input and
 * weight loads, the GEMM over the micro-op set of the chunk's buffer halves
 * (built once per combination and cached), the first chunk's bias move,
 * the last chunk's requantization or int32 byte-lane tail, the fused
 * residual Add, and the stores; emit.c's pipeline wires the tokens.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

/* ---- one chunk ---- */

struct conv_emit {
  struct lower_program *p;
  const struct lower_qconv *l;
  const struct tile_ctx *c;
  struct conv_consts k;
  struct loom_uop *scratch;
  uint32_t cache_key[TILE_MAX_SETS][3], cache_begin[TILE_MAX_SETS], ncache; /* GEMM sets built */
};

/* Micro-op set (output row, kh, kw, output column) for the given bases. */
static uint32_t gemm_set(struct conv_emit *e, uint32_t acc, uint32_t inp, uint32_t wgt) {
  for (uint32_t i = 0; i < e->ncache; i++)
    if (e->cache_key[i][0] == acc && e->cache_key[i][1] == inp && e->cache_key[i][2] == wgt)
      return e->cache_begin[i];
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  int32_t th = e->c->t.th, tw = e->c->t.tw, sh = g->row_skip ? 1 : g->stride_h;
  uint32_t n = 0;
  for (int32_t oy = 0; oy < th; oy++)
    for (int32_t kh = 0; kh < g->k_h; kh++)
      for (int32_t kw = 0; kw < g->k_w; kw++)
        for (int32_t ox = 0; ox < tw; ox++) {
          struct loom_uop *u = &e->scratch[n++];
          u->acc = acc + (uint32_t)(oy * tw + ox);
          u->inp = inp + (uint32_t)((oy * sh + kh * g->dil_h) * (int32_t)L->iw + ox * g->stride_w +
                                    kw * g->dil_w);
          u->wgt = wgt + (g->wgt_uniform ? 0 : (uint32_t)(kh * g->k_w + kw));
        }
  uint32_t b = emit_uop_set(e->p, e->scratch, n);
  if (e->ncache < TILE_MAX_SETS) {
    e->cache_key[e->ncache][0] = acc, e->cache_key[e->ncache][1] = inp, e->cache_key[e->ncache][2] = wgt;
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
    struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, st->inp_base + (uint32_t)i * e->c->L.inp_block,
                                   LOWER_SEG_IN, off, (uint32_t)w.ny, (uint32_t)w.nx, stride);
    in.mem.y_pad_top = (uint32_t)w.pt, in.mem.y_pad_bottom = (uint32_t)w.pb;
    in.mem.x_pad_left = (uint32_t)w.pl, in.mem.x_pad_right = (uint32_t)w.pr;
    in.mem.pad_value = e->l->in_zero_point;
    emit_vec_push(v, &in);
  }
}

static void load_weights(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                         struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  uint32_t kk = e->c->L.kk;
  struct loom_insn in;
  if (g->wgt_uniform) {
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_CONST, e->k.wgt_row0, 1, 1, 1);
  } else if (g->mode == LOWER_GEMM_DIAG) {
    uint32_t x = (uint32_t)ch->nco * kk;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_CONST,
                  e->k.wgt_row0 + (uint32_t)ch->co0 * kk, 1, x, x);
  } else {
    uint32_t off = e->k.wgt_row0 + (uint32_t)(ch->co0 * g->cib + ch->ci0) * kk;
    in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, st->wgt_base, LOWER_SEG_CONST, off, (uint32_t)ch->nco,
                  (uint32_t)ch->nci * kk, (uint32_t)g->cib * kk);
  }
  emit_vec_push(v, &in);
}

/* ALU over a tile's ACC rows: io = output blocks, ii = pixels; the source
 * is parameter row `src` + block. */
static struct loom_insn tile_alu(struct conv_emit *e, uint32_t op, const struct tile_chunk *ch,
                                 uint32_t acc, uint32_t src) {
  struct loom_uop u = {acc, src, 0};
  uint32_t b = emit_uop_set(e->p, &u, 1);
  return emit_alu(op, b, b + 1, (uint32_t)ch->nco, (uint32_t)(ch->rows * e->c->t.tw),
                  e->c->L.tile_pix, 1, 1, 0);
}

static struct loom_insn chunk_gemm(struct conv_emit *e, const struct tile_chunk *ch,
                                   const struct tile_step *st) {
  const struct tile_layout *L = &e->c->L;
  uint32_t b = gemm_set(e, st->acc_base, st->inp_base, st->wgt_base);
  uint32_t end = b + (uint32_t)ch->rows * L->kk * (uint32_t)e->c->t.tw; /* prefix for short tiles */
  if (e->c->g->mode == LOWER_GEMM_DIAG)
    return emit_gemm(b, end, 1, (uint32_t)ch->nco, 0, L->tile_pix, 0, L->inp_block, 0,
                     e->c->g->wgt_uniform ? 0 : L->kk);
  return emit_gemm(b, end, (uint32_t)ch->nci, (uint32_t)ch->nco, 0, L->tile_pix, L->inp_block, 0, L->kk,
                   (uint32_t)ch->nci * L->kk);
}

static void store_tile(struct conv_emit *e, const struct tile_chunk *ch, uint32_t acc,
                       struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  int32_t tw = e->c->t.tw;
  for (int32_t b = 0; b < ch->nco; b++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + b) * g->out_h + ch->oy0) * g->out_w + ch->ox0);
    uint32_t sram = acc + (uint32_t)b * e->c->L.tile_pix;
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

/* The residual tile into INP after the chunk's inputs (and, once, the
 * b_weight x identity row into the last WGT row). */
static void load_residual(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                          struct emit_vec *v) {
  const struct lower_geom *g = e->c->g;
  const struct tile_layout *L = &e->c->L;
  int32_t tw = e->c->t.tw;
  for (int32_t b = 0; b < ch->nco; b++) {
    uint32_t off = (uint32_t)((((int64_t)ch->n * g->cob + ch->co0 + b) * g->out_h + ch->oy0) * g->out_w + ch->ox0);
    uint32_t sram = st->inp_base + L->res_offset + (uint32_t)b * L->tile_pix;
    struct loom_insn in =
        tw == g->out_w ? emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, LOWER_SEG_IN2, off, 1,
                                  (uint32_t)(ch->rows * tw), (uint32_t)(ch->rows * tw))
                       : emit_mem(LOOM_OP_LOAD, LOOM_BUF_INP, sram, LOWER_SEG_IN2, off, (uint32_t)ch->rows,
                                  (uint32_t)tw, (uint32_t)g->out_w);
    emit_vec_push(v, &in);
  }
}

/* ALU with the immediate over a tile's ACC rows. */
static struct loom_insn tile_alu_imm(struct conv_emit *e, uint32_t op, const struct tile_chunk *ch,
                                     uint32_t acc, int32_t imm) {
  struct loom_insn in = tile_alu(e, op, ch, acc, 0);
  in.alu.use_imm = 1;
  in.alu.imm = imm;
  return in;
}

/* After the convolution's REQUANT (q in ACC):
 *   MUL a_weight; GEMM += b_weight x residual; ADD -(a_w * zp_q + b_w * zp_r); REQUANT. */
static void residual_tail(struct conv_emit *e, const struct tile_chunk *ch, const struct tile_step *st,
                          struct emit_vec *main, struct emit_vec *post) {
  const struct lower_qresidual *r = e->l->residual;
  const struct tile_layout *L = &e->c->L;
  uint32_t n = (uint32_t)(ch->rows * e->c->t.tw), inp = st->inp_base + L->res_offset;
  struct loom_insn in = tile_alu_imm(e, LOOM_ALU_MUL, ch, st->acc_base, r->a_weight);
  emit_vec_push(main, &in);
  in = emit_qcfg(r->multiplier, r->shift, r->out_zero_point, r->clamp_lo, r->clamp_hi, r->round_even);
  emit_vec_push(main, &in);
  for (uint32_t i = 0; i < L->tile_pix; i++) {
    uint32_t p = i; /* pixel i of the tile: ACC and the residual tile share the layout */
    struct loom_uop u = {st->acc_base + p, inp + p, L->res_wgt_row};
    e->scratch[i] = u;
  }
  uint32_t b = emit_uop_set(e->p, e->scratch, L->tile_pix);
  in = emit_gemm(b, b + n, 1, (uint32_t)ch->nco, 0, L->tile_pix, 0, L->tile_pix, 0, 0);
  emit_vec_push(main, &in); /* reads INP: stays before the chunk's C2L push */
  int32_t k = -(r->a_weight * e->l->out_zero_point + r->b_weight * r->b_zero_point);
  if (k != 0) {
    in = tile_alu_imm(e, LOOM_ALU_ADD, ch, st->acc_base, k);
    emit_vec_push(post, &in);
  }
  in = tile_alu(e, LOOM_ALU_REQUANT, ch, st->acc_base, 0);
  in.alu.use_imm = 1; /* multiplier from QCFG */
  emit_vec_push(post, &in);
}

/* Byte k of the int32 accumulator into lane k of each group of four
 * (acc_out_rows): MAX, ADD, SHR with the constant rows, MUL 2^24, SHR 24. */
static void acc_out_tail(struct conv_emit *e, const struct tile_chunk *ch, uint32_t acc, struct emit_vec *post) {
  static const uint32_t ops[LOWER_ACC_ROWS] = {LOOM_ALU_MAX, LOOM_ALU_ADD, LOOM_ALU_SHR, LOOM_ALU_MUL};
  uint32_t row0 = e->k.param_row0 + (uint32_t)e->c->g->cob;
  struct loom_insn in;
  for (int r = 0; r < LOWER_ACC_ROWS; r++) {
    in = tile_alu(e, ops[r], ch, acc, row0 + (uint32_t)r);
    in.alu.src_factor_out = 0; /* the same row for every output block */
    emit_vec_push(post, &in);
  }
  in = tile_alu_imm(e, LOOM_ALU_SHR, ch, acc, 24);
  emit_vec_push(post, &in);
}

static void conv_chunk(struct conv_emit *e, struct tile_state *s, const struct tile_chunk *ch,
                       struct emit_chunk *out) {
  struct tile_step st;
  uint32_t cob = (uint32_t)e->c->g->cob;
  tile_step(e->c, s, ch, &st);
  emit_chunk_reset(out);
  out->k = ch->k, out->o = ch->o, out->first = ch->first, out->last = ch->last;
  if (st.load_inp) load_inputs(e, ch, &st, &out->load);
  if (st.load_wgt) load_weights(e, ch, &st, &out->load);
  if (e->l->residual && ch->last) load_residual(e, ch, &st, &out->load);
  if (e->l->residual && ch->k == 0) {
    struct loom_insn w = emit_mem(LOOM_OP_LOAD, LOOM_BUF_WGT, e->c->L.res_wgt_row, LOWER_SEG_CONST,
                                  e->k.res_row, 1, 1, 1);
    emit_vec_push(&out->load, &w);
  }
  struct loom_insn in;
  if (ch->first) {
    in = tile_alu(e, LOOM_ALU_MOV, ch, st.acc_base, e->k.param_row0 + (uint32_t)ch->co0);
    emit_vec_push(&out->pre, &in);
  }
  in = chunk_gemm(e, ch, &st);
  emit_vec_push(&out->main, &in);
  if (ch->last && e->l->residual) {
    in = emit_qcfg(0, e->l->shift, e->l->out_zero_point, e->l->clamp_lo, e->l->clamp_hi, e->l->round_even);
    emit_vec_push(&out->main, &in);
    in = tile_alu(e, LOOM_ALU_REQUANT, ch, st.acc_base, e->k.param_row0 + cob + (uint32_t)ch->co0);
    emit_vec_push(&out->main, &in);
    residual_tail(e, ch, &st, &out->main, &out->post);
  } else if (ch->last && e->c->g->acc_out) {
    acc_out_tail(e, ch, st.acc_base, &out->post);
  } else if (ch->last) {
    in = tile_alu(e, LOOM_ALU_REQUANT, ch, st.acc_base, e->k.param_row0 + cob + (uint32_t)ch->co0);
    emit_vec_push(&out->post, &in);
  }
  if (ch->last) store_tile(e, ch, st.acc_base, &out->store);
}

/* ---- the job ---- */

void lower_emit_conv(struct lower_program *p, const struct lower_qconv *l, const struct tile_ctx *c,
                      const struct conv_consts *k) {
  struct conv_emit e = {p, l, c, *k, NULL, {{0}}, {0}, 0};
  e.scratch = malloc(sizeof *e.scratch * (tile_gemm_set_size(c->g, &c->t) + c->L.tile_pix));
  LOOM_ASSERT(e.scratch != NULL);
  uint32_t uload = emit_uop_load(p);
  uint64_t acc_row = loom_hw_row_bytes(p->cfg, LOOM_BUF_ACC, 0);
  struct loom_insn in = emit_mem(LOOM_OP_LOAD, LOOM_BUF_ACC, k->param_row0, LOWER_SEG_CONST,
                                 (uint32_t)(p->param_offset / acc_row), 1, c->L.param_rows,
                                 c->L.param_rows);
  emit_insn(p, &in);
  in = emit_qcfg(0, l->shift, l->out_zero_point, l->clamp_lo, l->clamp_hi, l->round_even);
  emit_insn(p, &in);
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

