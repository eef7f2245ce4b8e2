/*
 * pack.c - tensors into the blocked layouts the accelerator reads.
 *
 * Weights: a WGT row is a block_out x block_in int8 matrix, output lane
 * major ([o][k], docs/isa.md "State").  A dense convolution's rows are
 * ordered [out block][in block][kh][kw], so a chunk's slice (a range of out
 * blocks x a range of in blocks) is one 2-D transfer.  Depthwise weights are
 * diagonal rows ordered [block][kh][kw]: lane o of row (b, kh, kw) holds
 * w[b * block + o][kh][kw] at column o and zeros elsewhere.  Channels past
 * the real count are zero, which is what makes the padded lanes of the
 * activations don't-care: they only ever meet zero weights.
 *
 * Parameters: per-channel int32 values (corrected bias, requantization
 * multipliers) become ACC rows of block_out lanes, little-endian, exactly
 * as LOAD ACC reads them.
 *
 * Activations: NCHWc with c = block_in = block_out, one INP row per pixel
 * and block; the im2col layout of folded stems puts the (kh, kw, channel)
 * taps of an output pixel into its channels.  A runtime packs user tensors
 * with lower_act_pack() and reads results with lower_act_unpack().
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

void pack_wgt_dense(const struct loom_hw_config *cfg, const int8_t *w, int32_t out_c, int32_t in_c,
                    int32_t kk, int8_t *rows) {
  int32_t bo = cfg->block_out, bi = cfg->block_in;
  int32_t cob = tile_ceil_div(out_c, bo), cib = tile_ceil_div(in_c, bi);
  size_t row = (size_t)bo * (size_t)bi;
  memset(rows, 0, (size_t)cob * (size_t)cib * (size_t)kk * row);
  for (int32_t o = 0; o < out_c; o++)
    for (int32_t c = 0; c < in_c; c++)
      for (int32_t t = 0; t < kk; t++) {
        size_t r = ((size_t)(o / bo) * (size_t)cib + (size_t)(c / bi)) * (size_t)kk + (size_t)t;
        rows[r * row + (size_t)(o % bo) * (size_t)bi + (size_t)(c % bi)] =
            w[((size_t)o * (size_t)in_c + (size_t)c) * (size_t)kk + (size_t)t];
      }
}

void pack_wgt_diag(const struct loom_hw_config *cfg, const int8_t *w, int32_t c, int32_t kk,
                   int8_t *rows) {
  int32_t b = cfg->block_out;
  LOOM_ASSERT(cfg->block_in == cfg->block_out);
  size_t row = (size_t)b * (size_t)b;
  memset(rows, 0, (size_t)tile_ceil_div(c, b) * (size_t)kk * row);
  for (int32_t ch = 0; ch < c; ch++)
    for (int32_t t = 0; t < kk; t++) {
      size_t r = (size_t)(ch / b) * (size_t)kk + (size_t)t;
      rows[r * row + (size_t)(ch % b) * (size_t)b + (size_t)(ch % b)] = w[(size_t)ch * (size_t)kk + (size_t)t];
    }
}

void pack_wgt_identity(const struct loom_hw_config *cfg, int8_t *row) {
  int32_t b = cfg->block_out;
  memset(row, 0, (size_t)b * (size_t)b);
  for (int32_t i = 0; i < b; i++) row[(size_t)i * (size_t)b + (size_t)i] = 1;
}

void pack_wgt_dw(const struct loom_hw_config *cfg, const int8_t *w, int32_t c, int32_t k_h, int32_t k_w,
                 int32_t rows_per_pass, int8_t *rows) {
  int32_t b = cfg->block_out, passes = tile_ceil_div(k_h, rows_per_pass);
  LOOM_ASSERT(cfg->block_in == cfg->block_out && rows_per_pass * k_w <= cfg->block_in);
  size_t row = (size_t)b * (size_t)b;
  memset(rows, 0, (size_t)tile_ceil_div(c, b) * (size_t)passes * row);
  for (int32_t ch = 0; ch < c; ch++)
    for (int32_t kh = 0; kh < k_h; kh++)
      for (int32_t kw = 0; kw < k_w; kw++) {
        int32_t p = kh / rows_per_pass, r0 = p * rows_per_pass;
        int32_t n = k_h - r0 < rows_per_pass ? k_h - r0 : rows_per_pass; /* rows of this pass */
        size_t r = (size_t)(ch / b) * (size_t)passes + (size_t)p;
        size_t t = (size_t)(kw * n + (kh - r0));
        rows[r * row + (size_t)(ch % b) * (size_t)b + t] = w[((size_t)ch * (size_t)k_h + (size_t)kh) * (size_t)k_w + (size_t)kw];
      }
}

void pack_par_rows(const struct loom_hw_config *cfg, const int32_t *bias, const int32_t *mult, int32_t c,
                   uint8_t *rows) {
  int32_t bo = cfg->block_out;
  size_t lanes = (size_t)bo, row = 8 * lanes;
  LOOM_ASSERT(cfg->batch == 1);
  for (int32_t blk = 0; blk < tile_ceil_div(c, bo); blk++)
    for (size_t i = 0; i < lanes; i++) {
      size_t ch = (size_t)blk * lanes + i;
      uint32_t bv = ch < (size_t)c && bias ? (uint32_t)bias[ch] : 0, mv = ch < (size_t)c ? (uint32_t)mult[ch] : 0;
      for (int k = 0; k < 4; k++) {
        rows[(size_t)blk * row + 4 * i + (size_t)k] = (uint8_t)(bv >> (8 * k));
        rows[(size_t)blk * row + 4 * (lanes + i) + (size_t)k] = (uint8_t)(mv >> (8 * k));
      }
    }
}

void pack_acc_rows(const struct loom_hw_config *cfg, const int32_t *v, int32_t c, uint8_t *rows) {
  int32_t bo = cfg->block_out;
  size_t n = (size_t)tile_ceil_div(c, bo) * (size_t)bo;
  LOOM_ASSERT(cfg->batch == 1);
  for (size_t i = 0; i < n; i++) {
    uint32_t x = i < (size_t)c ? (uint32_t)v[i] : 0;
    for (int k = 0; k < 4; k++) rows[i * 4 + (size_t)k] = (uint8_t)(x >> (8 * k));
  }
}

void pack_bias_correct(const int8_t *w, const int32_t *bias, int32_t out_c, int32_t n_per_out,
                       int32_t zp, int32_t *out) {
  for (int32_t o = 0; o < out_c; o++) {
    int64_t sum = 0;
    for (int32_t i = 0; i < n_per_out; i++) sum += w[(size_t)o * (size_t)n_per_out + (size_t)i];
    uint32_t b = bias ? (uint32_t)bias[o] : 0;
    out[o] = (int32_t)(b - (uint32_t)((int64_t)zp * sum)); /* modulo 2^32, like the accumulator */
  }
}

/* The fewest parts: every weight needs ceil(w / 127) parts above zero and
 * ceil(-w / 128) below; greedy clamping then fills them in order. */
int lower_split_weights(const int32_t *w, size_t n, int8_t **out, uint32_t *passes) {
  int64_t need = 1;
  for (size_t i = 0; i < n; i++) {
    int64_t v = w[i], k = v > 0 ? (v + 126) / 127 : (-v + 127) / 128;
    if (k > need) need = k;
  }
  *passes = (uint32_t)need;
  *out = NULL;
  if (need > LOWER_MAX_PASSES) return -1;
  int8_t *p = malloc((size_t)need * n + 1);
  LOOM_ASSERT(p != NULL);
  for (size_t i = 0; i < n; i++) {
    int64_t rest = w[i];
    for (int64_t k = 0; k < need; k++) {
      int64_t part = rest < -128 ? -128 : rest > 127 ? 127 : rest;
      p[(size_t)k * n + i] = (int8_t)part;
      rest -= part;
    }
    LOOM_ASSERT(rest == 0);
  }
  *out = p;
  return 0;
}

/* ---- activations ---- */

uint64_t lower_act_bytes(const struct lower_act *a) {
  uint64_t b = (uint64_t)a->block;
  switch (a->layout) {
  case LOWER_ACT_NCHWC:
    return (uint64_t)a->n * (uint64_t)tile_ceil_div(a->c, a->block) * (uint64_t)a->h * (uint64_t)a->w * b;
  case LOWER_ACT_IM2COL: {
    int32_t ch = a->c * a->im2col.k_h * a->im2col.k_w;
    return (uint64_t)a->n * (uint64_t)tile_ceil_div(ch, a->block) * (uint64_t)a->im2col.out_h *
           (uint64_t)a->im2col.out_w * b;
  }
  default: return 0;
  }
}

static void pack_nchwc(const struct lower_act *a, const int8_t *src, int8_t fill, int8_t *dst) {
  int32_t B = a->block, cb = tile_ceil_div(a->c, B);
  size_t hw = (size_t)a->h * (size_t)a->w;
  for (int32_t n = 0; n < a->n; n++)
    for (int32_t b = 0; b < cb; b++)
      for (size_t p = 0; p < hw; p++)
        for (int32_t l = 0; l < B; l++) {
          int32_t ch = b * B + l;
          size_t d = (((size_t)n * (size_t)cb + (size_t)b) * hw + p) * (size_t)B + (size_t)l;
          dst[d] = ch < a->c ? src[((size_t)n * (size_t)a->c + (size_t)ch) * hw + p] : fill;
        }
}

/* Value of im2col channel `cc` of output pixel (oy, ox) of image n. */
static int8_t im2col_value(const struct lower_act *a, const int8_t *src, int32_t n, int32_t cc,
                           int32_t oy, int32_t ox) {
  const struct lower_im2col *m = &a->im2col;
  int32_t tap = cc / a->c, ch = cc % a->c;
  int32_t iy = oy * m->stride_h - m->pad_t + (tap / m->k_w) * m->dil_h;
  int32_t ix = ox * m->stride_w - m->pad_l + (tap % m->k_w) * m->dil_w;
  if (iy < 0 || iy >= a->h || ix < 0 || ix >= a->w) return (int8_t)m->pad_value;
  return src[(((size_t)n * (size_t)a->c + (size_t)ch) * (size_t)a->h + (size_t)iy) * (size_t)a->w + (size_t)ix];
}

static void pack_im2col(const struct lower_act *a, const int8_t *src, int8_t fill, int8_t *dst) {
  const struct lower_im2col *m = &a->im2col;
  int32_t B = a->block, cc_n = a->c * m->k_h * m->k_w, cb = tile_ceil_div(cc_n, B);
  size_t d = 0;
  for (int32_t n = 0; n < a->n; n++)
    for (int32_t b = 0; b < cb; b++)
      for (int32_t oy = 0; oy < m->out_h; oy++)
        for (int32_t ox = 0; ox < m->out_w; ox++)
          for (int32_t l = 0; l < B; l++) {
            int32_t cc = b * B + l;
            dst[d++] = cc < cc_n ? im2col_value(a, src, n, cc, oy, ox) : fill;
          }
}

void lower_act_pack(const struct lower_act *a, const int8_t *nchw, int8_t fill, int8_t *dst) {
  if (a->layout == LOWER_ACT_NCHWC) pack_nchwc(a, nchw, fill, dst);
  else if (a->layout == LOWER_ACT_IM2COL) pack_im2col(a, nchw, fill, dst);
}

void lower_act_unpack(const struct lower_act *a, const int8_t *src, int8_t *nchw) {
  LOOM_ASSERT(a->layout == LOWER_ACT_NCHWC);
  int32_t B = a->block, cb = tile_ceil_div(a->c, B);
  size_t hw = (size_t)a->h * (size_t)a->w;
  for (int32_t n = 0; n < a->n; n++)
    for (int32_t ch = 0; ch < a->c; ch++)
      for (size_t p = 0; p < hw; p++) {
        size_t s = (((size_t)n * (size_t)cb + (size_t)(ch / B)) * hw + p) * (size_t)B + (size_t)(ch % B);
        nchw[((size_t)n * (size_t)a->c + (size_t)ch) * hw + p] = src[s];
      }
}
