/*
 * kernels_norm.c - normalisations: BatchNormalization (inference, and the
 * training mode of opsets 14/15 that also returns running statistics),
 * InstanceNormalization, LayerNormalization (opset 17, with its optional
 * Mean and InvStdDev outputs), LpNormalization, LRN and
 * MeanVarianceNormalization.
 *
 * Statistics (means, variances, norms) accumulate in double over float32
 * data; the normalised values are written in float32.  Inference
 * BatchNormalization folds its four parameter vectors into one scale and
 * shift per channel, so its inner loop is a float32 multiply-add over the
 * spatial run.  Before opset 9, BatchNormalization's spatial=0 gives one
 * parameter per element of a sample (shape dims[1:]) instead of per
 * channel; both forms are taken.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* Mean and population variance of n floats at stride 1, in double.  Four
 * partial sums per pass (elements i mod 4), added at the end: a row of a
 * transformer (n in the hundreds) would otherwise be one serial chain of
 * double additions, which bounds the LayerNorm's speed, not the memory. */
static void moments(const float *x, int64_t n, double *mean, double *var) {
  double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; k++) s[k] += x[i + k];
  for (; i < n; i++) s[i % 4] += x[i];
  double m = n ? (s[0] + s[1] + s[2] + s[3]) / (double)n : 0;
  for (i = 0; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; k++) q[k] += (x[i + k] - m) * (x[i + k] - m);
  for (; i < n; i++) q[i % 4] += (x[i] - m) * (x[i] - m);
  *mean = m, *var = n ? (q[0] + q[1] + q[2] + q[3]) / (double)n : 0;
}

/* ---- BatchNormalization ---- */

static loom_status k_batchnorm(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 5, 5, 1, 5);
  const struct loom_kt *x = &c->in[0];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (st) return st;
  int64_t n = x->dims[0], ch = x->dims[1], sp = loom_k_span(x, 2, x->rank);
  int per_elem = c->opset < 9 && !loom_kattr_int(c, "spatial", 1);
  int64_t np = per_elem ? ch * sp : ch;
  for (int i = 1; i < 5; i++)
    if (loom_kt_numel(&c->in[i]) != np)
      return KFAIL(c, LOOM_E_INVALID, "input %d has %lld elements, expected %lld", i,
                   (long long)loom_kt_numel(&c->in[i]), (long long)np);
  int training = c->opset >= 14 && loom_kattr_int(c, "training_mode", 0);
  if (training && per_elem) return KFAIL(c, LOOM_E_UNSUPPORTED, "training mode with spatial=0");
  double eps = loom_kattr_float(c, "epsilon", 1e-5f), mom = loom_kattr_float(c, "momentum", 0.9f);
  struct loom_kviews v;
  if ((st = loom_k_views(c, 5, &v))) return loom_k_views_done(c, &v, st);
  double *a = loom_k_alloc(c, 2 * np, sizeof(double));
  if (!a) return loom_k_views_done(c, &v, LOOM_E_NOMEM);
  double *mean = NULL, *var = NULL;
  if (training) { /* batch statistics over N and the spatial dims */
    mean = loom_k_alloc(c, 2 * ch, sizeof(double));
    if (!mean) return free(a), loom_k_views_done(c, &v, LOOM_E_NOMEM);
    var = mean + ch;
    for (int64_t k = 0; k < ch; k++) {
      double s = 0, q = 0;
      for (int64_t b = 0; b < n; b++)
        for (int64_t i = 0; i < sp; i++) s += v.in[0][(b * ch + k) * sp + i];
      mean[k] = n * sp > 0 ? s / (double)(n * sp) : 0;
      for (int64_t b = 0; b < n; b++)
        for (int64_t i = 0; i < sp; i++) {
          double d = v.in[0][(b * ch + k) * sp + i] - mean[k];
          q += d * d;
        }
      var[k] = n * sp > 0 ? q / (double)(n * sp) : 0;
    }
    for (int o = 1; o < 3 && o < c->n_out; o++)
      if (loom_kt_present(&c->out[o]) && loom_kt_numel(&c->out[o]) == ch)
        for (int64_t k = 0; k < ch; k++)
          loom_kt_set_f64(&c->out[o], k, v.in[2 + o][k] * mom + (o == 1 ? mean : var)[k] * (1 - mom));
  }
  for (int64_t k = 0; k < np; k++) { /* y = x * a + b */
    double m = training ? mean[k] : v.in[3][k], s = training ? var[k] : v.in[4][k];
    a[k] = v.in[1][k] / sqrt(s + eps);
    a[np + k] = v.in[2][k] - m * a[k];
  }
  int64_t run = per_elem ? np : sp;
  for (int64_t b = 0; b < n * (per_elem ? 1 : ch); b++) {
    const float *px = v.in[0] + b * run;
    float *py = v.out + b * run;
    for (int64_t i = 0; i < run; i++) {
      int64_t k = per_elem ? i : b % ch;
      py[i] = (float)(px[i] * a[k] + a[np + k]);
    }
  }
  free(a), free(mean);
  return loom_k_views_done(c, &v, LOOM_OK);
}

/* ---- InstanceNormalization, MeanVarianceNormalization ---- */

static loom_status k_instnorm(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 3, 3, 1, 1);
  const struct loom_kt *x = &c->in[0];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st && (loom_kt_numel(&c->in[1]) != x->dims[1] || loom_kt_numel(&c->in[2]) != x->dims[1]))
    st = KFAIL(c, LOOM_E_INVALID, "scale and B must have C = %lld elements", (long long)x->dims[1]);
  if (st) return st;
  double eps = loom_kattr_float(c, "epsilon", 1e-5f);
  int64_t ch = x->dims[1], sp = loom_k_span(x, 2, x->rank), rows = x->dims[0] * ch;
  struct loom_kviews v;
  if ((st = loom_k_views(c, 3, &v))) return loom_k_views_done(c, &v, st);
  for (int64_t r = 0; r < rows; r++) {
    double m, var;
    moments(v.in[0] + r * sp, sp, &m, &var);
    double a = v.in[1][r % ch] / sqrt(var + eps), b = v.in[2][r % ch] - m * a;
    for (int64_t i = 0; i < sp; i++) v.out[r * sp + i] = (float)(v.in[0][r * sp + i] * a + b);
  }
  return loom_k_views_done(c, &v, LOOM_OK);
}

static loom_status k_mvn(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (st) return st;
  static const int64_t dflt[] = {0, 2, 3};
  const int64_t *axes = dflt;
  int na = loom_kattr_ints(c, "axes", &axes);
  if (na < 0) axes = dflt, na = 3;
  int red[LOOM_KT_MAX_RANK] = {0};
  for (int i = 0; i < na; i++) {
    int a;
    if ((st = loom_k_axis(c, axes[i], x->rank, &a))) return st;
    red[a] = 1;
  }
  /* Means of x and x^2 per kept index, by walking every element once. */
  int64_t n = loom_kt_numel(x), kept = 1, ost[LOOM_KT_MAX_RANK], idx[LOOM_KT_MAX_RANK] = {0};
  for (int d = x->rank - 1; d >= 0; d--) ost[d] = red[d] ? 0 : kept, kept *= red[d] ? 1 : x->dims[d];
  struct loom_kviews v;
  if ((st = loom_k_views(c, 1, &v))) return loom_k_views_done(c, &v, st);
  double *s = loom_k_alloc(c, 2 * kept, sizeof(double));
  int64_t *o = s ? loom_k_alloc(c, n, sizeof(int64_t)) : NULL;
  if (!o) return free(s), loom_k_views_done(c, &v, LOOM_E_NOMEM);
  for (int64_t i = 0, off = 0; i < n; i++) {
    o[i] = off;
    for (int d = x->rank - 1; d >= 0; d--) {
      off += ost[d];
      if (++idx[d] < x->dims[d]) break;
      off -= ost[d] * x->dims[d], idx[d] = 0;
    }
  }
  double cnt = kept ? (double)n / (double)kept : 1;
  for (int64_t i = 0; i < n; i++) s[o[i]] += v.in[0][i], s[kept + o[i]] += (double)v.in[0][i] * v.in[0][i];
  for (int64_t i = 0; i < n; i++) {
    double m = s[o[i]] / cnt, sd = sqrt(fmax(0, s[kept + o[i]] / cnt - m * m));
    v.out[i] = (float)((v.in[0][i] - m) / (sd + 1e-9));
  }
  free(s), free(o);
  return loom_k_views_done(c, &v, LOOM_OK);
}

/* ---- LayerNormalization ---- */

static loom_status k_layernorm(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 3, 1, 3);
  const struct loom_kt *x = &c->in[0];
  int axis = 0;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", -1), x->rank, &axis);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (st) return st;
  int64_t rows = loom_k_span(x, 0, axis), cols = loom_k_span(x, axis, x->rank);
  int64_t sdims[LOOM_KT_MAX_RANK];
  for (int d = 0; d < x->rank; d++) sdims[d] = d < axis ? x->dims[d] : 1;
  for (int o = 1; o < c->n_out && !st; o++)
    if (loom_kt_present(&c->out[o])) st = loom_k_out_shape(c, &c->out[o], x->rank, sdims);
  if (st) return st;
  double eps = loom_kattr_float(c, "epsilon", 1e-5f);
  float *w = loom_k_alloc(c, 2 * cols, sizeof(float)), *b = w ? w + cols : NULL;
  struct loom_kviews v;
  if (!w) return LOOM_E_NOMEM;
  if ((st = loom_k_expand_f32(c, &c->in[1], x->rank - axis, x->dims + axis, w)) ||
      (c->n_in > 2 && loom_kt_present(&c->in[2]) &&
       (st = loom_k_expand_f32(c, &c->in[2], x->rank - axis, x->dims + axis, b))))
    return free(w), st;
  if ((st = loom_k_views(c, 1, &v))) return free(w), loom_k_views_done(c, &v, st);
  for (int64_t r = 0; r < rows; r++) {
    const float *px = v.in[0] + r * cols;
    float *py = v.out + r * cols;
    double m, var;
    moments(px, cols, &m, &var);
    float mf = (float)m, inv = (float)(1 / sqrt(var + eps));
    for (int64_t i = 0; i < cols; i++) py[i] = (px[i] - mf) * inv * w[i] + b[i];
    if (c->n_out > 1 && loom_kt_present(&c->out[1])) loom_kt_set_f64(&c->out[1], r, m);
    if (c->n_out > 2 && loom_kt_present(&c->out[2])) loom_kt_set_f64(&c->out[2], r, inv);
  }
  free(w);
  return loom_k_views_done(c, &v, LOOM_OK);
}

/* ---- LpNormalization, LRN ---- */

static loom_status k_lpnorm(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int axis = 0;
  int64_t p = loom_kattr_int(c, "p", 2);
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", -1), x->rank, &axis);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st && p != 1 && p != 2) st = KFAIL(c, LOOM_E_INVALID, "p must be 1 or 2, is %lld", (long long)p);
  if (st) return st;
  int64_t outer = loom_k_span(x, 0, axis), n = x->dims[axis], inner = loom_k_span(x, axis + 1, x->rank);
  struct loom_kviews v;
  if ((st = loom_k_views(c, 1, &v))) return loom_k_views_done(c, &v, st);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double s = 0;
      for (int64_t k = 0; k < n; k++) {
        float e = v.in[0][(o * n + k) * inner + i];
        s += p == 1 ? fabs(e) : (double)e * e;
      }
      double norm = p == 1 ? s : sqrt(s);
      for (int64_t k = 0; k < n; k++) {
        int64_t j = (o * n + k) * inner + i;
        v.out[j] = (float)(v.in[0][j] / norm);
      }
    }
  return loom_k_views_done(c, &v, LOOM_OK);
}

static loom_status k_lrn(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int64_t size = loom_kattr_int(c, "size", 0);
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "input", 2, LOOM_KT_MAX_RANK);
  if (!st) st = loom_k_out_like(c, &c->out[0], x);
  if (!st && size < 1) st = KFAIL(c, LOOM_E_INVALID, "size must be at least 1");
  if (st) return st;
  double alpha = loom_kattr_float(c, "alpha", 1e-4f), beta = loom_kattr_float(c, "beta", 0.75f);
  double bias = loom_kattr_float(c, "bias", 1.0f);
  int64_t ch = x->dims[1], sp = loom_k_span(x, 2, x->rank), lo = (size - 1) / 2, hi = size - 1 - lo;
  struct loom_kviews v;
  if ((st = loom_k_views(c, 1, &v))) return loom_k_views_done(c, &v, st);
  for (int64_t b = 0; b < x->dims[0]; b++)
    for (int64_t k = 0; k < ch; k++)
      for (int64_t i = 0; i < sp; i++) {
        double s = 0;
        for (int64_t j = k - lo < 0 ? 0 : k - lo; j <= k + hi && j < ch; j++) {
          float e = v.in[0][(b * ch + j) * sp + i];
          s += (double)e * e;
        }
        int64_t at = (b * ch + k) * sp + i;
        v.out[at] = (float)(v.in[0][at] / pow(bias + alpha / (double)size * s, beta));
      }
  return loom_k_views_done(c, &v, LOOM_OK);
}

const struct loom_kernel loom_kernels_norm[] = {
    {"BatchNormalization", k_batchnorm, 0, NULL},
    {"InstanceNormalization", k_instnorm, 0, NULL},
    {"MeanVarianceNormalization", k_mvn, 0, NULL},
    {"LayerNormalization", k_layernorm, 0, NULL},
    {"LpNormalization", k_lpnorm, 0, NULL},
    {"LRN", k_lrn, 0, NULL},
    {NULL, NULL, 0, NULL},
};
