/*
 * kernels_select.c - ops that select by value: NonZero, Compress and
 * Unique, whose output sizes depend on the data (LOOM_KERNEL_DYNAMIC: the
 * caller passes capacities in the output dims, the kernel sets the dims it
 * wrote), and TopK.
 *
 * A dynamic output is written densely for the dims the kernel sets, so the
 * caller reads it as an ordinary tensor of those dims; an output whose
 * capacity is too small is refused before anything is written.  Sorting is
 * stable (loom_k_sort), which gives ONNX's tie rules for free: TopK lists
 * equal values by increasing index, Unique's first occurrences are the
 * lowest indices.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* The output can hold `rank` dims of these sizes: set them. */
static loom_status fit(const struct loom_kcall *c, struct loom_kt *y, int rank, const int64_t *dims) {
  if (!loom_kt_present(y)) return LOOM_OK;
  int64_t cap = loom_kt_numel(y), need = 1;
  for (int d = 0; d < rank; d++) need *= dims[d];
  if (need > cap)
    return KFAIL(c, LOOM_E_INVALID, "the result needs %lld elements, the output holds %lld",
                 (long long)need, (long long)cap);
  y->rank = rank;
  memcpy(y->dims, dims, (size_t)rank * sizeof dims[0]);
  return LOOM_OK;
}

static int nonzero(const struct loom_kt *x, int64_t i) {
  return loom_dtype_is_float(x->dtype) ? loom_kt_get_f64(x, i) != 0 : loom_kt_get_i64(x, i) != 0;
}

static loom_status k_nonzero(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_I64));
  if (st) return st;
  int64_t n = loom_kt_numel(x), nnz = 0;
  for (int64_t i = 0; i < n; i++) nnz += nonzero(x, i);
  int64_t dims[2] = {x->rank, nnz};
  if ((st = fit(c, y, 2, dims))) return st;
  int64_t pos[LOOM_KT_MAX_RANK] = {0}, *out = y->data, k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (nonzero(x, i)) {
      for (int d = 0; d < x->rank; d++) out[d * nnz + k] = pos[d];
      k++;
    }
    for (int d = x->rank - 1; d >= 0; d--) {
      if (++pos[d] < x->dims[d]) break;
      pos[d] = 0;
    }
  }
  return LOOM_OK;
}

static loom_status k_compress(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  const struct loom_kt *x = &c->in[0], *cond = &c->in[1];
  struct loom_kt *y = &c->out[0];
  int has_axis = loom_kattr_find(c, "axis") != NULL, axis = 0;
  if (!st) st = loom_k_dtype(c, cond, "condition", DTM(LOOM_DT_BOOL));
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st && cond->rank != 1) st = KFAIL(c, LOOM_E_INVALID, "condition must be 1-D");
  if (!st && has_axis) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (st) return st;
  int64_t outer = has_axis ? loom_k_span(x, 0, axis) : 1, n = has_axis ? x->dims[axis] : loom_kt_numel(x);
  int64_t inner = has_axis ? loom_k_span(x, axis + 1, x->rank) : 1, kept = 0;
  const uint8_t *cv = cond->data;
  for (int64_t i = 0; i < cond->dims[0]; i++) {
    if (cv[i] && i >= n) return KFAIL(c, LOOM_E_INVALID, "condition selects index %lld beyond %lld", (long long)i, (long long)n);
    kept += cv[i] != 0;
  }
  int64_t dims[LOOM_KT_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = kept;
  if ((st = fit(c, y, has_axis ? x->rank : 1, has_axis ? dims : &kept))) return st;
  size_t es = loom_dtype_size(x->dtype);
  int64_t at = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < n && i < cond->dims[0]; i++)
      if (cv[i]) {
        memcpy((char *)y->data + at * (int64_t)es, (const char *)x->data + (o * n + i) * inner * (int64_t)es, (size_t)inner * es);
        at += inner;
      }
  return LOOM_OK;
}

/* ---- Unique ---- */

struct slices {
  const struct loom_kt *x;
  int64_t outer, n, inner;
};

/* Lexicographic order of slices a and b (x[:, a, :] against x[:, b, :]). */
static int cmp_slice(const void *ctx, int64_t a, int64_t b) {
  const struct slices *s = ctx;
  int fl = loom_dtype_is_float(s->x->dtype);
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t i = 0; i < s->inner; i++) {
      int64_t ia = (o * s->n + a) * s->inner + i, ib = (o * s->n + b) * s->inner + i;
      if (fl) {
        double va = loom_kt_get_f64(s->x, ia), vb = loom_kt_get_f64(s->x, ib);
        if (va != vb) return va < vb ? -1 : 1;
      } else {
        int64_t va = loom_kt_get_i64(s->x, ia), vb = loom_kt_get_i64(s->x, ib);
        if (va != vb) return s->x->dtype == LOOM_DT_U64 ? ((uint64_t)va < (uint64_t)vb ? -1 : 1) : va < vb ? -1 : 1;
      }
    }
  return 0;
}

static int cmp_first(const void *ctx, int64_t a, int64_t b) {
  const int64_t *first = ctx;
  return first[a] < first[b] ? -1 : first[a] > first[b];
}

/* Writes Y, indices, inverse_indices and counts for the unique slices in
 * `order` (group numbers); first[g] is group g's lowest index. */
static loom_status unique_out(const struct loom_kcall *c, const struct slices *s, int has_axis, int axis,
                              int64_t u, const int64_t *order, const int64_t *first, const int64_t *rank,
                              const int64_t *group, const int64_t *count) {
  const struct loom_kt *x = s->x;
  int64_t dims[LOOM_KT_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = u;
  loom_status st = fit(c, &c->out[0], has_axis ? x->rank : 1, has_axis ? dims : &u);
  for (int o = 1; o < c->n_out && !st; o++) st = fit(c, &c->out[o], 1, o == 2 ? &s->n : &u);
  if (st) return st;
  size_t es = loom_dtype_size(x->dtype);
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t p = 0; p < u; p++)
      memcpy((char *)c->out[0].data + ((o * u + p) * s->inner) * (int64_t)es,
             (const char *)x->data + ((o * s->n + first[order[p]]) * s->inner) * (int64_t)es, (size_t)s->inner * es);
  for (int64_t p = 0; p < u; p++) {
    if (c->n_out > 1 && loom_kt_present(&c->out[1])) ((int64_t *)c->out[1].data)[p] = first[order[p]];
    if (c->n_out > 3 && loom_kt_present(&c->out[3])) ((int64_t *)c->out[3].data)[p] = count[order[p]];
  }
  if (c->n_out > 2 && loom_kt_present(&c->out[2]))
    for (int64_t i = 0; i < s->n; i++) ((int64_t *)c->out[2].data)[i] = rank[group[i]];
  return LOOM_OK;
}

static loom_status k_unique(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 4);
  const struct loom_kt *x = &c->in[0];
  int has_axis = loom_kattr_find(c, "axis") != NULL, axis = 0, sorted = loom_kattr_int(c, "sorted", 1) != 0;
  if (!st) st = loom_k_same_dtype(c, x, &c->out[0], "output Y");
  for (int o = 1; o < c->n_out && !st; o++)
    if (loom_kt_present(&c->out[o])) st = loom_k_dtype(c, &c->out[o], "an index output", DTM(LOOM_DT_I64));
  if (!st && has_axis) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (st) return st;
  struct slices s = {x, has_axis ? loom_k_span(x, 0, axis) : 1, has_axis ? x->dims[axis] : loom_kt_numel(x),
                     has_axis ? loom_k_span(x, axis + 1, x->rank) : 1};
  int64_t n = s.n, *idx = loom_k_alloc(c, 7 * n, sizeof(int64_t));
  if (!idx) return LOOM_E_NOMEM;
  int64_t *tmp = idx + n, *group = idx + 2 * n, *first = idx + 3 * n, *order = idx + 4 * n;
  int64_t *rank = idx + 5 * n, *count = idx + 6 * n, u = 0;
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  loom_k_sort(idx, n, cmp_slice, &s, tmp);
  for (int64_t i = 0; i < n; i++) { /* groups in sorted order; stable, so first is the lowest */
    if (i == 0 || cmp_slice(&s, idx[i - 1], idx[i])) first[u] = idx[i], count[u++] = 0;
    group[idx[i]] = u - 1;
    count[u - 1]++;
  }
  for (int64_t g = 0; g < u; g++) order[g] = g;
  if (!sorted) loom_k_sort(order, u, cmp_first, first, tmp);
  for (int64_t p = 0; p < u; p++) rank[order[p]] = p;
  st = unique_out(c, &s, has_axis, axis, u, order, first, rank, group, count);
  free(idx);
  return st;
}

/* ---- TopK ---- */

struct topk {
  const struct loom_kt *x;
  int largest;
};

static int cmp_topk(const void *ctx, int64_t a, int64_t b) {
  const struct topk *t = ctx;
  double va = loom_kt_get_f64(t->x, a), vb = loom_kt_get_f64(t->x, b);
  if (va == vb || (isnan(va) && isnan(vb))) return 0;
  if (isnan(va)) return -1; /* NaN first, as the largest */
  if (isnan(vb)) return 1;
  return (va > vb) == t->largest ? -1 : 1;
}

static loom_status k_topk(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, c->opset >= 10 ? 2 : 1, 2, 2, 2);
  const struct loom_kt *x = &c->in[0];
  int axis = 0;
  int64_t k = loom_kattr_int(c, "k", -1);
  if (!st && c->opset >= 10) st = loom_k_scalar_i64(c, &c->in[1], "K", &k);
  if (!st) st = loom_k_dtype(c, x, "input", DTM_NUM);
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", -1), x->rank, &axis);
  if (!st && (k < 0 || k > x->dims[axis])) st = KFAIL(c, LOOM_E_INVALID, "k = %lld is out of range", (long long)k);
  if (!st) st = loom_k_same_dtype(c, x, &c->out[0], "the values");
  if (!st) st = loom_k_dtype(c, &c->out[1], "the indices", DTM(LOOM_DT_I64));
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = k;
  if ((st = loom_k_out_shape(c, &c->out[0], x->rank, dims)) || (st = loom_k_out_shape(c, &c->out[1], x->rank, dims))) return st;
  struct topk t = {x, c->opset < 11 || loom_kattr_int(c, "largest", 1) != 0};
  int64_t outer = loom_k_span(x, 0, axis), n = x->dims[axis], inner = loom_k_span(x, axis + 1, x->rank);
  int64_t *idx = loom_k_alloc(c, 2 * n, sizeof(int64_t));
  if (!idx) return LOOM_E_NOMEM;
  size_t es = loom_dtype_size(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      for (int64_t j = 0; j < n; j++) idx[j] = (o * n + j) * inner + i;
      loom_k_sort(idx, n, cmp_topk, &t, idx + n);
      for (int64_t j = 0; j < k; j++) {
        int64_t at = (o * k + j) * inner + i;
        loom_k_copy1(c->out[0].data, at, x->data, idx[j], es);
        ((int64_t *)c->out[1].data)[at] = (idx[j] - o * n * inner - i) / inner;
      }
    }
  free(idx);
  return LOOM_OK;
}

/* ---- capacities ---- */

/* The axis attribute in [0, rank), or -1 when absent. */
static loom_status cap_axis(const struct loom_kcall *c, int *axis) {
  *axis = -1;
  return loom_kattr_find(c, "axis") ? loom_k_axis(c, loom_kattr_int(c, "axis", 0), c->in[0].rank, axis) : LOOM_OK;
}

static loom_status cap_nonzero(const struct loom_kcall *c, int k, struct loom_kt *out) {
  out->rank = 2, out->dims[0] = c->in[0].rank, out->dims[1] = loom_kt_numel(&c->in[0]);
  return LOOM_OK;
}

/* Compress and Unique: along the axis, at most its size; flattened, at most
 * every element.  Unique's index outputs are 1-D. */
static loom_status cap_select(const struct loom_kcall *c, int k, struct loom_kt *out) {
  const struct loom_kt *x = &c->in[0];
  int axis;
  loom_status st = cap_axis(c, &axis);
  if (st) return st;
  if (k == 0 && axis >= 0) {
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
    return LOOM_OK;
  }
  out->rank = 1, out->dims[0] = axis >= 0 ? x->dims[axis] : loom_kt_numel(x);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_select[] = {
    {"NonZero", k_nonzero, LOOM_KERNEL_DYNAMIC, cap_nonzero},
    {"Compress", k_compress, LOOM_KERNEL_DYNAMIC, cap_select},
    {"Unique", k_unique, LOOM_KERNEL_DYNAMIC, cap_select},
    {"TopK", k_topk, 0, NULL},
    {NULL, NULL, 0, NULL},
};
