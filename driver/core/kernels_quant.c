/*
 * kernels_quant.c - QuantizeLinear and DequantizeLinear (per tensor, and
 * per axis from opset 13) and DynamicQuantizeLinear.
 *
 * Quantization is the one rule the rest of Loom uses (loom_quantize1,
 * tensor.c): y = saturate(round_half_even(x / scale) + zero_point) with
 * the division in float32, as ONNX's reference divides float32 arrays; so
 * a host step quantizes exactly as the runtime's stored-form conversion
 * does.  DynamicQuantizeLinear picks its uint8 scale and zero point from
 * the data's range widened to include 0, as the operator defines.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* The scale and zero point of element i: per tensor, or along `axis`. */
struct qparams {
  const struct loom_kt *scale, *zp;
  int64_t inner, count; /* per axis: elements after the axis, and its size */
};

static loom_status qparams(const struct loom_kcall *c, const struct loom_kt *x, struct qparams *q) {
  q->scale = &c->in[1];
  q->zp = c->n_in > 2 && loom_kt_present(&c->in[2]) ? &c->in[2] : NULL;
  int64_t n = loom_kt_numel(q->scale);
  loom_status st = loom_k_dtype(c, q->scale, "the scale", DTM_FLOAT);
  if (!st && q->zp && loom_kt_numel(q->zp) != n) st = KFAIL(c, LOOM_E_INVALID, "scale and zero point differ in size");
  if (st) return st;
  q->inner = 1, q->count = 1;
  if (q->scale->rank == 0 || (n == 1 && c->opset < 13)) return LOOM_OK;
  if (c->opset < 13 || q->scale->rank != 1) return KFAIL(c, LOOM_E_INVALID, "the scale must be a scalar");
  int axis;
  if ((st = loom_k_axis(c, loom_kattr_int(c, "axis", 1), x->rank, &axis))) return st;
  if (n != x->dims[axis] && n != 1)
    return KFAIL(c, LOOM_E_INVALID, "%lld scales for an axis of %lld", (long long)n, (long long)x->dims[axis]);
  q->count = n;
  q->inner = n == 1 ? 1 : loom_k_span(x, axis + 1, x->rank);
  return LOOM_OK;
}

static int64_t qindex(const struct qparams *q, int64_t i) { return q->count == 1 ? 0 : (i / q->inner) % q->count; }

static loom_status k_quantize(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 3, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  struct qparams q;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT | DTM(LOOM_DT_I32));
  if (!st) st = loom_k_out_like(c, y, x);
  if (!st) st = qparams(c, x, &q);
  if (!st) st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st && q.zp) st = loom_k_same_dtype(c, q.zp, y, "the output");
  if (!st && !q.zp && y->dtype != LOOM_DT_U8) st = KFAIL(c, LOOM_E_INVALID, "without a zero point the output is uint8");
  if (st) return st;
  int64_t n = loom_kt_numel(x);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = qindex(&q, i);
    float s = (float)loom_kt_get_f64(q.scale, k);
    int32_t zp = q.zp ? (int32_t)loom_kt_get_i64(q.zp, k) : 0;
    loom_kt_set_i64(y, i, loom_quantize1((float)loom_kt_get_f64(x, i), s, zp, y->dtype));
  }
  return LOOM_OK;
}

static loom_status k_dequantize(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 3, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  struct qparams q;
  if (!st) st = loom_k_dtype(c, x, "input", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8) | DTM(LOOM_DT_I32));
  if (!st) st = loom_k_out_like(c, y, x);
  if (!st) st = loom_k_dtype(c, y, "output", DTM_FLOAT);
  if (!st) st = qparams(c, x, &q);
  if (!st && q.zp) st = loom_k_same_dtype(c, x, q.zp, "the zero point");
  if (st) return st;
  int64_t n = loom_kt_numel(x);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = qindex(&q, i), zp = q.zp ? loom_kt_get_i64(q.zp, k) : 0;
    float v = (float)(loom_kt_get_i64(x, i) - zp) * (float)loom_kt_get_f64(q.scale, k);
    if (y->dtype == LOOM_DT_F32) ((float *)y->data)[i] = v;
    else loom_kt_set_f64(y, i, v);
  }
  return LOOM_OK;
}

static loom_status k_dynquant(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 3, 3);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0], *ys = &c->out[1], *yz = &c->out[2];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_out_like(c, y, x);
  if (!st) st = loom_k_dtype(c, y, "y", DTM(LOOM_DT_U8));
  if (!st && loom_kt_present(ys)) st = loom_k_dtype(c, ys, "y_scale", DTM(LOOM_DT_F32));
  if (!st && loom_kt_present(yz)) st = loom_k_dtype(c, yz, "y_zero_point", DTM(LOOM_DT_U8));
  if (st) return st;
  int64_t n = loom_kt_numel(x);
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; i++) {
    float v = (float)loom_kt_get_f64(x, i);
    lo = v < lo ? v : lo, hi = v > hi ? v : hi;
  }
  float scale = (hi - lo) / 255.0f;
  int32_t zp = 0;
  if (scale > 0) {
    float z = rintf(0.0f - lo / scale);
    zp = z < 0 ? 0 : z > 255 ? 255 : (int32_t)z;
  }
  for (int64_t i = 0; i < n; i++)
    ((uint8_t *)y->data)[i] = scale > 0 ? (uint8_t)loom_quantize1((float)loom_kt_get_f64(x, i), scale, zp, LOOM_DT_U8) : 0;
  if (loom_kt_present(ys)) *(float *)ys->data = scale;
  if (loom_kt_present(yz)) *(uint8_t *)yz->data = (uint8_t)zp;
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_quant[] = {
    {"QuantizeLinear", k_quantize, 0, NULL},
    {"DequantizeLinear", k_dequantize, 0, NULL},
    {"DynamicQuantizeLinear", k_dynquant, 0, NULL},
    {NULL, NULL, 0, NULL},
};
