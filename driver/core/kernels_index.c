/*
 * kernels_index.c - indexing with runtime indices: Gather (embeddings),
 * GatherElements, GatherND (batch_dims from opset 12), Scatter (opsets
 * 9-10), ScatterElements and ScatterND (reduction none/add/mul from opset
 * 16) and OneHot.
 *
 * Indices are int32 or int64 and may be negative (counted from the end of
 * their dim); one outside [-dim, dim) is refused with its position, never
 * read or written out of bounds.  Gather and GatherND copy whole contiguous
 * slices (a row of an embedding table is one memcpy); the element-wise
 * forms walk the indices with an odometer.  Scatter reductions compute in
 * double for floats and in int64 for integers.
 */
#include <string.h>

#include "kernel_util.h"

/* A checked, normalised index. */
static loom_status index_at(const struct loom_kcall *c, const struct loom_kt *ind, int64_t i,
                            int64_t dim, int64_t *out) {
  int64_t k = loom_k_idx(ind, i);
  if (k < -dim || k >= dim)
    return KFAIL(c, LOOM_E_INVALID, "index %lld (at %lld) is out of range for a dim of %lld",
                 (long long)k, (long long)i, (long long)dim);
  *out = k < 0 ? k + dim : k;
  return LOOM_OK;
}

static loom_status k_gather(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  const struct loom_kt *x = &c->in[0], *ind = &c->in[1];
  struct loom_kt *y = &c->out[0];
  int axis = 0;
  if (!st) st = loom_k_dtype(c, ind, "indices", DTM_INDEX);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (!st && x->rank + ind->rank - 1 > LOOM_KT_MAX_RANK) st = KFAIL(c, LOOM_E_UNSUPPORTED, "output rank too high");
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK];
  int r = 0;
  for (int d = 0; d < axis; d++) dims[r++] = x->dims[d];
  for (int d = 0; d < ind->rank; d++) dims[r++] = ind->dims[d];
  for (int d = axis + 1; d < x->rank; d++) dims[r++] = x->dims[d];
  if ((st = loom_k_out_shape(c, y, r, dims))) return st;
  size_t es = loom_dtype_size(x->dtype);
  int64_t outer = loom_k_span(x, 0, axis), n = x->dims[axis], ni = loom_kt_numel(ind);
  int64_t inner = loom_k_span(x, axis + 1, x->rank) * (int64_t)es;
  for (int64_t i = 0; i < ni; i++) { /* check all first: nothing half-written */
    int64_t k = 0;
    if ((st = index_at(c, ind, i, n, &k))) return st;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < ni; i++) {
      int64_t k = loom_k_idx(ind, i);
      k = k < 0 ? k + n : k;
      memcpy((char *)y->data + (o * ni + i) * inner, (const char *)x->data + (o * n + k) * inner, (size_t)inner);
    }
  return LOOM_OK;
}

/* Walks the positions of `shape` in order: pos[] is the coordinate. */
static int next_pos(int rank, const int64_t *dims, int64_t *pos) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++pos[d] < dims[d]) return 1;
    pos[d] = 0;
  }
  return 0;
}

enum red { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

/* y[j] = y[j] (reduction) u[i]. */
static void combine(struct loom_kt *y, int64_t j, const struct loom_kt *u, int64_t i, enum red r) {
  if (r == RED_NONE) {
    loom_k_copy1(y->data, j, u->data, i, loom_dtype_size(y->dtype));
  } else if (loom_dtype_is_float(y->dtype)) {
    double a = loom_kt_get_f64(y, j), b = loom_kt_get_f64(u, i);
    loom_kt_set_f64(y, j, r == RED_ADD ? a + b : r == RED_MUL ? a * b : r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b));
  } else {
    int64_t a = loom_kt_get_i64(y, j), b = loom_kt_get_i64(u, i);
    loom_kt_set_i64(y, j, r == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                          : r == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                          : r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b));
  }
}

static loom_status reduction(const struct loom_kcall *c, enum red *r) {
  static const char *const names[] = {"none", "add", "mul", "max", "min", NULL};
  int which = 0;
  loom_status st = c->opset >= 16 ? loom_k_choice(c, "reduction", "none", names, &which) : LOOM_OK;
  *r = (enum red)which;
  return st;
}

/* GatherElements (n_in 2) and ScatterElements / Scatter (n_in 3). */
static loom_status k_elements(const struct loom_kcall *c) {
  int scatter = strcmp(c->op, "GatherElements") != 0;
  loom_status st = loom_k_arity(c, 2 + scatter, 2 + scatter, 1, 1);
  const struct loom_kt *x = &c->in[0], *ind = &c->in[1], *u = scatter ? &c->in[2] : NULL;
  struct loom_kt *y = &c->out[0];
  int axis = 0;
  enum red red = RED_NONE;
  if (!st) st = loom_k_dtype(c, ind, "indices", DTM_INDEX);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (!st && ind->rank != x->rank) st = KFAIL(c, LOOM_E_INVALID, "indices must have the data's rank");
  if (!st) st = loom_k_out_like(c, y, scatter ? x : ind);
  if (!st && scatter) st = loom_k_same_dtype(c, x, u, "updates");
  if (!st && scatter && (u->rank != ind->rank || memcmp(u->dims, ind->dims, (size_t)u->rank * 8)))
    st = KFAIL(c, LOOM_E_INVALID, "updates must have the indices' shape");
  if (!st && scatter) st = reduction(c, &red);
  if (st) return st;
  int64_t xs[LOOM_KT_MAX_RANK], pos[LOOM_KT_MAX_RANK] = {0}, n = loom_kt_numel(ind);
  loom_k_strides(x, xs);
  for (int64_t i = 0; i < n; i++) { /* check first */
    int64_t k = 0;
    if ((st = index_at(c, ind, i, x->dims[axis], &k))) return st;
  }
  size_t es = loom_dtype_size(x->dtype);
  if (scatter) memcpy(y->data, x->data, (size_t)loom_kt_numel(x) * es);
  for (int64_t i = 0; i < n; i++, next_pos(ind->rank, ind->dims, pos)) {
    int64_t off = 0, k = loom_k_idx(ind, i);
    k = k < 0 ? k + x->dims[axis] : k;
    for (int d = 0; d < x->rank; d++) {
      if (d != axis && pos[d] >= x->dims[d]) return KFAIL(c, LOOM_E_INVALID, "indices exceed the data's shape");
      off += (d == axis ? k : pos[d]) * xs[d];
    }
    if (scatter) combine(y, off, u, i, red);
    else loom_k_copy1(y->data, i, x->data, off, es);
  }
  return LOOM_OK;
}

/* GatherND (n_in 2) and ScatterND (n_in 3). */
static loom_status k_nd(const struct loom_kcall *c) {
  int scatter = !strcmp(c->op, "ScatterND");
  loom_status st = loom_k_arity(c, 2 + scatter, 2 + scatter, 1, 1);
  const struct loom_kt *x = &c->in[0], *ind = &c->in[1], *u = scatter ? &c->in[2] : NULL;
  struct loom_kt *y = &c->out[0];
  enum red red = RED_NONE;
  int64_t b = scatter ? 0 : loom_kattr_int(c, "batch_dims", 0);
  if (!st) st = loom_k_dtype(c, ind, "indices", DTM_INDEX);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st && (ind->rank < 1 || b < 0 || b >= ind->rank || b >= x->rank)) st = KFAIL(c, LOOM_E_INVALID, "bad batch_dims or indices rank");
  if (st) return st;
  int64_t k = ind->dims[ind->rank - 1];
  if (k < 1 || b + k > x->rank) return KFAIL(c, LOOM_E_INVALID, "index tuples of %lld exceed the data's rank", (long long)k);
  for (int d = 0; d < b; d++)
    if (ind->dims[d] != x->dims[d]) return KFAIL(c, LOOM_E_INVALID, "batch dims differ");
  int64_t dims[2 * LOOM_KT_MAX_RANK];
  int r = 0;
  for (int d = 0; d < ind->rank - 1; d++) dims[r++] = ind->dims[d];
  for (int d = (int)(b + k); d < x->rank; d++) dims[r++] = x->dims[d];
  if (r > LOOM_KT_MAX_RANK) return KFAIL(c, LOOM_E_UNSUPPORTED, "result rank too high");
  if (scatter) {
    if ((st = loom_k_out_like(c, y, x)) || (st = loom_k_same_dtype(c, x, u, "updates")) || (st = reduction(c, &red))) return st;
    if (u->rank != r || memcmp(u->dims, dims, (size_t)r * 8)) return KFAIL(c, LOOM_E_INVALID, "updates have the wrong shape");
  } else if ((st = loom_k_out_shape(c, y, r, dims))) {
    return st;
  }
  size_t es = loom_dtype_size(x->dtype);
  int64_t xs[LOOM_KT_MAX_RANK], slice = loom_k_span(x, (int)(b + k), x->rank);
  int64_t batches = loom_k_span(ind, 0, (int)b), per = loom_k_span(ind, (int)b, ind->rank - 1);
  loom_k_strides(x, xs);
  if (scatter) memcpy(y->data, x->data, (size_t)loom_kt_numel(x) * es);
  for (int64_t bt = 0; bt < batches; bt++)
    for (int64_t i = 0; i < per; i++) {
      int64_t off = 0, t = (bt * per + i) * k, rest = bt;
      for (int d = (int)b - 1; d >= 0; d--) off += (rest % x->dims[d]) * xs[d], rest /= x->dims[d];
      for (int64_t j = 0; j < k; j++) {
        int64_t v = 0;
        if ((st = index_at(c, ind, t + j, x->dims[b + j], &v))) return st;
        off += v * xs[b + j];
      }
      int64_t at = (bt * per + i) * slice;
      if (!scatter) memcpy((char *)y->data + at * (int64_t)es, (const char *)x->data + off * (int64_t)es, (size_t)slice * es);
      else for (int64_t e = 0; e < slice; e++) combine(y, off + e, u, at + e, red);
    }
  return LOOM_OK;
}

static loom_status k_onehot(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 3, 3, 1, 1);
  const struct loom_kt *ind = &c->in[0], *vals = &c->in[2];
  struct loom_kt *y = &c->out[0];
  double depth_f = 0;
  int axis = 0;
  if (!st) st = loom_k_dtype(c, ind, "indices", DTM_NUM);
  if (!st) st = loom_k_scalar_f64(c, &c->in[1], "depth", &depth_f);
  if (!st) st = loom_k_same_dtype(c, vals, y, "the output");
  if (!st && loom_kt_numel(vals) != 2) st = KFAIL(c, LOOM_E_INVALID, "values must be [off, on]");
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", -1), ind->rank + 1, &axis);
  if (!st && ind->rank + 1 > LOOM_KT_MAX_RANK) st = KFAIL(c, LOOM_E_UNSUPPORTED, "output rank too high");
  if (st) return st;
  int64_t depth = (int64_t)depth_f, dims[LOOM_KT_MAX_RANK];
  if (depth < 1) return KFAIL(c, LOOM_E_INVALID, "depth must be positive");
  for (int d = 0, k = 0; d <= ind->rank; d++) dims[d] = d == axis ? depth : ind->dims[k++];
  if ((st = loom_k_out_shape(c, y, ind->rank + 1, dims))) return st;
  size_t es = loom_dtype_size(y->dtype);
  int64_t outer = loom_k_span(ind, 0, axis), inner = loom_k_span(ind, axis, ind->rank);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < depth; j++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t v = (int64_t)loom_kt_get_f64(ind, o * inner + i);
        if (v < 0 && c->opset >= 11) v += depth;
        loom_k_copy1(y->data, (o * depth + j) * inner + i, vals->data, v == j, es);
      }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_index[] = {
    {"Gather", k_gather, 0, NULL},          {"GatherElements", k_elements, 0, NULL},
    {"ScatterElements", k_elements, 0, NULL}, {"Scatter", k_elements, 0, NULL},
    {"GatherND", k_nd, 0, NULL},            {"ScatterND", k_nd, 0, NULL},
    {"OneHot", k_onehot, 0, NULL},          {NULL, NULL, 0, NULL},
};
