/*
 * ir_eval_fused.c - the fused int8 ops of pass_fuse.c (loom.QConv, QGemm,
 * QAdd, QPool) on the reference interpreter, with the accelerator's integer
 * semantics: int32 accumulators that wrap and the ALU's fixed-point
 * REQUANT, so that a fused graph evaluated here matches fsim bit for bit.
 */
#include "sw_compiler/ir_eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- fused int8 ops (pass_fuse.c): the accelerator's integer semantics ---- */

/* The requantization parameters every fused op carries as attributes. */
struct req {
  int64_t shift, out_zp, lo, hi, round_even;
};

static struct req req_of(const struct ir_node *n) {
  return (struct req){ir_attr_int(n, "shift", 0), ir_attr_int(n, "out_zp", 0),
                      ir_attr_int(n, "lo", -128), ir_attr_int(n, "hi", 127),
                      ir_attr_int(n, "round_even", 0)};
}

/* The ALU's REQUANT (docs/isa.md): p = a * m exactly; r = p rounded right
 * by `shift` (half up, or half to even); clamp(r + out_zp, lo, hi).
 * floor((p + 2^(s-1)) / 2^s) is (p >> s) plus bit s-1 of p, which needs no
 * 65-bit sum. */
static int8_t requant(int32_t a, int64_t m, const struct req *q) {
  int64_t p = (int64_t)a * m, r = p;
  if (q->shift > 0) {
    int64_t s = q->shift;
    uint64_t low = (uint64_t)p & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
    r = (p >> s) + ((p >> (s - 1)) & 1);
    if (q->round_even && low == half && (r & 1)) r -= 1;
  }
  int64_t y = r + q->out_zp;
  if (q->lo > q->hi) return (int8_t)q->hi;
  return (int8_t)(y < q->lo ? q->lo : y > q->hi ? q->hi : y);
}

static int check_req(struct ectx *c, const struct req *q) {
  if (q->shift < 0 || q->shift > 63) return ir_fail(c->err, c->g, c->node, "shift %lld is not in 0..63", (long long)q->shift);
  if (q->lo < -128 || q->hi > 127 || q->out_zp < -128 || q->out_zp > 127)
    return ir_fail(c->err, c->g, c->node, "out_zp, lo and hi must be int8 values");
  return 0;
}

/* Per-output-channel operands k (bias, multiplier) need `count` values. */
static int want_count(struct ectx *c, int k, int64_t count) {
  if (numel(T(c, k)) == count) return 0;
  return ir_fail(c->err, c->g, c->node, "operand %d %%%s has %lld values, needs %lld", k, T(c, k)->name,
              (long long)numel(T(c, k)), (long long)count);
}

/* The QAdd a fused residual applies to the convolution's result q. */
struct residual {
  const int8_t *r;
  int64_t a_w, b_w, b_zp, a_zp, m;
  struct req q;
};

static int residual_of(struct ectx *c, struct residual *res) {
  const struct ir_node *n = c->n;
  res->r = n->n_in > 4 ? IN(c, 4) : NULL;
  if (!res->r) return 0;
  if (numel(T(c, 4)) != numel(R(c))) return ir_fail(c->err, c->g, c->node, "the residual must have the result's shape");
  res->a_w = ir_attr_int(n, "res_a_weight", 1), res->b_w = ir_attr_int(n, "res_b_weight", 1);
  res->b_zp = ir_attr_int(n, "res_b_zp", 0), res->a_zp = ir_attr_int(n, "out_zp", 0);
  res->m = ir_attr_int(n, "res_multiplier", 1);
  res->q = (struct req){ir_attr_int(n, "res_shift", 0), ir_attr_int(n, "res_out_zp", 0),
                        ir_attr_int(n, "res_lo", -128), ir_attr_int(n, "res_hi", 127),
                        ir_attr_int(n, "round_even", 0)};
  return check_req(c, &res->q);
}

static int8_t add_residual(const struct residual *res, int8_t q, int64_t i) {
  if (!res->r) return q;
  int32_t acc = (int32_t)(res->a_w * (q - res->a_zp) + res->b_w * (res->r[i] - res->b_zp));
  return requant(acc, res->m, &res->q);
}

int ev_qconv(struct ectx *c) {
  struct conv_geo g;
  struct req q = req_of(c->n);
  struct residual res;
  if (check_req(c, &q) || ev_conv_geo_full(c, 0, 1, &g) || want_count(c, 2, g.m) || want_count(c, 3, g.m) ||
      residual_of(c, &res))
    return -1;
  const struct ir_attr *lut = ir_attr_find(c->n, "lut"); /* the epilogue's table, after the clamp */
  if (lut && (lut->kind != IR_ATTR_INTS || lut->n != 256)) return ir_fail(c->err, c->g, c->node, "lut needs 256 entries");
  int64_t zp = ir_attr_int(c->n, "in_zp", 0), nx = numel(T(c, 0)), nw = numel(T(c, 1));
  const int8_t *x8 = IN(c, 0);
  const int32_t *bias = IN(c, 2), *mult = IN(c, 3);
  int32_t *x = ir_xmalloc((size_t)nx * sizeof *x), *w = ir_xmalloc((size_t)nw * sizeof *w);
  for (int64_t i = 0; i < nx; i++) x[i] = (int32_t)(x8[i] - zp);
  for (int64_t i = 0; i < nw; i++) w[i] = (int32_t)ev_ldi(T(c, 1)->dtype, IN(c, 1), i); /* i8, or wide i32 */
  int64_t plane = g.oh * g.ow, ny = g.n * g.m * plane;
  int64_t *acc = ir_xcalloc((size_t)ny, sizeof *acc);
  for (int64_t i = 0; i < ny; i++) acc[i] = bias[(i / plane) % g.m];
  ev_conv_core_i32(&g, x, w, acc);
  for (int64_t i = 0; i < ny && R(c)->dtype == IR_DT_I32; i++) /* the accumulator itself */
    ((int32_t *)c->out[0])[i] = (int32_t)(uint32_t)acc[i];
  for (int64_t i = 0; i < ny && R(c)->dtype != IR_DT_I32; i++) {
    int8_t v = requant((int32_t)(uint32_t)acc[i], mult[(i / plane) % g.m], &q);
    ((int8_t *)c->out[0])[i] = add_residual(&res, lut ? (int8_t)lut->ints[(uint8_t)v] : v, i);
  }
  free(x);
  free(w);
  free(acc);
  return 0;
}

/* Index of w[j][kk] in the weights: [O, K], or runtime weights in WGT rows
 * [ceil(O/B), K, B, 1] (pass_attention.c), or transposed ones (`wgt_t`,
 * V's rows for P x V) [ceil(K/B), O, B, 1]. */
static int64_t wgt_index(const struct ir_tensor *w, int trans, int64_t j, int64_t k, int64_t kk) {
  if (w->rank == 2) return j * k + kk;
  int64_t b = w->dims[2];
  return trans ? ((kk / b) * w->dims[1] + j) * b + kk % b : ((j / b) * k + kk) * b + j % b;
}

int ev_qgemm(struct ectx *c) {
  const struct ir_tensor *x = T(c, 0), *w = T(c, 1);
  struct req q = req_of(c->n);
  struct residual res;
  if (check_req(c, &q) || residual_of(c, &res)) return -1;
  int rt = w->rank == 4, tr = rt && ir_attr_int(c->n, "wgt_t", 0); /* runtime weights: O from the multipliers */
  if (x->rank != 2 || (w->rank != 2 && !rt) || (!tr && x->dims[1] != w->dims[1]) ||
      (rt && !tr && (w->dims[3] != 1 || w->dims[0] * w->dims[2] < numel(T(c, 3)))) ||
      (tr && (w->dims[3] != 1 || w->dims[1] != numel(T(c, 3)) || w->dims[0] * w->dims[2] < x->dims[1])))
    return ir_fail(c->err, c->g, c->node, "needs x [N,K] and w [O,K] (or [ceil(O/B),K,B,1]; wgt_t: [ceil(K/B),O,B,1])");
  int64_t n = x->dims[0], k = x->dims[1], o = rt ? numel(T(c, 3)) : w->dims[0], zp = ir_attr_int(c->n, "in_zp", 0);
  if (want_count(c, 2, o) || want_count(c, 3, o)) return -1;
  const struct ir_attr *lut = ir_attr_find(c->n, "lut"); /* as in QConv */
  if (lut && (lut->kind != IR_ATTR_INTS || lut->n != 256)) return ir_fail(c->err, c->g, c->node, "lut needs 256 entries");
  const int8_t *xv = IN(c, 0);
  const int32_t *bias = IN(c, 2), *mult = IN(c, 3);
  enum ir_dtype wdt = w->dtype; /* i8, or wide i32 */
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < o; j++) {
      uint32_t acc = (uint32_t)bias[j];
      for (int64_t kk = 0; kk < k; kk++)
        acc += (uint32_t)(int32_t)(ev_ldi(wdt, IN(c, 1), wgt_index(w, tr, j, k, kk)) * (xv[i * k + kk] - zp));
      if (R(c)->dtype == IR_DT_I32) ((int32_t *)c->out[0])[i * o + j] = (int32_t)acc;
      else {
        int8_t v = requant((int32_t)acc, mult[j], &q);
        ((int8_t *)c->out[0])[i * o + j] = add_residual(&res, lut ? (int8_t)lut->ints[(uint8_t)v] : v, i * o + j);
      }
    }
  return 0;
}

int ev_qadd(struct ectx *c) {
  struct req q = req_of(c->n);
  if (check_req(c, &q)) return -1;
  if (numel(T(c, 0)) != numel(R(c)) || numel(T(c, 1)) != numel(R(c)))
    return ir_fail(c->err, c->g, c->node, "operands and result must have one shape");
  int64_t az = ir_attr_int(c->n, "a_zp", 0), bz = ir_attr_int(c->n, "b_zp", 0);
  int64_t aw = ir_attr_int(c->n, "a_weight", 1), bw = ir_attr_int(c->n, "b_weight", 1);
  int64_t m = ir_attr_int(c->n, "multiplier", 1);
  const int8_t *a = IN(c, 0), *b = IN(c, 1);
  for (int64_t i = 0, n = numel(R(c)); i < n; i++) {
    int32_t acc = (int32_t)(aw * (a[i] - az) + bw * (b[i] - bz));
    ((int8_t *)c->out[0])[i] = requant(acc, m, &q);
  }
  return 0;
}

/* Average pooling with padding counted as in_zp (it adds nothing). */
static int eval_qavgpool(struct ectx *c) {
  struct conv_geo g;
  struct req q = req_of(c->n);
  if (check_req(c, &q) || ev_window_geo(c, T(c, 0), R(c), &g)) return -1;
  int64_t zp = ir_attr_int(c->n, "in_zp", 0), m = ir_attr_int(c->n, "multiplier", 1);
  const int8_t *x = IN(c, 0);
  for (int64_t p = 0; p < g.n * g.c; p++)
    for (int64_t oh = 0; oh < g.oh; oh++)
      for (int64_t ow = 0; ow < g.ow; ow++) {
        uint32_t acc = 0;
        for (int64_t kh = 0; kh < g.kh; kh++)
          for (int64_t kw = 0; kw < g.kw; kw++) {
            int64_t ih = oh * g.sh - g.pt + kh, iw = ow * g.sw - g.pl + kw;
            if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w)
              acc += (uint32_t)(x[(p * g.h + ih) * g.w + iw] - zp);
          }
        ((int8_t *)c->out[0])[(p * g.oh + oh) * g.ow + ow] = requant((int32_t)acc, m, &q);
      }
  return 0;
}

int ev_qpool(struct ectx *c) {
  if (T(c, 0)->dtype != IR_DT_I8 || R(c)->dtype != IR_DT_I8) return ir_fail(c->err, c->g, c->node, "needs int8 tensors");
  return ir_attr_int(c->n, "avg", 0) ? eval_qavgpool(c) : ev_maxpool(c);
}

