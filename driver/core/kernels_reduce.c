/*
 * kernels_reduce.c - ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceSumSquare, ArgMax and ArgMin.
 *
 * Axes come from the `axes` attribute, except ReduceSum from opset 13,
 * which takes them as an optional second input (with noop_with_empty_axes:
 * no axes then means identity rather than "all").  keepdims defaults to 1.
 *
 * The input's dims are collapsed into alternating groups of kept and
 * reduced dims, then walked in memory order with a running output offset;
 * the innermost group is a contiguous run, folded either into one
 * accumulator (reduced innermost: the LayerNorm / Softmax case) or into a
 * row of accumulators (kept innermost).  Floats accumulate in double (a
 * 1e-3 tolerance over thousands of float32 terms needs it, and the cost is
 * a conversion per element); integers accumulate exactly in int64.
 * ReduceLogSumExp subtracts the maximum first, as a stable implementation
 * must.  An empty reduction gives the op's identity (0, 1, -inf, +inf; the
 * mean of nothing is NaN).
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum rop { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };

static const char *const rnames[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                     "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                                     "ReduceLogSumExp", "ReduceSumSquare", NULL};

/* The input as groups of dims, each kept or reduced. */
struct groups {
  int n;
  int64_t dims[LOOM_KT_MAX_RANK], ist[LOOM_KT_MAX_RANK], ost[LOOM_KT_MAX_RANK];
  int red[LOOM_KT_MAX_RANK];
};

static void make_groups(const struct loom_kt *x, const int *reduced, struct groups *g) {
  g->n = 0;
  for (int d = 0; d < x->rank; d++) {
    if (x->dims[d] == 1) continue;
    if (g->n && g->red[g->n - 1] == reduced[d]) {
      g->dims[g->n - 1] *= x->dims[d];
    } else {
      g->dims[g->n] = x->dims[d];
      g->red[g->n++] = reduced[d];
    }
  }
  if (!g->n) g->dims[0] = 1, g->red[0] = 0, g->n = 1;
  int64_t is = 1, os = 1;
  for (int k = g->n - 1; k >= 0; k--) {
    g->ist[k] = is;
    g->ost[k] = g->red[k] ? 0 : os;
    is *= g->dims[k];
    if (!g->red[k]) os *= g->dims[k];
  }
}

/* acc[o] op= f(x) for double accumulators; shift[] is LogSumExp's max. */
static double fold(enum rop op, double a, double v, double shift) {
  switch (op) {
  case R_MAX: return a > v || isnan(a) ? a : v;
  case R_MIN: return a < v || isnan(a) ? a : v;
  case R_PROD: return a * v;
  case R_L1: return a + fabs(v);
  case R_L2:
  case R_SUMSQ: return a + v * v;
  case R_LSE: return a + exp(v - shift);
  default: return a + v;
  }
}

struct walk {
  const struct loom_kt *x;
  enum rop op;
  double *acc;         /* double accumulators, one per output element */
  const double *shift; /* R_LSE: the maxima */
  int64_t *iacc;       /* integer accumulators (when iacc != NULL) */
  int uns;
};

static int64_t ifold(enum rop op, int64_t a, int64_t v, int uns) {
  switch (op) {
  case R_MAX: return (uns ? (uint64_t)a >= (uint64_t)v : a >= v) ? a : v;
  case R_MIN: return (uns ? (uint64_t)a <= (uint64_t)v : a <= v) ? a : v;
  case R_PROD: return (int64_t)((uint64_t)a * (uint64_t)v);
  case R_L1: return (int64_t)((uint64_t)a + (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v));
  case R_SUMSQ: return (int64_t)((uint64_t)a + (uint64_t)v * (uint64_t)v);
  default: return (int64_t)((uint64_t)a + (uint64_t)v);
  }
}

/* One contiguous run of the innermost group: x[i0 + i], output o (+ i
 * when the group is kept). */
static void run(const struct walk *w, int64_t i0, int64_t o, int64_t len, int kept) {
  if (w->iacc) {
    for (int64_t i = 0; i < len; i++) {
      int64_t *a = &w->iacc[o + (kept ? i : 0)];
      *a = ifold(w->op, *a, loom_kt_get_i64(w->x, i0 + i), w->uns);
    }
    return;
  }
  if (w->x->dtype == LOOM_DT_F32 && (w->op == R_SUM || w->op == R_MEAN)) {
    const float *p = (const float *)w->x->data + i0;
    if (kept) {
      double *a = w->acc + o;
      for (int64_t i = 0; i < len; i++) a[i] += p[i];
    } else {
      double s = 0;
      for (int64_t i = 0; i < len; i++) s += p[i];
      w->acc[o] += s;
    }
    return;
  }
  if (w->x->dtype == LOOM_DT_F32 && !kept && (w->op == R_MAX || w->op == R_MIN)) {
    const float *p = (const float *)w->x->data + i0;
    float m = w->op == R_MAX ? -INFINITY : INFINITY;
    int nan = 0;
    for (int64_t i = 0; i < len; i++) {
      nan |= p[i] != p[i];
      m = w->op == R_MAX ? (p[i] > m ? p[i] : m) : (p[i] < m ? p[i] : m);
    }
    w->acc[o] = fold(w->op, w->acc[o], nan ? NAN : m, 0);
    return;
  }
  for (int64_t i = 0; i < len; i++) {
    int64_t j = o + (kept ? i : 0);
    double v = w->x->dtype == LOOM_DT_F32 ? ((const float *)w->x->data)[i0 + i]
                                          : loom_kt_get_f64(w->x, i0 + i);
    w->acc[j] = fold(w->op, w->acc[j], v, w->shift ? w->shift[j] : 0);
  }
}

/* Walks the whole input in memory order. */
static void walk_all(const struct walk *w, const struct groups *g) {
  int n = g->n;
  int64_t len = g->dims[n - 1], idx[LOOM_KT_MAX_RANK] = {0}, o = 0;
  for (int k = 0; k < n; k++)
    if (g->dims[k] == 0) return;
  for (int64_t i = 0;; i += len) {
    run(w, i, o, len, !g->red[n - 1]);
    int k = n - 2;
    for (; k >= 0; k--) {
      o += g->ost[k];
      if (++idx[k] < g->dims[k]) break;
      o -= g->ost[k] * g->dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* The reduced axes into reduced[]; *noop when the op is the identity. */
static loom_status axes_of(const struct loom_kcall *c, int rank, int *reduced, int *noop) {
  const int64_t *ax = NULL;
  int n = -1;
  *noop = 0;
  int64_t buf[LOOM_KT_MAX_RANK];
  if (!strcmp(c->op, "ReduceSum") && c->opset >= 13) {
    if (c->n_in > 1 && loom_kt_present(&c->in[1])) {
      const struct loom_kt *a = &c->in[1];
      if (a->rank > 1 || loom_kt_numel(a) > rank || loom_k_dtype(c, a, "axes", DTM(LOOM_DT_I64)))
        return KFAIL(c, LOOM_E_INVALID, "axes must be a 1-D int64 tensor of at most %d values", rank);
      n = (int)loom_kt_numel(a);
      for (int i = 0; i < n; i++) buf[i] = ((const int64_t *)a->data)[i];
      ax = buf;
    }
    if (n <= 0 && loom_kattr_int(c, "noop_with_empty_axes", 0)) *noop = 1;
  } else {
    n = loom_kattr_ints(c, "axes", &ax);
  }
  for (int d = 0; d < rank; d++) reduced[d] = n <= 0;
  for (int i = 0; i < n; i++) {
    int a;
    loom_status st = loom_k_axis(c, ax[i], rank, &a);
    if (st) return st;
    reduced[a] = 1;
  }
  return LOOM_OK;
}

static loom_status k_reduce(const struct loom_kcall *c) {
  enum rop op = (enum rop)loom_k_op_index(rnames, c->op);
  loom_status st = loom_k_arity(c, 1, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_NUM);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  int reduced[LOOM_KT_MAX_RANK], noop;
  if (!st) st = axes_of(c, x->rank, reduced, &noop);
  if (st) return st;
  int64_t dims[LOOM_KT_MAX_RANK], count = 1;
  int r = 0, keep = loom_kattr_int(c, "keepdims", 1) != 0;
  for (int d = 0; d < x->rank; d++) {
    if (noop || !reduced[d]) dims[r++] = x->dims[d];
    else if (keep) dims[r++] = 1;
    if (!noop && reduced[d]) count *= x->dims[d];
  }
  if ((st = loom_k_out_shape(c, y, r, dims))) return st;
  int64_t n = loom_kt_numel(y);
  if (noop) {
    memcpy(y->data, x->data, (size_t)n * loom_dtype_size(x->dtype));
    return LOOM_OK;
  }
  struct groups g;
  make_groups(x, reduced, &g);
  int integer = !loom_dtype_is_float(x->dtype) && op != R_L2 && op != R_LOGSUM && op != R_LSE;
  struct walk w = {x, op, NULL, NULL, NULL, loom_dtype_is_unsigned_int(x->dtype)};
  double *acc = NULL, *mx = NULL;
  if (integer) {
    if (!(w.iacc = loom_k_alloc(c, n, sizeof(int64_t)))) return LOOM_E_NOMEM;
    int64_t init = op == R_PROD  ? 1
                   : op == R_MAX ? (w.uns ? 0 : INT64_MIN)
                   : op == R_MIN ? (w.uns ? -1 : INT64_MAX)
                                 : 0;
    for (int64_t i = 0; i < n; i++) w.iacc[i] = init;
    walk_all(&w, &g);
    for (int64_t i = 0; i < n; i++)
      loom_kt_set_i64(y, i, op == R_MEAN ? (count ? w.iacc[i] / count : 0) : w.iacc[i]);
    free(w.iacc);
    return LOOM_OK;
  }
  if (!(acc = loom_k_alloc(c, n, sizeof(double)))) return LOOM_E_NOMEM;
  w.acc = acc;
  double init = op == R_PROD ? 1 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0;
  for (int64_t i = 0; i < n; i++) acc[i] = init;
  if (op == R_LSE) { /* the maxima first, then the shifted sum */
    if (!(mx = loom_k_alloc(c, n, sizeof(double)))) return free(acc), LOOM_E_NOMEM;
    for (int64_t i = 0; i < n; i++) mx[i] = -INFINITY;
    struct walk m = {x, R_MAX, mx, NULL, NULL, 0};
    walk_all(&m, &g);
    for (int64_t i = 0; i < n; i++)
      if (!isfinite(mx[i])) mx[i] = 0;
    w.shift = mx;
  }
  walk_all(&w, &g);
  for (int64_t i = 0; i < n; i++) {
    double v = acc[i];
    switch (op) {
    case R_MEAN: v = v / (double)count; break;
    case R_L2: v = sqrt(v); break;
    case R_LOGSUM: v = log(v); break;
    case R_LSE: v = mx[i] + log(v); break;
    default: break;
    }
    if (y->dtype == LOOM_DT_F32) ((float *)y->data)[i] = (float)v;
    else loom_kt_set_f64(y, i, v);
  }
  free(acc);
  free(mx);
  return LOOM_OK;
}

/* ---- ArgMax, ArgMin ---- */

static loom_status k_arg(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  int axis = 0;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_NUM);
  if (!st) st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_I64));
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 0), x->rank, &axis);
  if (st) return st;
  int keep = loom_kattr_int(c, "keepdims", 1) != 0;
  int last = c->opset >= 12 && loom_kattr_int(c, "select_last_index", 0);
  int max = !strcmp(c->op, "ArgMax");
  int64_t dims[LOOM_KT_MAX_RANK];
  int r = 0;
  for (int d = 0; d < x->rank; d++)
    if (d != axis) dims[r++] = x->dims[d];
    else if (keep) dims[r++] = 1;
  if ((st = loom_k_out_shape(c, y, r, dims))) return st;
  int64_t outer = loom_k_span(x, 0, axis), n = x->dims[axis], inner = loom_k_span(x, axis + 1, x->rank);
  if (n == 0 && outer * inner != 0) return KFAIL(c, LOOM_E_INVALID, "the reduced axis is empty");
  int fl = loom_dtype_is_float(x->dtype), uns = x->dtype == LOOM_DT_U64;
  int64_t *out = y->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i, best = 0;
      for (int64_t k = 1; k < n; k++) {
        int64_t a = base + best * inner, b = base + k * inner;
        int better, equal;
        if (fl) {
          double va = loom_kt_get_f64(x, a), vb = loom_kt_get_f64(x, b);
          if (isnan(va)) break; /* numpy: the first NaN wins */
          if (isnan(vb)) {
            best = k;
            break;
          }
          better = max ? vb > va : vb < va, equal = vb == va;
        } else {
          int64_t va = loom_kt_get_i64(x, a), vb = loom_kt_get_i64(x, b);
          better = uns ? (max ? (uint64_t)vb > (uint64_t)va : (uint64_t)vb < (uint64_t)va)
                       : (max ? vb > va : vb < va);
          equal = va == vb;
        }
        if (better || (equal && last)) best = k;
      }
      out[o * inner + i] = best;
    }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_reduce[] = {
    {"ReduceSum", k_reduce, 0, NULL},    {"ReduceMean", k_reduce, 0, NULL},      {"ReduceMax", k_reduce, 0, NULL},
    {"ReduceMin", k_reduce, 0, NULL},    {"ReduceProd", k_reduce, 0, NULL},      {"ReduceL1", k_reduce, 0, NULL},
    {"ReduceL2", k_reduce, 0, NULL},     {"ReduceLogSum", k_reduce, 0, NULL},    {"ReduceLogSumExp", k_reduce, 0, NULL},
    {"ReduceSumSquare", k_reduce, 0, NULL}, {"ArgMax", k_arg, 0, NULL},          {"ArgMin", k_arg, 0, NULL},
    {NULL, NULL, 0, NULL},
};
