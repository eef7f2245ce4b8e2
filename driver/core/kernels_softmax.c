/*
 * kernels_softmax.c - Softmax, LogSoftmax, Hardmax, and the two losses
 * built on them: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Softmax-like ops changed meaning at opset 13: before, the input is seen
 * as a 2-D matrix [prod(dims[:axis]), prod(dims[axis:])] (axis default 1)
 * and each row is normalised; from 13, only dims[axis] is normalised
 * (axis default -1).  Both are the layout [outer, n, inner] here (inner = 1
 * before 13).  The float32 path subtracts the maximum, exponentiates and
 * sums in float32 as numpy does on float32 arrays; for inner > 1 it
 * sweeps whole inner rows at a time so the loops stay contiguous.
 *
 * The losses take scores [N, C, d1...] and targets [N, d1...]; a target
 * equal to ignore_index contributes nothing, and `mean` divides by the sum
 * of the weights of the targets that count (ONNX's definition).
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum smop { SM_SOFTMAX, SM_LOG, SM_HARD };

/* Softmax of rows [outer][n][inner] of float32 x into y. */
/* One contiguous row (inner = 1, the usual last-axis case). */
static void softmax_row(enum smop op, const float *x, float *y, int64_t n) {
  float mx = -INFINITY, sum = 0;
  int64_t arg = 0;
  for (int64_t k = 0; k < n; k++)
    if (x[k] > mx) mx = x[k], arg = k;
  if (op == SM_HARD) {
    for (int64_t k = 0; k < n; k++) y[k] = k == arg ? 1.0f : 0.0f;
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    float e = expf(x[k] - mx);
    if (op == SM_SOFTMAX) y[k] = e;
    sum += e;
  }
  if (op == SM_SOFTMAX) {
    float inv = 1.0f / sum;
    for (int64_t k = 0; k < n; k++) y[k] *= inv;
  } else {
    float lse = mx + logf(sum);
    for (int64_t k = 0; k < n; k++) y[k] = x[k] - lse;
  }
}

static void softmax_f32(enum smop op, const float *x, float *y, int64_t outer, int64_t n,
                        int64_t inner, float *tmp) {
  if (inner == 1) {
    for (int64_t o = 0; o < outer; o++) softmax_row(op, x + o * n, y + o * n, n);
    return;
  }
  for (int64_t o = 0; o < outer; o++) {
    const float *xo = x + o * n * inner;
    float *yo = y + o * n * inner, *mx = tmp, *sum = tmp + inner;
    for (int64_t i = 0; i < inner; i++) mx[i] = -INFINITY, sum[i] = 0;
    for (int64_t k = 0; k < n; k++)
      for (int64_t i = 0; i < inner; i++) mx[i] = xo[k * inner + i] > mx[i] ? xo[k * inner + i] : mx[i];
    if (op == SM_HARD) {
      for (int64_t i = 0; i < inner; i++) sum[i] = 0; /* "already set" flag */
      for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < inner; i++) {
          int hit = !sum[i] && xo[k * inner + i] == mx[i];
          yo[k * inner + i] = hit ? 1.0f : 0.0f;
          if (hit) sum[i] = 1;
        }
      continue;
    }
    for (int64_t k = 0; k < n; k++)
      for (int64_t i = 0; i < inner; i++) {
        float e = expf(xo[k * inner + i] - mx[i]);
        if (op == SM_SOFTMAX) yo[k * inner + i] = e;
        sum[i] += e;
      }
    if (op == SM_SOFTMAX) {
      for (int64_t i = 0; i < inner; i++) sum[i] = 1.0f / sum[i];
      for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < inner; i++) yo[k * inner + i] *= sum[i];
    } else {
      for (int64_t i = 0; i < inner; i++) sum[i] = mx[i] + logf(sum[i]);
      for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < inner; i++) yo[k * inner + i] = xo[k * inner + i] - sum[i];
    }
  }
}

/* [outer, n, inner] of the op's axis for this opset. */
static loom_status layout(const struct loom_kcall *c, const struct loom_kt *x, int64_t dflt13,
                          int64_t *outer, int64_t *n, int64_t *inner) {
  int axis;
  int64_t a = loom_kattr_int(c, "axis", c->opset >= 13 ? dflt13 : 1);
  loom_status st = loom_k_axis(c, a, x->rank ? x->rank : 1, &axis);
  if (st) return st;
  if (x->rank == 0) return *outer = *n = *inner = 1, LOOM_OK;
  *outer = loom_k_span(x, 0, axis);
  if (c->opset >= 13) {
    *n = x->dims[axis];
    *inner = loom_k_span(x, axis + 1, x->rank);
  } else {
    *n = loom_k_span(x, axis, x->rank);
    *inner = 1;
  }
  return LOOM_OK;
}

static loom_status k_softmax(const struct loom_kcall *c) {
  enum smop op = !strcmp(c->op, "Softmax") ? SM_SOFTMAX : !strcmp(c->op, "LogSoftmax") ? SM_LOG : SM_HARD;
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  int64_t outer, n, inner;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_out_like(c, y, x);
  if (!st) st = layout(c, x, -1, &outer, &n, &inner);
  if (st) return st;
  struct loom_kviews v;
  float *tmp = NULL;
  if (!(st = loom_k_views(c, 1, &v)) && !(tmp = loom_k_alloc(c, 2 * inner, sizeof(float)))) st = LOOM_E_NOMEM;
  if (!st) softmax_f32(op, v.in[0], v.out, outer, n, inner, tmp);
  free(tmp);
  return loom_k_views_done(c, &v, st);
}

/* ---- losses ---- */

struct loss {
  int64_t n, classes, d; /* scores as [n, classes, d] */
  const float *score;    /* log-probabilities */
  const struct loom_kt *target, *weight;
  int64_t ignore;
  int has_ignore;
};

/* Per-element losses into l[n * d] and weights into w; a bad target is refused. */
static loom_status nll(const struct loom_kcall *c, const struct loss *s, float *l, float *w) {
  for (int64_t i = 0; i < s->n; i++)
    for (int64_t j = 0; j < s->d; j++) {
      int64_t t = loom_kt_get_i64(s->target, i * s->d + j), e = i * s->d + j;
      if (s->has_ignore && t == s->ignore) {
        l[e] = 0, w[e] = 0;
        continue;
      }
      if (t < 0 || t >= s->classes)
        return KFAIL(c, LOOM_E_INVALID, "target %lld is outside [0, %lld)", (long long)t,
                     (long long)s->classes);
      w[e] = s->weight ? (float)loom_kt_get_f64(s->weight, t) : 1.0f;
      l[e] = -s->score[(i * s->classes + t) * s->d + j] * w[e];
    }
  return LOOM_OK;
}

/* Reduces the losses into y per `reduction`. */
static loom_status reduce_loss(const struct loom_kcall *c, struct loom_kt *y, const float *l,
                               const float *w, int64_t m, const struct loom_kt *target) {
  static const char *const modes[] = {"none", "sum", "mean", NULL};
  int mode;
  loom_status st = loom_k_choice(c, "reduction", "mean", modes, &mode);
  if (!st) st = mode ? loom_k_out_shape(c, y, 0, NULL) : loom_k_out_like(c, y, target);
  if (st) return st;
  if (mode == 0) {
    for (int64_t e = 0; e < m; e++) loom_kt_set_f64(y, e, l[e]);
    return LOOM_OK;
  }
  double sum = 0, wsum = 0;
  for (int64_t e = 0; e < m; e++) sum += l[e], wsum += w[e];
  loom_kt_set_f64(y, 0, mode == 1 ? sum : sum / wsum);
  return LOOM_OK;
}

static loom_status k_loss(const struct loom_kcall *c) {
  int sce = !strcmp(c->op, "SoftmaxCrossEntropyLoss");
  loom_status st = loom_k_arity(c, 2, 3, 1, sce ? 2 : 1);
  const struct loom_kt *x = &c->in[0], *t = &c->in[1];
  struct loss s = {0};
  if (!st) st = loom_k_dtype(c, x, "scores", DTM_FLOAT);
  if (!st) st = loom_k_dtype(c, t, "target", DTM_INDEX);
  if (!st) st = loom_k_rank(c, x, "scores", 2, LOOM_KT_MAX_RANK);
  if (!st && (t->rank != x->rank - 1 || t->dims[0] != x->dims[0] ||
              memcmp(t->dims + 1, x->dims + 2, (size_t)(t->rank - 1) * 8)))
    st = KFAIL(c, LOOM_E_INVALID, "target shape does not match the scores [N, C, d...]");
  if (!st && c->n_in > 2 && loom_kt_present(&c->in[2])) {
    s.weight = &c->in[2];
    if (s.weight->rank != 1 || s.weight->dims[0] != x->dims[1])
      st = KFAIL(c, LOOM_E_INVALID, "weight must have C = %lld elements", (long long)x->dims[1]);
  }
  if (!st && sce && c->n_out > 1 && loom_kt_present(&c->out[1]))
    st = loom_k_out_like(c, &c->out[1], x);
  if (st) return st;
  s.n = x->dims[0], s.classes = x->dims[1], s.d = loom_k_span(x, 2, x->rank);
  s.target = t;
  s.has_ignore = loom_kattr_find(c, "ignore_index") != NULL;
  s.ignore = loom_kattr_int(c, "ignore_index", 0);
  int64_t m = s.n * s.d;
  float *xt = NULL, *logp = NULL, *tmp = NULL;
  float *l = loom_k_alloc(c, m, sizeof(float)), *w = loom_k_alloc(c, m, sizeof(float));
  const float *px = l && w ? loom_k_in_f32(c, x, &xt) : NULL;
  st = LOOM_E_NOMEM;
  if (px && sce) {
    logp = loom_k_alloc(c, loom_kt_numel(x), sizeof(float));
    tmp = loom_k_alloc(c, 2 * s.d, sizeof(float));
    if (logp && tmp) softmax_f32(SM_LOG, px, logp, s.n, s.classes, s.d, tmp);
  }
  s.score = sce ? logp : px;
  if (px && s.score && (!sce || tmp)) {
    st = nll(c, &s, l, w);
    if (!st) st = reduce_loss(c, &c->out[0], l, w, m, t);
    if (!st && sce && c->n_out > 1 && loom_kt_present(&c->out[1]))
      for (int64_t i = 0, n = loom_kt_numel(x); i < n; i++) loom_kt_set_f64(&c->out[1], i, logp[i]);
  }
  free(l), free(w), free(xt), free(logp), free(tmp);
  return st;
}

const struct loom_kernel loom_kernels_softmax[] = {
    {"Softmax", k_softmax, 0, NULL},
    {"LogSoftmax", k_softmax, 0, NULL},
    {"Hardmax", k_softmax, 0, NULL},
    {"NegativeLogLikelihoodLoss", k_loss, 0, NULL},
    {"SoftmaxCrossEntropyLoss", k_loss, 0, NULL},
    {NULL, NULL, 0, NULL},
};
