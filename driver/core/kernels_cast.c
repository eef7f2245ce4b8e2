/*
 * kernels_cast.c - Cast (the `to` attribute) and CastLike (opset 15: the
 * type of a second input), between every pair of Loom's dtypes.
 *
 * Semantics (ONNX leaves some of them open; these are numpy's and ONNX
 * Runtime's where they are defined):
 *   float -> narrower float   rounded once to nearest even (bfloat16 too,
 *                             as onnx.helper.float32_to_bfloat16 does); NaN
 *                             stays NaN, overflow gives infinity
 *   float -> integer          truncated toward zero; out-of-range values
 *                             saturate and NaN gives 0 (C leaves both
 *                             undefined, so Loom picks the safe answer)
 *   integer -> integer        modular (two's complement wrap), as C casts
 *   integer -> float          rounded to nearest even
 *   x -> bool                 x != 0 (NaN is true); bool -> x is 0 or 1
 * String tensors are refused: Loom has no string dtype.
 */
#include <string.h>

#include "kernel_util.h"

/* One element from x[i] to y[i]. */
static void cast1(const struct loom_kt *x, struct loom_kt *y, int64_t i) {
  if (y->dtype == LOOM_DT_BOOL) {
    ((uint8_t *)y->data)[i] = loom_kt_get_f64(x, i) != 0 || isnan(loom_kt_get_f64(x, i));
  } else if (loom_dtype_is_float(x->dtype)) {
    loom_kt_set_f64(y, i, loom_kt_get_f64(x, i)); /* one rounding, or truncation */
  } else if (y->dtype == LOOM_DT_F32) { /* int64 -> float32 directly: one rounding */
    ((float *)y->data)[i] = x->dtype == LOOM_DT_U64 ? (float)((const uint64_t *)x->data)[i]
                                                    : (float)loom_kt_get_i64(x, i);
  } else if (loom_dtype_is_float(y->dtype)) {
    loom_kt_set_f64(y, i, loom_kt_get_f64(x, i));
  } else {
    loom_kt_set_i64(y, i, loom_kt_get_i64(x, i));
  }
}

static void cast_all(const struct loom_kt *x, struct loom_kt *y) {
  int64_t n = loom_kt_numel(x);
  if (x->dtype == y->dtype) {
    memcpy(y->data, x->data, (size_t)n * loom_dtype_size(x->dtype));
  } else if (x->dtype == LOOM_DT_F32 && y->dtype == LOOM_DT_F16) {
    for (int64_t i = 0; i < n; i++)
      ((uint16_t *)y->data)[i] = loom_f32_to_f16(((const float *)x->data)[i]);
  } else if (x->dtype == LOOM_DT_F16 && y->dtype == LOOM_DT_F32) {
    for (int64_t i = 0; i < n; i++)
      ((float *)y->data)[i] = loom_f16_to_f32(((const uint16_t *)x->data)[i]);
  } else if (x->dtype == LOOM_DT_I64 && y->dtype == LOOM_DT_F32) {
    for (int64_t i = 0; i < n; i++) ((float *)y->data)[i] = (float)((const int64_t *)x->data)[i];
  } else if (x->dtype == LOOM_DT_U8 && y->dtype == LOOM_DT_F32) {
    for (int64_t i = 0; i < n; i++) ((float *)y->data)[i] = ((const uint8_t *)x->data)[i];
  } else {
    for (int64_t i = 0; i < n; i++) cast1(x, y, i);
  }
}

static loom_status k_cast(const struct loom_kcall *c) {
  int like = !strcmp(c->op, "CastLike");
  loom_status st = loom_k_arity(c, like ? 2 : 1, like ? 2 : 1, 1, 1);
  if (!st) st = loom_k_out_like(c, &c->out[0], &c->in[0]);
  if (st) return st;
  loom_dtype to = like ? c->in[1].dtype : LOOM_DT_INVALID;
  if (!like) {
    const struct loom_kattr *a = loom_kattr_find(c, "to");
    if (!a || a->kind != LOOM_KATTR_INT) return KFAIL(c, LOOM_E_INVALID, "the `to` attribute is missing");
    to = loom_dtype_from_onnx(a->i);
    if (to == LOOM_DT_INVALID)
      return KFAIL(c, LOOM_E_UNSUPPORTED, "casting to ONNX type %lld is not supported (Loom has no "
                   "string or complex dtype)", (long long)a->i);
  }
  if (c->out[0].dtype != to)
    return KFAIL(c, LOOM_E_INVALID, "output has type %s, the cast is to %s",
                 loom_dtype_name(c->out[0].dtype), loom_dtype_name(to));
  cast_all(&c->in[0], &c->out[0]);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_cast[] = {
    {"Cast", k_cast, 0, NULL},
    {"CastLike", k_cast, 0, NULL},
    {NULL, NULL, 0, NULL},
};
