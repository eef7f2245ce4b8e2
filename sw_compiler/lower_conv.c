/*
 * lower_conv.c - int8 convolution (and fully connected, and average
 * pooling) as an implicit GEMM on the Loom core: the layer checked, folded
 * into a struct lower_geom, its constants placed, its tiling chosen
 * (tile.c); lower_conv_emit.c writes the instructions.
 *
 * The convolution is folded into one of:
 *  - dense (groups = 1), or grouped with the cross-group weights zero-filled
 *    (correct, and as fast as the dense convolution of the same size);
 *  - depthwise (groups = C_in = C_out, and average pooling): depthwise GEMM
 *    micro-ops (ISA v2), each output lane summing its own channel's window
 *    taps, with the window's rows split into passes when its taps outnumber
 *    the lanes.  A window wider than the lanes falls back to the diagonal
 *    form of ISA v1 (output block b reads input block b, one lane in
 *    block_out busy);
 *  - im2col (LOWER_CONV_ALLOW_IM2COL, for stems with few input channels):
 *    the host gathers each output pixel's kh x kw x C taps into channels, so
 *    a 3-channel 7x7 stem reduces over 10 blocks of 16 instead of 49 blocks
 *    with 3 useful lanes each (5x fewer GEMM cycles), for a larger input;
 *  - fully connected is the 1x1 convolution of 1x1 images; n > 1 of them
 *    (a transformer's [S, D] tokens, NC layout: token y's block b at DRAM
 *    row y * blocks + b) is walked as one image of n rows x 1 column
 *    (geom.nc_rows: strided loads and stores), so a tile holds many tokens
 *    instead of one.
 *
 * The input zero point is folded into the bias (bias - zp * sum w, modulo
 * 2^32 like the accumulator) and spatial padding loads the zero point, so
 * padded taps contribute exactly nothing.  Bias and per-channel multiplier
 * are one PAR row per output block: the GEMMs' epilogue adds and applies
 * them (docs/isa.md, "The epilogue E"); one shift per layer.
 *
 * Weights beyond int8 (lower_qconv.in_passes > 1) and int32 results
 * (LOWER_CONV_ACC_OUT) are first expanded into an ordinary dense layer
 * (expand()): the weight parts become extra input blocks that load the same
 * DRAM blocks again (geom.cib_data), and each output channel becomes four
 * byte-lane channels with copies of its weights; an int32 result keeps its
 * bias and byte-lane constants in ACC rows (the version 1 epilogue).
 *
 * Runtime weights (LOWER_CONV_RUNTIME_WGT: a matmul of two activations)
 * are the dense 1x1 form with the weight loads pointed at segment IN2,
 * which the producer wrote in the WGT row layout; nothing of them is in
 * CONST, and since sum(w) is unknown here the input zero point must be 0.
 * Transposed (LOWER_CONV_RUNTIME_WGT_T) IN2 holds [cib][cob] (the
 * producer's [K, N] stored as WGT rows), a chunk's rows loaded by one
 * LOAD with wgt_transpose into SRAM [ci][co], which the GEMM's weight
 * factors follow (lower_conv_emit.c).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

#define MAX_ROWS (UINT32_C(1) << 28) /* DRAM offsets are 28-bit row counts */
#define LOWER_TILE_CANDIDATES 4      /* tilings emitted and walked; the cheapest wins */

#define fail lower_fail

static int is_int8(int32_t v) { return v >= -128 && v <= 127; }

/* ---- checking the layer ---- */

static int32_t out_size(int32_t in, int32_t k, int32_t s, int32_t d, int32_t p0, int32_t p1) {
  return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

static int check_common(const struct loom_hw_config *cfg, const char *where, char *msg) {
  if (cfg->batch != 1) return fail(msg, where, "configurations with batch %d are not supported", cfg->batch);
  if (cfg->block_in != cfg->block_out)
    return fail(msg, where, "configurations with block_in != block_out are not supported");
  return 0;
}

static int check_shape(const struct lower_qconv *l, const char *where, char *msg) {
  if (l->n < 1 || l->in_c < 1 || l->in_h < 1 || l->in_w < 1 || l->out_c < 1)
    return fail(msg, where, "empty tensor (n %d, in_c %d, in %dx%d, out_c %d)", l->n, l->in_c,
                l->in_h, l->in_w, l->out_c);
  if (l->k_h < 1 || l->k_w < 1 || l->stride_h < 1 || l->stride_w < 1 || l->dil_h < 1 || l->dil_w < 1)
    return fail(msg, where, "kernel, stride and dilation must be positive");
  if (l->pad_t < 0 || l->pad_l < 0 || l->pad_b < 0 || l->pad_r < 0)
    return fail(msg, where, "negative padding");
  int32_t eh = (l->k_h - 1) * l->dil_h + 1, ew = (l->k_w - 1) * l->dil_w + 1;
  if (l->pad_t >= eh || l->pad_b >= eh || l->pad_l >= ew || l->pad_r >= ew)
    return fail(msg, where, "padding (%d %d %d %d) must be smaller than the kernel extent %dx%d",
                l->pad_t, l->pad_l, l->pad_b, l->pad_r, eh, ew);
  if (l->in_h + l->pad_t + l->pad_b < eh || l->in_w + l->pad_l + l->pad_r < ew)
    return fail(msg, where, "kernel %dx%d larger than the padded input", eh, ew);
  if (l->groups < 1 || l->in_c % l->groups || l->out_c % l->groups)
    return fail(msg, where, "groups %d must divide in_c %d and out_c %d", l->groups, l->in_c, l->out_c);
  return 0;
}

static int check_quant(const struct lower_qconv *l, const char *where, char *msg) {
  if (!l->weights != !!(l->flags & LOWER_CONV_RUNTIME_WGT) || (!l->multiplier && !(l->flags & LOWER_CONV_ACC_OUT)))
    return fail(msg, where, "missing weights or multipliers (or constant weights given for runtime ones)");
  if (l->in_passes > LOWER_MAX_PASSES)
    return fail(msg, where, "%u weight passes (at most %d)", l->in_passes, LOWER_MAX_PASSES);
  if ((l->flags & LOWER_CONV_ACC_OUT) && l->residual)
    return fail(msg, where, "an int32 result cannot have a fused Add");
  if (l->shift > 63) return fail(msg, where, "shift %u exceeds 63", l->shift);
  if (!is_int8(l->in_zero_point) || !is_int8(l->out_zero_point) || !is_int8(l->clamp_lo) ||
      !is_int8(l->clamp_hi))
    return fail(msg, where, "zero points and clamps must be int8");
  if (l->round_even > 1) return fail(msg, where, "round_even must be 0 or 1");
  const struct lower_qresidual *r = l->residual;
  if (r && (!is_int8(r->a_weight) || !is_int8(r->b_weight) || !is_int8(r->b_zero_point) ||
            !is_int8(r->out_zero_point) || !is_int8(r->clamp_lo) || !is_int8(r->clamp_hi) ||
            r->shift > 63 || r->round_even > 1))
    return fail(msg, where, "fused Add: weights, zero points and clamps must be int8, shift <= 63");
  if (l->lut && (r || l->pool || (l->flags & LOWER_CONV_ACC_OUT)))
    return fail(msg, where, "an activation table cannot follow a fused Add, a fused pool or an int32 result");
  return 0;
}

/* Runtime weights: the dense 1x1 GEMM whose weight rows IN2 holds. */
static int check_runtime(const struct lower_qconv *l, const char *where, char *msg) {
  if ((l->flags & LOWER_CONV_RUNTIME_WGT_T) && !(l->flags & LOWER_CONV_RUNTIME_WGT))
    return fail(msg, where, "transposed weight rows are runtime weights");
  if (!(l->flags & LOWER_CONV_RUNTIME_WGT)) return 0;
  if (l->k_h != 1 || l->k_w != 1 || l->stride_h != 1 || l->stride_w != 1 || l->pad_t || l->pad_l ||
      l->pad_b || l->pad_r || l->groups != 1 || l->in_passes > 1 || l->residual || l->pool ||
      (l->flags & (LOWER_CONV_ACC_OUT | LOWER_CONV_ALLOW_IM2COL)))
    return fail(msg, where, "runtime weights need a plain 1x1 GEMM (no padding, groups, passes, fused ops or int32 result)");
  if (l->in_zero_point != 0)
    return fail(msg, where, "runtime weights need input zero point 0 (it is %d)", l->in_zero_point);
  return 0;
}

/* ---- folding ---- */

static int use_im2col(const struct loom_hw_config *cfg, const struct lower_qconv *l) {
  int32_t kk = l->k_h * l->k_w, b = cfg->block_in;
  if (!(l->flags & LOWER_CONV_ALLOW_IM2COL) || l->groups != 1 || kk == 1) return 0;
  return 2 * tile_ceil_div(l->in_c * kk, b) <= tile_ceil_div(l->in_c, b) * kk;
}

static int is_depthwise(const struct lower_qconv *l) {
  return l->groups > 1 && l->groups == l->in_c && l->out_c == l->in_c;
}

static void geom_of(const struct loom_hw_config *cfg, const struct lower_qconv *l, enum lower_kind kind,
                    struct lower_geom *g) {
  memset(g, 0, sizeof *g);
  int32_t b = cfg->block_in;
  g->n = l->n;
  g->out_h = out_size(l->in_h, l->k_h, l->stride_h, l->dil_h, l->pad_t, l->pad_b);
  g->out_w = out_size(l->in_w, l->k_w, l->stride_w, l->dil_w, l->pad_l, l->pad_r);
  g->cob = tile_ceil_div(l->out_c, b);
  if (kind == LOWER_KIND_CONV_IM2COL) {
    g->in_h = g->out_h, g->in_w = g->out_w;
    g->k_h = g->k_w = g->stride_h = g->stride_w = g->dil_h = g->dil_w = 1;
    g->cib = tile_ceil_div(l->in_c * l->k_h * l->k_w, b);
    g->residual = l->residual != NULL;
    g->cib_data = g->cib;
    return;
  }
  g->mode = LOWER_GEMM_DENSE;
  if (kind == LOWER_KIND_DWCONV || kind == LOWER_KIND_AVGPOOL) {
    /* depthwise micro-ops need whole window rows in the lanes */
    g->mode = l->k_w <= cfg->block_in ? LOWER_GEMM_DW : LOWER_GEMM_DIAG;
    g->dw_rows = cfg->block_in / l->k_w < l->k_h ? cfg->block_in / l->k_w : l->k_h;
    g->dw_passes = g->mode == LOWER_GEMM_DW ? tile_ceil_div(l->k_h, g->dw_rows) : 0;
  }
  g->in_h = l->in_h, g->in_w = l->in_w;
  g->k_h = l->k_h, g->k_w = l->k_w, g->stride_h = l->stride_h, g->stride_w = l->stride_w;
  g->dil_h = l->dil_h, g->dil_w = l->dil_w;
  g->pad_t = l->pad_t, g->pad_l = l->pad_l, g->pad_b = l->pad_b, g->pad_r = l->pad_r;
  g->cib = tile_ceil_div(l->in_c, b);
  g->row_skip = g->k_h == 1 && g->stride_h > 1 && g->pad_t == 0 && g->pad_b == 0;
  g->wgt_uniform = kind == LOWER_KIND_AVGPOOL; /* every weight is 1: one identity row */
  g->residual = l->residual != NULL;
  g->cib_data = g->cib;
}

/* The weights as the folded GEMM sees them: dense [out_c][cin][kk] (cross-
 * group taps zero, or the im2col tap order (kh, kw, c)), or [c][kk] for
 * diagonal ones.  Returns a malloc'd array; *cin and *kk describe it. */
static int8_t *effective_weights(const struct lower_qconv *l, enum lower_kind kind, int32_t *cin,
                                 int32_t *kk) {
  int32_t t_n = l->k_h * l->k_w, cpg_in = l->in_c / l->groups, cpg_out = l->out_c / l->groups;
  int diag = kind == LOWER_KIND_DWCONV || kind == LOWER_KIND_AVGPOOL;
  *cin = diag ? 1 : kind == LOWER_KIND_CONV_IM2COL ? l->in_c * t_n : l->in_c;
  *kk = kind == LOWER_KIND_CONV_IM2COL ? 1 : t_n;
  size_t total = (size_t)l->out_c * (size_t)*cin * (size_t)*kk;
  int8_t *w = calloc(total + 1, 1);
  LOOM_ASSERT(w != NULL);
  if (diag) {
    memcpy(w, l->weights, total);
    return w;
  }
  for (int32_t o = 0; o < l->out_c; o++)
    for (int32_t c = 0; c < cpg_in; c++)
      for (int32_t t = 0; t < t_n; t++) {
        int8_t v = l->weights[(((size_t)o * (size_t)cpg_in) + (size_t)c) * (size_t)t_n + (size_t)t];
        int32_t cg = (o / cpg_out) * cpg_in + c; /* the input channel in the whole tensor */
        size_t d = kind == LOWER_KIND_CONV_IM2COL
                       ? (size_t)o * (size_t)*cin + (size_t)t * (size_t)l->in_c + (size_t)cg
                       : ((size_t)o * (size_t)*cin + (size_t)cg) * (size_t)t_n + (size_t)t;
        w[d] = v;
      }
  return w;
}

/* ---- weight passes and int32 results ---- */

/* The dense layer that computes the same accumulators: groups zero-filled
 * into one group, part p of the weights on input channels
 * [p * cib * B, p * cib * B + in_c) (whole blocks per part, so block
 * p * cib + i reads DRAM block i), and with LOWER_CONV_ACC_OUT output
 * channel 4o + k a copy of channel o. */
struct expanded {
  struct lower_qconv l;
  int8_t *w;
  int32_t *bias, *mult;
};

static const struct lower_qconv *expand(const struct loom_hw_config *cfg, const struct lower_qconv *l,
                                        struct expanded *x) {
  int32_t passes = l->in_passes > 1 ? (int32_t)l->in_passes : 1, lanes = l->flags & LOWER_CONV_ACC_OUT ? 4 : 1;
  memset(x, 0, sizeof *x);
  if (passes == 1 && lanes == 1) return l;
  int32_t b = cfg->block_in, cpb = passes == 1 ? l->in_c : tile_ceil_div(l->in_c, b) * b;
  int32_t in_c = passes * cpb, out_c = lanes * l->out_c, kk = l->k_h * l->k_w;
  int32_t cpg_in = l->in_c / l->groups, cpg_out = l->out_c / l->groups;
  size_t part = (size_t)l->out_c * (size_t)cpg_in * (size_t)kk;
  x->l = *l;
  x->w = calloc((size_t)out_c * (size_t)in_c * (size_t)kk + 1, 1);
  x->bias = calloc((size_t)out_c + 1, sizeof *x->bias);
  x->mult = calloc((size_t)out_c + 1, sizeof *x->mult);
  LOOM_ASSERT(x->w && x->bias && x->mult);
  for (int32_t o = 0; o < out_c; o++) {
    int32_t src = o / lanes, c0 = (src / cpg_out) * cpg_in;
    x->bias[o] = l->bias ? l->bias[src] : 0;
    x->mult[o] = l->multiplier ? l->multiplier[src] : 0;
    for (int32_t p = 0; p < passes; p++)
      for (int32_t c = 0; c < cpg_in; c++)
        memcpy(x->w + ((size_t)o * (size_t)in_c + (size_t)(p * cpb + c0 + c)) * (size_t)kk,
               l->weights + (size_t)p * part + ((size_t)src * (size_t)cpg_in + (size_t)c) * (size_t)kk,
               (size_t)kk);
  }
  x->l.in_c = in_c, x->l.out_c = out_c, x->l.groups = 1, x->l.in_passes = 1;
  x->l.weights = x->w, x->l.bias = x->bias, x->l.multiplier = x->mult;
  x->l.flags &= ~LOWER_CONV_ALLOW_IM2COL; /* the duplicated blocks are DRAM reads, not host-gathered */
  return &x->l;
}

static void expanded_free(struct expanded *x) {
  free(x->w), free(x->bias), free(x->mult);
}

/* The four constant ACC rows of the byte-lane extraction, lane j holding
 * byte k = j % 4 (block sizes are multiples of 4):
 *   floor(a / 2^8k) = SHR(max(a, MIN + 2^(8k-1)) - 2^(8k-1), 8k)
 * (the max changes no quotient and keeps the subtraction from wrapping),
 * then MUL 2^24 keeps its low byte in the top byte and SHR 24, exact since
 * the low bits are zero, sign-extends it: lane value = byte k as int8. */
enum { ACC_ROW_MIN, ACC_ROW_OFF, ACC_ROW_SHIFT, ACC_ROW_MUL, ACC_ROWS };
_Static_assert(ACC_ROWS == LOWER_ACC_OUT_ROWS, "lower_conv_emit.c's acc_out_tail uses these rows");

static void acc_out_rows(const struct loom_hw_config *cfg, uint8_t *rows) {
  int32_t v[ACC_ROWS][256];
  LOOM_ASSERT(cfg->block_out <= 256 && cfg->block_out % 4 == 0);
  for (int32_t j = 0; j < cfg->block_out; j++) {
    int32_t k = j % 4, half = k ? (int32_t)(UINT32_C(1) << (8 * k - 1)) : 0;
    v[ACC_ROW_MIN][j] = INT32_MIN + half;
    v[ACC_ROW_OFF][j] = -half;
    v[ACC_ROW_SHIFT][j] = 8 * k;
    v[ACC_ROW_MUL][j] = 1 << 24;
  }
  uint64_t acc_row = loom_hw_row_bytes(cfg, LOOM_BUF_ACC, 0);
  for (int r = 0; r < ACC_ROWS; r++) pack_acc_rows(cfg, v[r], cfg->block_out, rows + (size_t)r * acc_row);
}

/* ACC rows of parameters: none (the epilogue's are PAR rows), or for an
 * int32 result the biases and the byte-lane rows. */
static uint32_t param_rows(const struct lower_geom *g) {
  return g->acc_out ? (uint32_t)g->cob + ACC_ROWS : 0;
}

/* ---- constants ---- */

static void place_consts(struct lower_program *p, const struct lower_qconv *l, enum lower_kind kind,
                         const struct lower_geom *g, struct lower_conv_consts *k) {
  const struct loom_hw_config *cfg = p->cfg;
  int32_t cin, kk;
  int8_t *w = effective_weights(l, kind, &cin, &kk);
  uint64_t align = emit_const_align(cfg), acc_row = loom_hw_row_bytes(cfg, LOOM_BUF_ACC, 0);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)l->out_c + 1);
  LOOM_ASSERT(bias);
  pack_bias_correct(w, l->bias, l->out_c, cin * kk, l->in_zero_point, bias); /* runtime: zp 0 */
  if (g->acc_out) { /* ACC rows: biases, then the byte lanes' constants */
    size_t prow = (size_t)g->cob * acc_row, pbytes = (size_t)param_rows(g) * acc_row;
    uint8_t *params = calloc(pbytes, 1);
    LOOM_ASSERT(params);
    pack_acc_rows(cfg, bias, l->out_c, params);
    acc_out_rows(cfg, params + prow);
    p->param_offset = emit_const(p, params, pbytes, align);
    free(params);
  } else { /* PAR rows: bias and multiplier lanes per output block */
    size_t pbytes = (size_t)g->cob * loom_hw_row_bytes(cfg, LOOM_BUF_PAR, 0);
    uint8_t *params = calloc(pbytes, 1);
    LOOM_ASSERT(params);
    pack_par_rows(cfg, bias, l->multiplier, l->out_c, params);
    p->param_offset = emit_const(p, params, pbytes, align);
    free(params);
  }
  uint64_t wrow = loom_hw_row_bytes(cfg, LOOM_BUF_WGT, 0);
  k->param_row0 = 0;
  k->par_offset = p->param_offset;
  k->period = g->mode == LOWER_GEMM_DW ? 1 : (uint32_t)kk;
  k->lut_row = -1;
  if (l->lut) {
    uint64_t lrow = loom_hw_row_bytes(cfg, LOOM_BUF_LUT, 0);
    LOOM_ASSERT(lrow == 256);
    k->lut_row = (int32_t)(emit_const(p, l->lut, lrow, lrow) / lrow);
  }
  if (g->wgt_runtime) { /* the weight loads read IN2 from row 0 */
    k->wgt_row0 = 0;
    free(w), free(bias);
    return;
  }
  size_t rows = g->mode == LOWER_GEMM_DIAG ? (size_t)g->cob * (size_t)kk
                : g->mode == LOWER_GEMM_DW ? (size_t)g->cob * (size_t)g->dw_passes
                                           : (size_t)g->cob * (size_t)g->cib * (size_t)kk;
  if (g->wgt_uniform) rows = g->mode == LOWER_GEMM_DW ? (size_t)g->dw_passes : 1;
  int8_t *packed = malloc(rows * wrow + wrow);
  LOOM_ASSERT(packed != NULL);
  if (g->wgt_uniform && g->mode == LOWER_GEMM_DW) /* one block of the all-ones depthwise weights */
    pack_wgt_dw(cfg, w, cfg->block_out < l->out_c ? cfg->block_out : l->out_c, g->k_h, g->k_w, g->dw_rows, packed);
  else if (g->wgt_uniform) pack_wgt_identity(cfg, packed);
  else if (g->mode == LOWER_GEMM_DW) pack_wgt_dw(cfg, w, l->out_c, g->k_h, g->k_w, g->dw_rows, packed);
  else if (g->mode == LOWER_GEMM_DIAG) pack_wgt_diag(cfg, w, l->out_c, kk, packed);
  else pack_wgt_dense(cfg, w, l->out_c, cin, kk, packed);
  p->wgt_offset = emit_const(p, packed, rows * wrow, align);
  k->wgt_row0 = (uint32_t)(p->wgt_offset / wrow);
  if (l->residual) {
    pack_wgt_identity(cfg, packed);
    for (int32_t i = 0; i < cfg->block_out; i++)
      packed[(size_t)i * (size_t)cfg->block_in + (size_t)i] = (int8_t)l->residual->b_weight;
    k->res_row = (uint32_t)(emit_const(p, packed, wrow, wrow) / wrow);
  }
  free(w), free(bias), free(packed);
}

static int check_sizes(const struct lower_geom *g, const struct lower_qconv *l, const char *where,
                       char *msg) {
  uint64_t in_rows = (uint64_t)g->n * (uint64_t)g->cib_data * (uint64_t)g->in_h * (uint64_t)g->in_w;
  uint64_t out_rows = (uint64_t)g->n * (uint64_t)g->cob * (uint64_t)g->out_h * (uint64_t)g->out_w;
  if (in_rows >= MAX_ROWS || out_rows >= MAX_ROWS)
    return fail(msg, where, "activations too large for 28-bit DRAM row offsets");
  if ((int64_t)g->in_w * g->stride_h > 65535 || g->out_w > 65535 ||
      (int64_t)g->cib * g->k_h * g->k_w > 65535)
    return fail(msg, where, "row length exceeds the 16-bit transfer fields");
  if (g->pad_t > 7 || g->pad_b > 7 || g->pad_l > 7 || g->pad_r > 7)
    return fail(msg, where, "padding %d %d %d %d exceeds LOAD's limit of 7", g->pad_t, g->pad_l,
                g->pad_b, g->pad_r);
  return 0;
}

/* l is the layer as given (its input), out_c the stored output channels
 * (four byte lanes per channel for an int32 result). */
static void fill_acts(struct lower_program *p, const struct lower_qconv *l, int32_t out_c, enum lower_kind kind,
                      const struct lower_geom *g) {
  struct lower_act *in = &p->act[LOWER_SEG_IN], *out = &p->act[LOWER_SEG_OUT];
  in->layout = kind == LOWER_KIND_CONV_IM2COL ? LOWER_ACT_IM2COL : LOWER_ACT_NCHWC;
  in->n = l->n, in->c = l->in_c, in->h = l->in_h, in->w = l->in_w, in->block = p->cfg->block_in;
  if (kind == LOWER_KIND_CONV_IM2COL) {
    struct lower_im2col m = {l->k_h, l->k_w, l->stride_h, l->stride_w, l->pad_t, l->pad_l,
                             l->dil_h, l->dil_w, g->out_h, g->out_w, l->in_zero_point};
    in->im2col = m;
  }
  in->bytes = lower_act_bytes(in);
  out->layout = LOWER_ACT_NCHWC;
  out->n = l->n, out->c = out_c, out->h = g->pool ? g->pool_h : g->out_h, out->w = g->pool ? g->pool_w : g->out_w;
  if (g->nc_rows) out->h = out->w = 1; /* the layer's n 1x1 images, whatever the walk */
  out->block = p->cfg->block_out;
  out->bytes = lower_act_bytes(out);
  p->seg_bytes[LOWER_SEG_IN] = in->bytes;
  p->seg_bytes[LOWER_SEG_OUT] = out->bytes;
  if (l->residual) {
    p->act[LOWER_SEG_IN2] = *out;
    p->seg_bytes[LOWER_SEG_IN2] = out->bytes;
  }
  if (g->wgt_runtime) { /* WGT rows [cob][cib]: NCHWc of [cob, in_c, B, 1]; transposed [cib][cob]: of [cib, out_c, B, 1] */
    struct lower_act *w = &p->act[LOWER_SEG_IN2];
    *w = (struct lower_act){.layout = LOWER_ACT_NCHWC, .n = g->wgt_trans ? g->cib : g->cob, .c = g->wgt_trans ? l->out_c : l->in_c,
                            .h = p->cfg->block_out, .w = 1, .block = p->cfg->block_in};
    w->bytes = lower_act_bytes(w);
    p->seg_bytes[LOWER_SEG_IN2] = w->bytes;
  }
}

/* Input pixels some window reads along one axis: all of them unless the
 * windows are narrower than the stride (1x1 stride-2 convolutions). */
static uint64_t touched(int32_t in, int32_t out, int32_t k, int32_t s, int32_t d) {
  int32_t extent = (k - 1) * d + 1;
  return extent >= s ? (uint64_t)in : (uint64_t)out * (uint64_t)k;
}

/* Compulsory input traffic of the roofline: the input as stored, or only
 * the pixels read when the windows skip some. */
static uint64_t touched_input_bytes(const struct lower_program *p, const struct lower_geom *g) {
  const struct lower_act *in = &p->act[LOWER_SEG_IN];
  if (in->layout != LOWER_ACT_NCHWC) return in->bytes;
  uint64_t rows = touched(g->in_h, g->out_h, g->k_h, g->stride_h, g->dil_h);
  uint64_t cols = touched(g->in_w, g->out_w, g->k_w, g->stride_w, g->dil_w);
  return (uint64_t)g->n * (uint64_t)g->cib_data * rows * cols * (uint64_t)in->block;
}

static void fill_report(struct lower_program *p, const struct lower_qconv *l, enum lower_kind kind,
                        const struct tile_ctx *c) {
  struct lower_report *r = &p->report;
  const struct lower_geom *g = c->g;
  r->kind = kind;
  r->tiling = c->t;
  r->macs = (uint64_t)g->n * (uint64_t)g->out_h * (uint64_t)g->out_w * (uint64_t)l->out_c *
            (uint64_t)(l->in_c / l->groups) * (uint64_t)(l->k_h * l->k_w);
  r->residual = l->residual != NULL;
  r->min_bytes = touched_input_bytes(p, g) + p->act[LOWER_SEG_OUT].bytes +
                 p->act[LOWER_SEG_IN2].bytes + (p->uop_offset - p->param_offset);
  emit_report(p);
}

/* The whole lowering; `force` (tests) replaces the tiling search. */
static int lower(const struct loom_hw_config *cfg, const struct lower_qconv *l, enum lower_kind kind,
                 const struct lower_tiling *force, const char *where, struct lower_program *out,
                 char *msg) {
  emit_program_init(out, cfg);
  if (check_common(cfg, where, msg) || check_shape(l, where, msg) || check_quant(l, where, msg) ||
      check_runtime(l, where, msg))
    return -1;
  struct lower_qconv lr; /* runtime weights: zeros stand in for the packing code's reads */
  int8_t *zeros = NULL;
  if (l->flags & LOWER_CONV_RUNTIME_WGT) {
    zeros = calloc((size_t)l->out_c * (size_t)l->in_c + 1, 1);
    LOOM_ASSERT(zeros);
    lr = *l, lr.weights = zeros, l = &lr;
  }
  if ((l->in_passes > 1 || (l->flags & LOWER_CONV_ACC_OUT)) && kind != LOWER_KIND_CONV && kind != LOWER_KIND_FC)
    return fail(msg, where, "weight passes and int32 results need a convolution");
  if ((l->flags & LOWER_CONV_ACC_OUT) && cfg->block_out % 4)
    return fail(msg, where, "int32 results need a block that is a multiple of 4 (this one is %d)", cfg->block_out);
  struct expanded x;
  const struct lower_qconv *le = expand(cfg, l, &x);
  if (kind == LOWER_KIND_CONV)
    kind = is_depthwise(le) ? LOWER_KIND_DWCONV : use_im2col(cfg, le) ? LOWER_KIND_CONV_IM2COL : kind;
  struct lower_geom g;
  geom_of(cfg, le, kind, &g);
  if (l->in_passes > 1) g.cib_data = tile_ceil_div(l->in_c, cfg->block_in);
  g.acc_out = (l->flags & LOWER_CONV_ACC_OUT) != 0;
  g.wgt_runtime = (l->flags & LOWER_CONV_RUNTIME_WGT) != 0;
  g.wgt_trans = (l->flags & LOWER_CONV_RUNTIME_WGT_T) != 0;
  if (kind == LOWER_KIND_FC && !g.acc_out && l->n > 1) /* N rows of one image: tiles of many rows */
    g.nc_rows = 1, g.in_h = g.out_h = l->n, g.n = 1;
  g.epi = !g.acc_out;
  if (l->pool) {
    if (!lower_conv_pool_fits(cfg, l, l->pool))
      return expanded_free(&x), free(zeros), fail(msg, where, "the max pooling cannot be fused into this convolution");
    g.pool = 1, g.pool_h = g.out_h / 2, g.pool_w = g.out_w / 2;
  }
  struct lower_tiling top[LOWER_TILE_CANDIDATES];
  const char *why = NULL;
  int n = 0, rc = check_sizes(&g, l, where, msg);
  if (!rc && force) {
    top[0] = *force;
    struct tile_layout L;
    rc = tile_finish(cfg, &g, param_rows(&g), &top[0], &L, &why);
    n = rc ? 0 : 1;
  } else if (!rc) {
    n = tile_search_top(cfg, &g, param_rows(&g), top, LOWER_TILE_CANDIDATES, &why);
    rc = n ? 0 : -1;
  }
  if (rc != 0 && why) lower_fail(msg, where, "no tiling fits the %s configuration: %s", cfg->name, why);
  for (int i = 0; i < n; i++) { /* emit each candidate, keep the best by the timed walk */
    struct lower_program cand;
    struct tile_ctx c = {cfg, &g, top[i], {0}};
    struct lower_conv_consts k;
    tile_layout_of(cfg, &g, param_rows(&g), &c.t, &c.L);
    emit_program_init(&cand, cfg);
    place_consts(&cand, le, kind, &g, &k);
    fill_acts(&cand, l, le->out_c, kind, &g);
    lower_conv_emit(&cand, le, &c, &k);
    fill_report(&cand, l, kind, &c);
    if (i == 0 || cand.report.est_cycles < out->report.est_cycles) {
      lower_program_free(out);
      *out = cand;
    } else {
      lower_program_free(&cand);
    }
  }
  expanded_free(&x);
  free(zeros);
  return rc ? -1 : 0;
}

int lower_conv_kind(const struct loom_hw_config *cfg, const struct lower_qconv *l, enum lower_kind kind,
                    const char *where, struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  return lower(cfg, l, kind, NULL, where, out, msg);
}

int lower_conv_tiled(const struct loom_hw_config *cfg, const struct lower_qconv *l,
                     const struct lower_tiling *t, const char *where, struct lower_program *out,
                     char msg[LOWER_MSG_MAX]) {
  return lower(cfg, l, LOWER_KIND_CONV, t, where, out, msg);
}

int lower_conv(const struct loom_hw_config *cfg, const struct lower_qconv *l, const char *where,
               struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  return lower_conv_kind(cfg, l, LOWER_KIND_CONV, where, out, msg);
}

/* y[n][o] = requant(bias[o] + sum_i w[o][i] * (x[n][i] - zp)): a 1x1
 * convolution of n 1x1 images. */
int lower_fc(const struct loom_hw_config *cfg, const struct lower_qfc *l, const char *where,
             struct lower_program *out, char msg[LOWER_MSG_MAX]) {
  struct lower_qconv c = {
      .n = l->n, .in_c = l->in_features, .in_h = 1, .in_w = 1, .out_c = l->out_features,
      .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1,
      .weights = l->weights, .in_passes = l->in_passes, .bias = l->bias, .multiplier = l->multiplier,
      .shift = l->shift, .in_zero_point = l->in_zero_point, .out_zero_point = l->out_zero_point,
      .clamp_lo = l->clamp_lo, .clamp_hi = l->clamp_hi, .round_even = l->round_even,
      .flags = l->flags & (LOWER_CONV_ACC_OUT | LOWER_CONV_RUNTIME_WGT | LOWER_CONV_RUNTIME_WGT_T), .lut = l->lut,
      .residual = l->residual};
  return lower_conv_kind(cfg, &c, LOWER_KIND_FC, where, out, msg);
}
