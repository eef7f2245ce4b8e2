/*
 * kernels_resize.c - Resize (opsets 10, 11, 13: nearest, linear and cubic
 * modes, every coordinate_transformation_mode and nearest_mode,
 * exclude_outside, tf_crop_and_resize with its roi and extrapolation) and
 * Upsample (opsets 7 to 9).
 *
 * Interpolation is separable: for every dim and every output index a
 * table gives the source taps (1 for nearest, 2 for linear, 4 for cubic,
 * 1 again wherever the mapping is the identity, as for N and C) and their
 * weights, or marks the index as outside (tf_crop_and_resize's
 * extrapolation).  Each output row then combines the outer dims' taps
 * once and runs the innermost dim from its table: for a 2-D bilinear
 * resize that is 2 row taps times 2 column taps per element, read from
 * float32 directly.  Taps beyond the input are clamped to its edge (the
 * reference's edge padding) or, for cubic with exclude_outside, dropped
 * with the remaining weights renormalised.
 *
 * Before opset 11 (and for Upsample) the coordinates are asymmetric
 * (x / scale) and nearest rounds as ONNX Runtime's "simple" mode: down
 * when upsampling, up when downsampling.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

#define MAXTAP 4

enum ctm { C_HALF, C_PYTORCH, C_ALIGN, C_ASYM, C_TFNN, C_CROP };
enum rmode { R_NEAREST, R_LINEAR, R_CUBIC };
enum nmode { N_PREFER_FLOOR, N_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

struct rs {
  enum ctm ctm;
  enum rmode mode;
  enum nmode nearest;
  double cubic_a, extrapolation;
  int exclude_outside;
};

/* Per-dim tables: for output index o, taps[o][t] (source index) with
 * weights wt[o][t]; ntap taps each; out[o] marks extrapolation. */
struct dimtab {
  int ntap;
  int64_t *taps;
  double *wt;
  uint8_t *outside;
};

/* x_original of output index x; `out` is the resized length as ONNX's
 * reference takes it: in * scale, not rounded, when scales are given. */
static double source_coord(const struct rs *r, double x, double scale, int64_t in, double out,
                           double roi_lo, double roi_hi) {
  switch (r->ctm) {
  case C_HALF: return (x + 0.5) / scale - 0.5;
  case C_PYTORCH: return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  case C_ALIGN: return out == 1 ? 0 : x * (double)(in - 1) / (double)(out - 1);
  case C_ASYM: return x / scale;
  case C_TFNN: return (x + 0.5) / scale;
  default:
    return out > 1 ? roi_lo * (double)(in - 1) + x * (roi_hi - roi_lo) * (double)(in - 1) / (double)(out - 1)
                   : 0.5 * (roi_lo + roi_hi) * (double)(in - 1);
  }
}

static int64_t nearest_index(enum nmode m, double x, double scale) {
  double f = floor(x);
  switch (m) {
  case N_PREFER_FLOOR: return (int64_t)(x - f == 0.5 ? f : round(x));
  case N_PREFER_CEIL: return (int64_t)(x - f == 0.5 ? f + 1 : round(x));
  case N_FLOOR: return (int64_t)f;
  case N_CEIL: return (int64_t)ceil(x);
  default: return (int64_t)(scale < 1 ? ceil(x) : f);
  }
}

static void cubic_weights(double a, double s, double *w) {
  double t = s + 1, u = 1 - s, v = 2 - s;
  w[0] = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  w[1] = ((a + 2) * s - (a + 3)) * s * s + 1;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
  w[3] = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
}

static int64_t clampi(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

/* Fills one dim's table. */
static void make_tab(const struct rs *r, struct dimtab *t, int64_t in, int64_t out, double scale, double len,
                     double lo, double hi) {
  int identity = in == out;
  for (int64_t o = 0; identity && o < out; o++)
    identity = source_coord(r, (double)o, scale, in, len, lo, hi) == (double)o;
  t->ntap = identity || r->mode == R_NEAREST ? 1 : r->mode == R_LINEAR ? 2 : 4;
  for (int64_t o = 0; o < out; o++) {
    int64_t *tp = t->taps + o * MAXTAP;
    double *w = t->wt + o * MAXTAP;
    t->outside[o] = 0;
    if (identity) {
      tp[0] = o, w[0] = 1;
      continue;
    }
    double x = source_coord(r, (double)o, scale, in, len, lo, hi);
    if (r->ctm == C_CROP && (x < 0 || x > (double)(in - 1))) t->outside[o] = 1;
    if (r->mode == R_NEAREST) {
      tp[0] = clampi(nearest_index(r->nearest, x, scale), in - 1), w[0] = 1;
      continue;
    }
    double f = floor(x), s = x - f;
    if (r->mode == R_LINEAR) {
      tp[0] = clampi((int64_t)f, in - 1), tp[1] = clampi((int64_t)f + 1, in - 1);
      w[0] = 1 - s, w[1] = s;
      continue;
    }
    cubic_weights(r->cubic_a, s, w);
    double sum = 0;
    for (int k = 0; k < 4; k++) {
      int64_t src = (int64_t)f - 1 + k;
      if (r->exclude_outside && (src < 0 || src >= in)) w[k] = 0;
      sum += w[k];
      tp[k] = clampi(src, in - 1);
    }
    if (r->exclude_outside && sum != 0)
      for (int k = 0; k < 4; k++) w[k] /= sum;
  }
}

/* One float32 output row of `len` elements: the sum over the outer taps
 * (offsets off, weights wo) of the row interpolated along the last dim. */
static void float_row(const struct dimtab *t, int nc, const int64_t *off, const double *wo, const float *xf,
                      float *yr, int64_t len, double extrap) {
  for (int64_t i = 0; i < len; i++) yr[i] = 0;
  for (int j = 0; j < nc; j++) {
    const float *row = xf + off[j];
    float w = (float)wo[j];
    const int64_t *tp = t->taps;
    const double *wt = t->wt;
    if (t->ntap == 1)
      for (int64_t i = 0; i < len; i++) yr[i] += w * row[tp[i * MAXTAP]];
    else if (t->ntap == 2)
      for (int64_t i = 0; i < len; i++)
        yr[i] += w * (float)(wt[i * MAXTAP] * row[tp[i * MAXTAP]] + wt[i * MAXTAP + 1] * row[tp[i * MAXTAP + 1]]);
    else
      for (int64_t i = 0; i < len; i++) {
        double v = 0;
        for (int k = 0; k < MAXTAP; k++) v += wt[i * MAXTAP + k] * row[tp[i * MAXTAP + k]];
        yr[i] += w * (float)v;
      }
  }
  for (int64_t i = 0; i < len; i++)
    if (t->outside[i]) yr[i] = (float)extrap;
}

/* Runs the resize of x into y with per-dim tables. */
static void resize_run(const struct loom_kt *x, struct loom_kt *y, const struct dimtab *tab, double extrap,
                       const float *xf, float *yf) {
  int r = x->rank;
  int64_t xs[LOOM_KT_MAX_RANK], idx[LOOM_KT_MAX_RANK] = {0}, n = loom_kt_numel(y);
  loom_k_strides(x, xs);
  int64_t last = r ? y->dims[r - 1] : 1;
  int64_t off[256];
  double wo[256];
  for (int64_t o = 0; o < n; o += last) {
    /* The outer dims' combined taps: up to 4^(r-1), capped by MAXCOMB. */
    int nc = 1, outside = 0;
    off[0] = 0, wo[0] = 1;
    for (int d = 0; d < r - 1; d++) {
      const struct dimtab *t = &tab[d];
      outside |= t->outside[idx[d]];
      int m = nc;
      for (int k = t->ntap - 1; k >= 0; k--)
        for (int j = 0; j < m; j++) {
          off[k * m + j] = off[j] + t->taps[idx[d] * MAXTAP + k] * xs[d];
          wo[k * m + j] = wo[j] * t->wt[idx[d] * MAXTAP + k];
        }
      nc = m * t->ntap;
    }
    const struct dimtab *t = r ? &tab[r - 1] : NULL;
    if (xf && yf && t && !outside) { /* float32 rows: taps outer, the row inner */
      float_row(t, nc, off, wo, xf, yf + o, last, extrap);
    } else for (int64_t i = 0; i < last; i++) {
      double v = 0;
      if (outside || (t && t->outside[i])) {
        v = extrap;
      } else {
        for (int j = 0; j < nc; j++)
          for (int k = 0; k < (t ? t->ntap : 1); k++) {
            int64_t at = off[j] + (t ? t->taps[i * MAXTAP + k] : 0);
            double w = wo[j] * (t ? t->wt[i * MAXTAP + k] : 1);
            v += w * (xf ? xf[at] : loom_kt_get_f64(x, at));
          }
      }
      if (yf) yf[o + i] = (float)v;
      else if (loom_dtype_is_float(y->dtype)) loom_kt_set_f64(y, o + i, v);
      else loom_kt_set_f64(y, o + i, rint(v)); /* integer types: nearest of the interpolation */
    }
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < y->dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* Reads the op's options for its opset. */
static loom_status options(const struct loom_kcall *c, int legacy, struct rs *r) {
  static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const nmodes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
  int a = 0, b = 0, m = 0;
  loom_status st = loom_k_choice(c, "mode", "nearest", modes, &m);
  if (!st && !legacy) st = loom_k_choice(c, "coordinate_transformation_mode", "half_pixel", ctms, &a);
  if (!st && !legacy) st = loom_k_choice(c, "nearest_mode", "round_prefer_floor", nmodes, &b);
  if (st) return st;
  if (legacy && m == R_CUBIC) return KFAIL(c, LOOM_E_UNSUPPORTED, "cubic mode needs opset 11");
  r->mode = (enum rmode)m;
  r->ctm = legacy ? C_ASYM : (enum ctm)a;
  r->nearest = legacy ? N_SIMPLE : (enum nmode)b;
  r->cubic_a = loom_kattr_float(c, "cubic_coeff_a", -0.75f);
  r->exclude_outside = loom_kattr_int(c, "exclude_outside", 0) != 0;
  r->extrapolation = loom_kattr_float(c, "extrapolation_value", 0);
  return LOOM_OK;
}

static loom_status k_resize(const struct loom_kcall *c) {
  int upsample = !strcmp(c->op, "Upsample"), legacy = upsample || c->opset < 11;
  int n_scales_in = upsample ? (c->opset >= 9 ? 1 : -1) : legacy ? 1 : 2;
  loom_status st = loom_k_arity(c, n_scales_in < 0 ? 1 : (legacy ? 2 : 1), legacy ? 2 : 4, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  struct rs r = {0};
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_dtype(c, x, "input", DTM_NUM);
  if (!st) st = options(c, legacy, &r);
  if (st) return st;
  int rank = x->rank;
  double scale[LOOM_KT_MAX_RANK], len[LOOM_KT_MAX_RANK], lo[LOOM_KT_MAX_RANK], hi[LOOM_KT_MAX_RANK];
  int64_t dims[LOOM_KT_MAX_RANK];
  const struct loom_kt *sc = n_scales_in > 0 && c->n_in > n_scales_in && loom_kt_present(&c->in[n_scales_in]) ? &c->in[n_scales_in] : NULL;
  const struct loom_kt *sz = !legacy && c->n_in > 3 && loom_kt_present(&c->in[3]) ? &c->in[3] : NULL;
  const struct loom_kt *roi = !legacy && c->n_in > 1 && loom_kt_present(&c->in[1]) ? &c->in[1] : NULL;
  if (sc && loom_kt_numel(sc) == 0) sc = NULL;
  if (sz && loom_kt_numel(sz) == 0) sz = NULL;
  const float *ascales = NULL;
  int nattr = upsample && c->opset < 9 ? loom_kattr_floats(c, "scales", &ascales) : -1;
  if (!sc && !sz && nattr < 0) return KFAIL(c, LOOM_E_INVALID, "neither scales nor sizes is given");
  if ((sc && loom_kt_numel(sc) != rank) || (sz && loom_kt_numel(sz) != rank) || (nattr >= 0 && nattr != rank))
    return KFAIL(c, LOOM_E_INVALID, "scales or sizes must have %d values", rank);
  if (r.ctm == C_CROP && (!roi || loom_kt_numel(roi) != 2 * rank))
    return KFAIL(c, LOOM_E_INVALID, "tf_crop_and_resize needs an roi of %d values", 2 * rank);
  for (int d = 0; d < rank; d++) {
    lo[d] = roi && r.ctm == C_CROP ? loom_kt_get_f64(roi, d) : 0;
    hi[d] = roi && r.ctm == C_CROP ? loom_kt_get_f64(roi, rank + d) : 1;
    if (sz) {
      dims[d] = loom_k_idx(sz, d);
      scale[d] = x->dims[d] ? (double)(float)((double)dims[d] / (double)x->dims[d]) : 1;
      len[d] = (double)dims[d];
    } else {
      scale[d] = sc ? (double)(float)loom_kt_get_f64(sc, d) : ascales[d];
      if (!(scale[d] > 0)) return KFAIL(c, LOOM_E_INVALID, "scale %g is not positive", scale[d]);
      double v = (double)x->dims[d] * scale[d];
      if (r.ctm == C_CROP) v = (double)x->dims[d] * (hi[d] - lo[d]) * scale[d];
      dims[d] = (int64_t)floor(v);
      len[d] = (double)x->dims[d] * scale[d];
    }
    if (dims[d] < 0 || (dims[d] > 0 && x->dims[d] == 0)) return KFAIL(c, LOOM_E_INVALID, "bad output size");
  }
  if ((st = loom_k_out_shape(c, y, rank, dims))) return st;
  struct dimtab tab[LOOM_KT_MAX_RANK];
  int64_t total = 0;
  for (int d = 0; d < rank; d++) total += dims[d];
  int64_t *taps = loom_k_alloc(c, total * MAXTAP, sizeof(int64_t));
  double *wt = taps ? loom_k_alloc(c, total * MAXTAP, sizeof(double)) : NULL;
  uint8_t *outside = wt ? loom_k_alloc(c, total, 1) : NULL;
  if (!outside) return free(taps), free(wt), LOOM_E_NOMEM;
  int ncomb = 1;
  for (int d = 0, at = 0; d < rank; at += (int)dims[d], d++) {
    tab[d] = (struct dimtab){0, taps + at * MAXTAP, wt + at * MAXTAP, outside + at};
    make_tab(&r, &tab[d], x->dims[d], dims[d], scale[d], len[d], lo[d], hi[d]);
    if (d < rank - 1) ncomb *= tab[d].ntap;
  }
  if (ncomb > 256) st = KFAIL(c, LOOM_E_UNSUPPORTED, "interpolating over %d dims at once", rank);
  else resize_run(x, y, tab, r.extrapolation, x->dtype == LOOM_DT_F32 ? x->data : NULL,
                  y->dtype == LOOM_DT_F32 ? y->data : NULL);
  free(taps), free(wt), free(outside);
  return st;
}

const struct loom_kernel loom_kernels_resize[] = {
    {"Resize", k_resize, 0, NULL},
    {"Upsample", k_resize, 0, NULL},
    {NULL, NULL, 0, NULL},
};
