/*
 * kernels_shape.c - ops that only reinterpret or describe a tensor, and
 * the constant makers: Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 * Dropout (inference), Shape, Size, Constant, ConstantOfShape, EyeLike,
 * Range and Trilu.
 *
 * A reshape of a dense C-order tensor is a copy of its bytes, so these
 * kernels mostly check: that the output dims the caller inferred agree
 * with the op's own inputs (the shape operand of Reshape, the axes of
 * Squeeze and Unsqueeze, ...), then copy.  Where the axes or the shape
 * moved from attributes to inputs (Reshape at 5, Squeeze/Unsqueeze at 13),
 * the opset decides which one is read.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

static void copy_bytes(const struct loom_kcall *c) {
  size_t n = (size_t)loom_kt_numel(&c->in[0]) * loom_dtype_size(c->in[0].dtype);
  if (n && c->out[0].data != c->in[0].data) memmove(c->out[0].data, c->in[0].data, n);
}

/* Same dtype and element count: the common check of the reinterpreters. */
static loom_status same_data(const struct loom_kcall *c) {
  loom_status st = loom_k_same_dtype(c, &c->in[0], &c->out[0], "the output");
  if (!st && loom_kt_numel(&c->in[0]) != loom_kt_numel(&c->out[0]))
    st = KFAIL(c, LOOM_E_INVALID, "output has %lld elements, the input %lld",
               (long long)loom_kt_numel(&c->out[0]), (long long)loom_kt_numel(&c->in[0]));
  return st;
}

static loom_status k_reshape(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, c->opset >= 5 ? 2 : 1, 2, 1, 1);
  if (!st) st = same_data(c);
  if (st) return st;
  const struct loom_kt *x = &c->in[0], *s = c->n_in > 1 ? &c->in[1] : NULL;
  const struct loom_kt *y = &c->out[0];
  int allowzero = c->opset >= 14 && loom_kattr_int(c, "allowzero", 0);
  const int64_t *attr = NULL;
  int n = s ? (int)loom_kt_numel(s) : loom_kattr_ints(c, "shape", &attr);
  if (s && (st = loom_k_dtype(c, s, "shape", DTM(LOOM_DT_I64)))) return st;
  if (n != y->rank) return KFAIL(c, LOOM_E_INVALID, "shape has %d values, the output rank is %d", n, y->rank);
  for (int i = 0; i < n; i++) {
    int64_t v = s ? loom_k_idx(s, i) : attr[i];
    int64_t want = v == 0 && !allowzero ? (i < x->rank ? x->dims[i] : -2) : v;
    if (want != -1 && want != y->dims[i])
      return KFAIL(c, LOOM_E_INVALID, "shape value %lld at %d does not give output dim %lld",
                   (long long)v, i, (long long)y->dims[i]);
  }
  copy_bytes(c);
  return LOOM_OK;
}

static loom_status k_flatten(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  int64_t axis = loom_kattr_int(c, "axis", 1);
  const struct loom_kt *x = &c->in[0];
  if (!st && axis < 0) axis += x->rank;
  if (!st && (axis < 0 || axis > x->rank))
    st = KFAIL(c, LOOM_E_INVALID, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
  if (!st) st = same_data(c);
  if (st) return st;
  int64_t dims[2] = {loom_k_span(x, 0, (int)axis), loom_k_span(x, (int)axis, x->rank)};
  if ((st = loom_k_out_shape(c, &c->out[0], 2, dims))) return st;
  copy_bytes(c);
  return LOOM_OK;
}

/* The axes of Squeeze/Unsqueeze (attribute before 13, input from 13) as a
 * mask over `rank` dims; *n = -1 when absent. */
static loom_status axes_mask(const struct loom_kcall *c, int rank, int *mask, int *n) {
  const int64_t *v = NULL;
  const struct loom_kt *t = c->opset >= 13 && c->n_in > 1 && loom_kt_present(&c->in[1]) ? &c->in[1] : NULL;
  *n = t ? (int)loom_kt_numel(t) : c->opset >= 13 ? -1 : loom_kattr_ints(c, "axes", &v);
  memset(mask, 0, sizeof(int) * LOOM_KT_MAX_RANK);
  for (int i = 0; i < *n; i++) {
    int a;
    loom_status st = loom_k_axis(c, t ? loom_k_idx(t, i) : v[i], rank, &a);
    if (st) return st;
    if (mask[a]) return KFAIL(c, LOOM_E_INVALID, "axis %d is repeated", a);
    mask[a] = 1;
  }
  return LOOM_OK;
}

static loom_status k_squeeze(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int mask[LOOM_KT_MAX_RANK], n = 0, r = 0;
  if (!st) st = same_data(c);
  if (!st) st = axes_mask(c, x->rank, mask, &n);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK];
  for (int d = 0; d < x->rank; d++) {
    if (n > 0 && mask[d] && x->dims[d] != 1)
      return KFAIL(c, LOOM_E_INVALID, "cannot squeeze dim %d of size %lld", d, (long long)x->dims[d]);
    if (!(n > 0 ? mask[d] : x->dims[d] == 1)) dims[r++] = x->dims[d];
  }
  if ((st = loom_k_out_shape(c, &c->out[0], r, dims))) return st;
  copy_bytes(c);
  return LOOM_OK;
}

static loom_status k_unsqueeze(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int mask[LOOM_KT_MAX_RANK], n = 0;
  if (!st) st = same_data(c);
  if (!st) st = axes_mask(c, c->out[0].rank, mask, &n);
  if (!st && n + x->rank != c->out[0].rank)
    st = KFAIL(c, LOOM_E_INVALID, "%d axes do not take rank %d to rank %d", n, x->rank, c->out[0].rank);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK];
  for (int d = 0, k = 0; d < c->out[0].rank; d++) dims[d] = mask[d] ? 1 : x->dims[k++];
  if ((st = loom_k_out_shape(c, &c->out[0], c->out[0].rank, dims))) return st;
  copy_bytes(c);
  return LOOM_OK;
}

static loom_status k_identity(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  if (!st) st = same_data(c);
  if (!st) st = loom_k_out_like(c, &c->out[0], &c->in[0]);
  if (!st) copy_bytes(c);
  return st;
}

/* Dropout at inference is the identity (and an all-true mask).  In
 * training mode (opset 12 on) a ratio of 0 is the identity too; any other
 * ratio draws random numbers, which Loom does not. */
static loom_status k_dropout(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 3, 1, 2);
  if (!st) st = same_data(c);
  if (!st) st = loom_k_out_like(c, &c->out[0], &c->in[0]);
  if (st) return st;
  double ratio = c->opset >= 12 ? 0.5 : loom_kattr_float(c, "ratio", 0.5f);
  if (c->opset >= 12 && c->n_in > 1 && loom_kt_present(&c->in[1]) &&
      (st = loom_k_scalar_f64(c, &c->in[1], "ratio", &ratio)))
    return st;
  int training = c->opset >= 12 && c->n_in > 2 && loom_kt_present(&c->in[2]) && loom_kt_get_i64(&c->in[2], 0);
  if (training && ratio != 0)
    return KFAIL(c, LOOM_E_UNSUPPORTED, "training-mode Dropout with ratio %g is random", ratio);
  copy_bytes(c);
  if (c->n_out > 1 && loom_kt_present(&c->out[1])) {
    if ((st = loom_k_out_like(c, &c->out[1], &c->in[0]))) return st;
    for (int64_t i = 0, n = loom_kt_numel(&c->out[1]); i < n; i++) loom_kt_set_i64(&c->out[1], i, 1);
  }
  return LOOM_OK;
}

static loom_status k_shape(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_I64));
  if (st) return st;
  int r = c->in[0].rank;
  int64_t lo = c->opset >= 15 ? loom_kattr_int(c, "start", 0) : 0;
  int64_t hi = c->opset >= 15 ? loom_kattr_int(c, "end", r) : r;
  lo = lo < 0 ? lo + r : lo, hi = hi < 0 ? hi + r : hi;
  lo = lo < 0 ? 0 : lo > r ? r : lo, hi = hi < 0 ? 0 : hi > r ? r : hi;
  int64_t n = hi > lo ? hi - lo : 0;
  if ((st = loom_k_out_shape(c, &c->out[0], 1, &n))) return st;
  for (int64_t i = 0; i < n; i++) ((int64_t *)c->out[0].data)[i] = c->in[0].dims[lo + i];
  return LOOM_OK;
}

static loom_status k_size(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_I64));
  if (!st) st = loom_k_out_shape(c, &c->out[0], 0, NULL);
  if (!st) *(int64_t *)c->out[0].data = loom_kt_numel(&c->in[0]);
  return st;
}

static loom_status k_constant(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 0, 0, 1, 1);
  if (st) return st;
  struct loom_kt *y = &c->out[0];
  const struct loom_kattr *a = NULL;
  static const char *const names[] = {"value", "value_float", "value_floats", "value_int",
                                      "value_ints", "sparse_value", "value_string", "value_strings"};
  int which = 0;
  for (; which < 8 && !(a = loom_kattr_find(c, names[which])); which++) {}
  if (!a) return KFAIL(c, LOOM_E_INVALID, "no value attribute");
  if (which >= 5) return KFAIL(c, LOOM_E_UNSUPPORTED, "%s is not supported", names[which]);
  if (which == 0) {
    if (a->kind != LOOM_KATTR_TENSOR) return KFAIL(c, LOOM_E_INVALID, "value is not a tensor");
    if ((st = loom_k_same_dtype(c, a->t, y, "the output")) || (st = loom_k_out_like(c, y, a->t))) return st;
    memcpy(y->data, a->t->data, (size_t)loom_kt_numel(y) * loom_dtype_size(y->dtype));
    return LOOM_OK;
  }
  int many = which == 2 || which == 4;
  int64_t n = many ? a->n : 1;
  if ((st = loom_k_out_shape(c, y, many, &n))) return st;
  if ((st = loom_k_dtype(c, y, "output", DTM(which <= 2 ? LOOM_DT_F32 : LOOM_DT_I64)))) return st;
  for (int64_t i = 0; i < n; i++)
    if (which <= 2) ((float *)y->data)[i] = many ? a->floats[i] : a->f;
    else ((int64_t *)y->data)[i] = many ? a->ints[i] : a->i;
  return LOOM_OK;
}

static loom_status k_constantofshape(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *s = &c->in[0];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, s, "shape", DTM(LOOM_DT_I64));
  if (!st && s->rank != 1) st = KFAIL(c, LOOM_E_INVALID, "shape must be 1-D");
  if (!st && (s->dims[0] != y->rank || memcmp(s->data, y->dims, (size_t)y->rank * 8)))
    st = KFAIL(c, LOOM_E_INVALID, "output dims differ from the shape input");
  if (st) return st;
  const struct loom_kattr *a = loom_kattr_find(c, "value");
  if (a && (a->kind != LOOM_KATTR_TENSOR || loom_kt_numel(a->t) != 1))
    return KFAIL(c, LOOM_E_INVALID, "value must be a one-element tensor");
  if (a && (st = loom_k_same_dtype(c, a->t, y, "the output"))) return st;
  if (!a && (st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_F32)))) return st;
  size_t es = loom_dtype_size(y->dtype);
  for (int64_t i = 0, n = loom_kt_numel(y); i < n; i++)
    if (a) loom_k_copy1(y->data, i, a->t->data, 0, es);
    else ((float *)y->data)[i] = 0;
  return LOOM_OK;
}

static loom_status k_eyelike(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_rank(c, &c->in[0], "input", 2, 2);
  if (!st) st = loom_k_out_like(c, y, &c->in[0]);
  const struct loom_kattr *dt = loom_kattr_find(c, "dtype");
  if (!st && dt && loom_dtype_from_onnx(dt->i) != y->dtype)
    st = KFAIL(c, LOOM_E_INVALID, "output type %s is not the dtype attribute's", loom_dtype_name(y->dtype));
  if (!st && !dt) st = loom_k_same_dtype(c, &c->in[0], y, "the output");
  if (st) return st;
  int64_t k = loom_kattr_int(c, "k", 0), rows = y->dims[0], cols = y->dims[1];
  memset(y->data, 0, (size_t)(rows * cols) * loom_dtype_size(y->dtype));
  for (int64_t i = 0; i < rows; i++)
    if (i + k >= 0 && i + k < cols) loom_kt_set_i64(y, i * cols + i + k, 1);
  return LOOM_OK;
}

static loom_status k_range(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 3, 3, 1, 1);
  struct loom_kt *y = &c->out[0];
  for (int i = 0; i < 3 && !st; i++) st = loom_k_same_dtype(c, y, &c->in[i], "an input");
  if (!st) st = loom_k_dtype(c, y, "output", DTM_NUM);
  if (st) return st;
  double v[3];
  for (int i = 0; i < 3; i++)
    if ((st = loom_k_scalar_f64(c, &c->in[i], "start, limit and delta", &v[i]))) return st;
  if (v[2] == 0) return KFAIL(c, LOOM_E_INVALID, "delta is 0");
  int64_t n = (int64_t)fmax(ceil((v[1] - v[0]) / v[2]), 0);
  if ((st = loom_k_out_shape(c, y, 1, &n))) return st;
  if (loom_dtype_is_float(y->dtype)) {
    for (int64_t i = 0; i < n; i++) loom_kt_set_f64(y, i, v[0] + (double)i * v[2]);
  } else {
    int64_t s = loom_kt_get_i64(&c->in[0], 0), d = loom_kt_get_i64(&c->in[2], 0);
    for (int64_t i = 0; i < n; i++) loom_kt_set_i64(y, i, s + i * d);
  }
  return LOOM_OK;
}

static loom_status k_trilu(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int64_t k = 0;
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = same_data(c);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st && c->n_in > 1 && loom_kt_present(&c->in[1])) st = loom_k_scalar_i64(c, &c->in[1], "k", &k);
  if (st) return st;
  int upper = loom_kattr_int(c, "upper", 1) != 0;
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], mats = loom_k_span(x, 0, x->rank - 2);
  size_t es = loom_dtype_size(x->dtype);
  copy_bytes(c);
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++)
        if (upper ? j - i < k : j - i > k) memset((char *)c->out[0].data + ((m * rows + i) * cols + j) * es, 0, es);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_shape[] = {
    {"Reshape", k_reshape, 0, NULL},     {"Flatten", k_flatten, 0, NULL},
    {"Squeeze", k_squeeze, 0, NULL},     {"Unsqueeze", k_unsqueeze, 0, NULL},
    {"Identity", k_identity, 0, NULL},   {"Dropout", k_dropout, 0, NULL},
    {"Shape", k_shape, 0, NULL},         {"Size", k_size, 0, NULL},
    {"Constant", k_constant, 0, NULL},   {"ConstantOfShape", k_constantofshape, 0, NULL},
    {"EyeLike", k_eyelike, 0, NULL},     {"Range", k_range, 0, NULL},
    {"Trilu", k_trilu, 0, NULL},         {NULL, NULL, 0, NULL},
};
