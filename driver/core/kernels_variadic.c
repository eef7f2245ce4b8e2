/*
 * kernels_variadic.c - elementwise ops over several broadcast operands:
 * Sum, Mean, Max, Min (one or more inputs, broadcasting from opset 8),
 * Where (condition, X, Y) and Clip (bounds as attributes before opset 11,
 * as optional scalar inputs from 11).
 *
 * Sum/Mean/Max/Min accumulate in the output: it first receives input 0
 * broadcast, then each further input is folded in, in order, as numpy's
 * reduce over the list does (so float sums round as ONNX's expected
 * outputs do).  Max and Min propagate NaN like numpy's maximum/minimum.
 * float32 has typed loops; the other types go through double or int64.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum vop { V_SUM, V_MEAN, V_MAX, V_MIN };

struct vctx {
  enum vop op;
  const struct loom_kt *x; /* the operand folded in */
  struct loom_kt *y;       /* the accumulator, also the output */
  int uns;
};

/* y[o+i] = x[off+i*s] for a run: the broadcast copy of input 0. */
static void row_copy(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                     int64_t len) {
  struct vctx *k = ctx;
  size_t es = loom_dtype_size(k->y->dtype);
  if (b->st[0][b->rank - 1]) {
    memcpy((char *)k->y->data + o * es, (const char *)k->x->data + off[0] * es, (size_t)len * es);
    return;
  }
  for (int64_t i = 0; i < len; i++) loom_k_copy1(k->y->data, o + i, k->x->data, off[0], es);
}

static float max_f32(float a, float b) { return a > b || isnan(a) ? a : b; }
static float min_f32(float a, float b) { return a < b || isnan(a) ? a : b; }

/* y[o+i] = y[o+i] op x[off+i*s]: off[0] is the accumulator's own offset. */
static void row_fold(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                     int64_t len) {
  struct vctx *k = ctx;
  int64_t s = b->st[1][b->rank - 1];
  if (k->y->dtype == LOOM_DT_F32) {
    float *y = (float *)k->y->data + o;
    const float *x = (const float *)k->x->data + off[1];
    switch (k->op) {
    case V_SUM:
    case V_MEAN:
      for (int64_t i = 0; i < len; i++) y[i] += x[i * s];
      break;
    case V_MAX:
      for (int64_t i = 0; i < len; i++) y[i] = max_f32(y[i], x[i * s]);
      break;
    case V_MIN:
      for (int64_t i = 0; i < len; i++) y[i] = min_f32(y[i], x[i * s]);
      break;
    }
    return;
  }
  for (int64_t i = 0; i < len; i++) {
    int64_t j = off[1] + i * s;
    if (loom_dtype_is_float(k->y->dtype)) {
      double a = loom_kt_get_f64(k->y, o + i), v = loom_kt_get_f64(k->x, j);
      double r = k->op <= V_MEAN ? a + v
                 : k->op == V_MAX ? (a > v || isnan(a) ? a : v)
                                  : (a < v || isnan(a) ? a : v);
      loom_kt_set_f64(k->y, o + i, r);
    } else {
      int64_t a = loom_kt_get_i64(k->y, o + i), v = loom_kt_get_i64(k->x, j);
      int gt = k->uns ? (uint64_t)a > (uint64_t)v : a > v;
      int64_t r = k->op <= V_MEAN ? (int64_t)((uint64_t)a + (uint64_t)v)
                  : k->op == V_MAX ? (gt ? a : v)
                                   : (gt ? v : a);
      loom_kt_set_i64(k->y, o + i, r);
    }
  }
}

static loom_status k_variadic(const struct loom_kcall *c) {
  static const char *const names[] = {"Sum", "Mean", "Max", "Min", NULL};
  enum vop op = (enum vop)loom_k_op_index(names, c->op);
  loom_status st = loom_k_arity(c, 1, LOOM_KERNEL_MAX_IO, 1, 1);
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, y, "output", op <= V_MEAN ? DTM_FLOAT | (op == V_SUM ? DTM_INT : 0) : DTM_NUM);
  for (int i = 0; i < c->n_in && !st; i++) {
    if (!loom_kt_present(&c->in[i])) return KFAIL(c, LOOM_E_INVALID, "input %d is missing", i);
    st = loom_k_same_dtype(c, y, &c->in[i], "an input");
  }
  if (st) return st;
  /* Check every input broadcasts to the output before writing anything. */
  struct loom_kbcast plan[LOOM_KERNEL_MAX_IO];
  for (int i = 0; i < c->n_in && !st; i++) {
    const struct loom_kt *two[2] = {y, &c->in[i]};
    st = i == 0 ? loom_kbcast_init(c, &plan[0], 1, two + 1, y)
                : loom_kbcast_init(c, &plan[i], 2, two, y);
  }
  if (st) return st;
  struct vctx k = {op, &c->in[0], y, loom_dtype_is_unsigned_int(y->dtype)};
  loom_kbcast_each(&plan[0], row_copy, &k);
  for (int i = 1; i < c->n_in; i++) {
    k.x = &c->in[i];
    loom_kbcast_each(&plan[i], row_fold, &k);
  }
  if (op == V_MEAN) {
    int64_t n = loom_kt_numel(y);
    if (y->dtype == LOOM_DT_F32)
      for (int64_t i = 0; i < n; i++) ((float *)y->data)[i] /= (float)c->n_in;
    else
      for (int64_t i = 0; i < n; i++) loom_kt_set_f64(y, i, loom_kt_get_f64(y, i) / c->n_in);
  }
  return LOOM_OK;
}

/* ---- Where ---- */

struct wctx {
  const struct loom_kt *cond, *x, *w;
  struct loom_kt *y;
};

#define WHERE_LOOP(T)                                                                       \
  do {                                                                                      \
    const T *px = (const T *)k->x->data + off[1], *pw = (const T *)k->w->data + off[2];     \
    T *py = (T *)k->y->data + o;                                                            \
    for (int64_t i = 0; i < len; i++) py[i] = pc[i * sc] ? px[i * sx] : pw[i * sw];       \
  } while (0)

static void row_where(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                      int64_t len) {
  struct wctx *k = ctx;
  int r = b->rank - 1;
  int64_t sc = b->st[0][r], sx = b->st[1][r], sw = b->st[2][r];
  const uint8_t *pc = (const uint8_t *)k->cond->data + off[0];
  switch (loom_dtype_size(k->y->dtype)) {
  case 1: WHERE_LOOP(uint8_t); break;
  case 2: WHERE_LOOP(uint16_t); break;
  case 4: WHERE_LOOP(uint32_t); break;
  default: WHERE_LOOP(uint64_t); break;
  }
}

static loom_status k_where(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 3, 3, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->in[0], "condition", DTM(LOOM_DT_BOOL));
  if (!st) st = loom_k_same_dtype(c, &c->in[1], &c->in[2], "Y");
  if (!st) st = loom_k_same_dtype(c, &c->in[1], &c->out[0], "the output");
  if (st) return st;
  struct loom_kbcast plan;
  const struct loom_kt *in[3] = {&c->in[0], &c->in[1], &c->in[2]};
  if ((st = loom_kbcast_init(c, &plan, 3, in, &c->out[0]))) return st;
  struct wctx k = {&c->in[0], &c->in[1], &c->in[2], &c->out[0]};
  loom_kbcast_each(&plan, row_where, &k);
  return LOOM_OK;
}

/* ---- Clip ---- */

/* A bound: the attribute before opset 11, the optional input from 11. */
static loom_status bound(const struct loom_kcall *c, int input, const char *attr, double dflt,
                         double *v) {
  *v = dflt;
  if (c->opset < 11) {
    *v = loom_kattr_float(c, attr, (float)dflt);
    return LOOM_OK;
  }
  if (c->n_in <= input || !loom_kt_present(&c->in[input])) return LOOM_OK;
  loom_status st = loom_k_same_dtype(c, &c->in[0], &c->in[input], attr);
  return st ? st : loom_k_scalar_f64(c, &c->in[input], attr, v);
}

static loom_status k_clip(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 3, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, x, "input", c->opset < 12 ? DTM_FLOAT : DTM_NUM);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_out_like(c, y, x);
  double lo, hi;
  if (!st) st = bound(c, 1, "min", -INFINITY, &lo);
  if (!st) st = bound(c, 2, "max", INFINITY, &hi);
  if (st) return st;
  int64_t n = loom_kt_numel(x);
  if (x->dtype == LOOM_DT_F32) {
    const float *px = x->data, flo = (float)lo, fhi = (float)hi;
    float *py = y->data;
    for (int64_t i = 0; i < n; i++) {
      float v = px[i] < flo ? flo : px[i];
      py[i] = v > fhi ? fhi : v;
    }
  } else if (loom_dtype_is_float(x->dtype)) {
    for (int64_t i = 0; i < n; i++) {
      double v = loom_kt_get_f64(x, i);
      v = v < lo ? lo : v;
      loom_kt_set_f64(y, i, v > hi ? hi : v);
    }
  } else { /* integers: bounds are of the same type, exact as int64 (u64 apart) */
    int uns = x->dtype == LOOM_DT_U64;
    int has_lo = c->opset >= 11 && c->n_in > 1 && loom_kt_present(&c->in[1]);
    int has_hi = c->opset >= 11 && c->n_in > 2 && loom_kt_present(&c->in[2]);
    int64_t ilo = has_lo ? loom_kt_get_i64(&c->in[1], 0) : 0;
    int64_t ihi = has_hi ? loom_kt_get_i64(&c->in[2], 0) : 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t v = loom_kt_get_i64(x, i);
      if (has_lo && (uns ? (uint64_t)v < (uint64_t)ilo : v < ilo)) v = ilo;
      if (has_hi && (uns ? (uint64_t)v > (uint64_t)ihi : v > ihi)) v = ihi;
      loom_kt_set_i64(y, i, v);
    }
  }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_variadic[] = {
    {"Sum", k_variadic, 0, NULL}, {"Mean", k_variadic, 0, NULL}, {"Max", k_variadic, 0, NULL},
    {"Min", k_variadic, 0, NULL}, {"Where", k_where, 0, NULL},   {"Clip", k_clip, 0, NULL},
    {NULL, NULL, 0, NULL},
};
