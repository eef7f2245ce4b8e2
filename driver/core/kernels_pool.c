/*
 * kernels_pool.c - MaxPool (with its Indices output and storage_order),
 * AveragePool (count_include_pad), LpPool, GlobalAveragePool,
 * GlobalMaxPool, GlobalLpPool and MaxUnpool, over any number of spatial
 * dims, with strides, dilations, pads, auto_pad and ceil_mode
 * (kernel_window.c).
 *
 * Each output position first clips its window to the taps that land in
 * the input (per dim: the first and last valid tap), then visits only
 * those, so padding costs nothing and no tap is tested twice.  AveragePool
 * divides by the valid taps, or with count_include_pad by the taps inside
 * the padded input (a ceil_mode window hanging past the end padding does
 * not count the overhang), as ONNX Runtime does.  float32 is read directly;
 * other types (f16, f64, and int8/uint8 for MaxPool) go through double.
 * MaxPool's indices are offsets into the whole input tensor, row-major or,
 * with storage_order=1, column-major within each plane.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum pool { P_MAX, P_AVG, P_LP };

struct plane {
  const struct loom_kt *x;
  const float *xf;  /* x->data when float32 */
  int64_t base;     /* first element of the plane */
};

static double read_x(const struct plane *pl, int64_t i) {
  return pl->xf ? pl->xf[pl->base + i] : loom_kt_get_f64(pl->x, pl->base + i);
}

/* One output value at window start positions `start` (may be negative). */
static double pool_one(const struct loom_kwin *w, const struct plane *pl, enum pool op, double p, int incl,
                       const int64_t *start, int64_t *arg) {
  int n = w->nsp;
  int64_t lo[LOOM_KT_MAX_RANK], hi[LOOM_KT_MAX_RANK], kpos[LOOM_KT_MAX_RANK], padded = 1;
  for (int i = 0; i < n; i++) {
    int64_t s = start[i], d = w->dil[i];
    lo[i] = s >= 0 ? 0 : (-s + d - 1) / d;                           /* first tap inside */
    hi[i] = (w->in[i] - 1 - s) < 0 ? 0 : (w->in[i] - 1 - s) / d + 1; /* one past the last */
    if (hi[i] > w->k[i]) hi[i] = w->k[i];
    if (lo[i] >= hi[i]) return *arg = -1, op == P_MAX ? NAN : 0;
    int64_t end = s + (w->k[i] - 1) * d + 1, lim = w->in[i] + w->pad_e[i];
    padded *= ((end < lim ? end : lim) - s + d - 1) / d; /* taps inside the padded input */
    kpos[i] = lo[i];
  }
  double acc = op == P_MAX ? -INFINITY : 0;
  int64_t count = 0, best = -1;
  for (;;) {
    int64_t at = 0;
    for (int i = 0; i < n; i++) at = at * w->in[i] + start[i] + kpos[i] * w->dil[i];
    double v = read_x(pl, at);
    if (op == P_MAX) {
      if (v > acc || best < 0) acc = v, best = at;
    } else {
      acc += op == P_AVG ? v : pow(fabs(v), p);
    }
    count++;
    int i = n - 1;
    for (; i >= 0; i--) {
      if (++kpos[i] < hi[i]) break;
      kpos[i] = lo[i];
    }
    if (i < 0) break;
  }
  *arg = best;
  if (op == P_AVG) return acc / (double)(incl ? padded : count);
  if (op == P_LP) return pow(acc, 1 / p);
  return acc;
}

/* Valid taps [lo, hi) of a window starting at s, and the taps inside
 * the padded input (count_include_pad's divisor). */
static void tap_range(const struct loom_kwin *w, int i, int64_t s, int64_t *lo, int64_t *hi, int64_t *padded) {
  int64_t d = w->dil[i], end = s + (w->k[i] - 1) * d + 1, lim = w->in[i] + w->pad_e[i];
  *lo = s >= 0 ? 0 : (-s + d - 1) / d;
  *hi = w->in[i] - 1 - s < 0 ? 0 : (w->in[i] - 1 - s) / d + 1;
  if (*hi > w->k[i]) *hi = w->k[i];
  *padded = ((end < lim ? end : lim) - s + d - 1) / d;
}

/* The 2-D float32 case without indices (ResNet's stem pool, the average
 * pools of Inception-like blocks): the same rules as pool_one, with the
 * tap ranges computed once per output row and column. */
static void pool2d_f32(const struct loom_kwin *w, const float *x, float *y, int64_t planes, enum pool op, int incl) {
  int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1], dh = w->dil[0], dw = w->dil[1];
  for (int64_t q = 0; q < planes; q++) {
    const float *xp = x + q * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t sh = oh * w->stride[0] - w->pad_b[0], h0, h1, ph;
      tap_range(w, 0, sh, &h0, &h1, &ph);
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t sw = ow * w->stride[1] - w->pad_b[1], w0, w1, pw;
        tap_range(w, 1, sw, &w0, &w1, &pw);
        float acc = op == P_MAX ? -INFINITY : 0;
        int any = 0;
        for (int64_t a = h0; a < h1; a++) {
          const float *row = xp + (sh + a * dh) * W + sw;
          for (int64_t b = w0; b < w1; b++) {
            float v = row[b * dw];
            if (op == P_MAX) acc = v > acc || !any ? v : acc, any = 1;
            else acc += v;
          }
        }
        int64_t cnt = (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0);
        if (op == P_MAX) y[(q * OH + oh) * OW + ow] = cnt ? acc : NAN;
        else y[(q * OH + oh) * OW + ow] = cnt ? acc / (float)(incl ? ph * pw : cnt) : 0;
      }
    }
  }
}

static loom_status pool(const struct loom_kcall *c, enum pool op, int global) {
  loom_status st = loom_k_arity(c, 1, 1, 1, op == P_MAX && !global ? 2 : 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  struct loom_kwin w;
  unsigned types = op == P_MAX ? DTM_FLOAT | DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8) : DTM_FLOAT;
  if (!st) st = loom_k_dtype(c, x, "input", types);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st && global) {
    st = loom_k_rank(c, x, "input", 3, LOOM_KT_MAX_RANK);
    memset(&w, 0, sizeof w);
    w.nsp = x->rank - 2;
    for (int i = 0; !st && i < w.nsp; i++)
      w.in[i] = w.k[i] = x->dims[2 + i], w.out[i] = w.out_alt[i] = w.stride[i] = w.dil[i] = 1;
  } else if (!st) {
    st = loom_k_window(c, x, NULL, 1, &w);
  }
  if (!st) st = loom_k_window_out(c, &w, y, x->dims[0], x->dims[1]);
  struct loom_kt *ind = c->n_out > 1 && loom_kt_present(&c->out[1]) ? &c->out[1] : NULL;
  if (!st && ind) st = loom_k_dtype(c, ind, "indices", DTM(LOOM_DT_I64));
  if (!st && ind) st = loom_k_out_like(c, ind, y);
  if (st) return st;
  double p = loom_kattr_int(c, "p", 2);
  int incl = loom_kattr_int(c, "count_include_pad", 0) != 0, colmajor = loom_kattr_int(c, "storage_order", 0) != 0;
  if (op == P_LP && p <= 0) return KFAIL(c, LOOM_E_INVALID, "p must be positive");
  if (x->dtype == LOOM_DT_F32 && w.nsp == 2 && !ind && op != P_LP) {
    pool2d_f32(&w, x->data, y->data, x->dims[0] * x->dims[1], op, incl);
    return LOOM_OK;
  }
  int64_t planes = x->dims[0] * x->dims[1], ins = 1, outs = 1;
  for (int i = 0; i < w.nsp; i++) ins *= w.in[i], outs *= w.out[i];
  struct plane pl = {x, x->dtype == LOOM_DT_F32 ? x->data : NULL, 0};
  for (int64_t q = 0; q < planes; q++) {
    int64_t opos[LOOM_KT_MAX_RANK] = {0};
    pl.base = q * ins;
    for (int64_t o = 0; o < outs; o++) {
      int64_t start[LOOM_KT_MAX_RANK], arg;
      for (int i = 0; i < w.nsp; i++) start[i] = opos[i] * w.stride[i] - w.pad_b[i];
      double v = pool_one(&w, &pl, op, p, incl, start, &arg);
      int64_t at = q * outs + o;
      if (y->dtype == LOOM_DT_F32) ((float *)y->data)[at] = (float)v;
      else loom_kt_set_f64(y, at, v);
      if (ind) {
        int64_t k = arg < 0 ? 0 : arg;
        if (colmajor) { /* the same position, its coordinates taken in reverse order */
          int64_t r = 0, rem = k, coord[LOOM_KT_MAX_RANK];
          for (int i = w.nsp - 1; i >= 0; i--) coord[i] = rem % w.in[i], rem /= w.in[i];
          for (int i = w.nsp - 1; i >= 0; i--) r = r * w.in[i] + coord[i];
          k = r;
        }
        ((int64_t *)ind->data)[at] = q * ins + k;
      }
      for (int i = w.nsp - 1; i >= 0; i--) {
        if (++opos[i] < w.out[i]) break;
        opos[i] = 0;
      }
    }
  }
  return LOOM_OK;
}

static loom_status k_maxpool(const struct loom_kcall *c) { return pool(c, P_MAX, 0); }
static loom_status k_avgpool(const struct loom_kcall *c) { return pool(c, P_AVG, 0); }
static loom_status k_lppool(const struct loom_kcall *c) { return pool(c, P_LP, 0); }
static loom_status k_gmaxpool(const struct loom_kcall *c) { return pool(c, P_MAX, 1); }
static loom_status k_gavgpool(const struct loom_kcall *c) { return pool(c, P_AVG, 1); }
static loom_status k_glppool(const struct loom_kcall *c) { return pool(c, P_LP, 1); }

/* MaxUnpool: scatter X to the flat output offsets I. */
static loom_status k_maxunpool(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 3, 1, 1);
  const struct loom_kt *x = &c->in[0], *ind = &c->in[1];
  struct loom_kt *y = &c->out[0];
  struct loom_kwin w;
  if (!st) st = loom_k_dtype(c, ind, "I", DTM(LOOM_DT_I64));
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st && (ind->rank != x->rank || memcmp(ind->dims, x->dims, (size_t)x->rank * 8)))
    st = KFAIL(c, LOOM_E_INVALID, "I must have X's shape");
  if (!st) st = loom_k_window(c, x, NULL, 0, &w);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK] = {x->dims[0], x->dims[1]}, plain[LOOM_KT_MAX_RANK];
  for (int i = 0; i < w.nsp; i++) /* the inverse of the pooling's size rule */
    dims[2 + i] = plain[i] = (x->dims[2 + i] - 1) * w.stride[i] + w.k[i] - w.pad_b[i] - w.pad_e[i];
  if (c->n_in > 2 && loom_kt_present(&c->in[2])) {
    const struct loom_kt *os = &c->in[2];
    if (loom_kt_numel(os) != x->rank) return KFAIL(c, LOOM_E_INVALID, "output_shape must have %d values", x->rank);
    for (int i = 0; i < x->rank; i++) dims[i] = loom_k_idx(os, i);
    if (dims[0] != x->dims[0] || dims[1] != x->dims[1]) return KFAIL(c, LOOM_E_INVALID, "output_shape changes N or C");
    for (int i = 0; i < w.nsp; i++)
      if (dims[2 + i] < plain[i]) return KFAIL(c, LOOM_E_INVALID, "output_shape is smaller than the unpooled size");
  }
  if ((st = loom_k_out_shape(c, y, x->rank, dims))) return st;
  size_t es = loom_dtype_size(y->dtype);
  int64_t n = loom_kt_numel(x), total = loom_kt_numel(y), pin = 1, pout = 1;
  for (int i = 0; i < w.nsp; i++) pin *= plain[i], pout *= dims[2 + i];
  memset(y->data, 0, (size_t)total * es);
  /* Indices count in the unpooled size; a larger output_shape pads at the
   * end of each dim, so the coordinates carry over. */
  for (int64_t i = 0; i < n; i++) {
    int64_t k = loom_k_idx(ind, i), plane = pin ? k / pin : 0, rem = pin ? k % pin : 0, at = 0, coord[LOOM_KT_MAX_RANK];
    if (k < 0 || plane >= x->dims[0] * x->dims[1]) return KFAIL(c, LOOM_E_INVALID, "index %lld is outside the output", (long long)k);
    for (int d = w.nsp - 1; d >= 0; d--) coord[d] = rem % plain[d], rem /= plain[d];
    for (int d = 0; d < w.nsp; d++) at = at * dims[2 + d] + coord[d];
    loom_k_copy1(y->data, plane * pout + at, x->data, i, es);
  }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_pool[] = {
    {"MaxPool", k_maxpool, 0, NULL},          {"AveragePool", k_avgpool, 0, NULL},
    {"LpPool", k_lppool, 0, NULL},            {"GlobalMaxPool", k_gmaxpool, 0, NULL},
    {"GlobalAveragePool", k_gavgpool, 0, NULL}, {"GlobalLpPool", k_glppool, 0, NULL},
    {"MaxUnpool", k_maxunpool, 0, NULL},      {NULL, NULL, 0, NULL},
};
