/*
 * kernels_signal.c - the signal-processing ops of opset 17: DFT, STFT,
 * HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix.
 *
 * Complex tensors are real tensors with a last dim of 2 (real, imaginary);
 * a real input may have a last dim of 1.  The transforms are direct sums
 * in double with twiddles taken from one table per length (exact angles,
 * so no error accumulates along the sum); lengths here are frame-sized,
 * which keeps the O(n^2) cost small, and any length works (no power-of-two
 * restriction).  The inverse DFT divides by the length; onesided keeps the
 * first n/2 + 1 bins.  The windows and the mel matrix follow the operator
 * definitions (the mel bins are floored to whole DFT bins, as ONNX's
 * reference does).
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

static const double PI = 3.14159265358979323846;

/* One DFT of n input samples (re/im at stride `step` complex elements;
 * im NULL for real input) into `bins` outputs at out (interleaved). */
static void dft1(const struct loom_kt *x, int64_t at, int64_t step, int complex_in, int64_t n, int64_t len,
                 int inverse, int64_t bins, const double *cs, double *out) {
  for (int64_t k = 0; k < bins; k++) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < n && t < len; t++) {
      double xr = loom_kt_get_f64(x, (at + t * step) * (complex_in ? 2 : 1));
      double xi = complex_in ? loom_kt_get_f64(x, (at + t * step) * 2 + 1) : 0;
      int64_t j = (k * t) % len;
      double c = cs[2 * j], s = inverse ? cs[2 * j + 1] : -cs[2 * j + 1];
      re += xr * c - xi * s, im += xr * s + xi * c;
    }
    out[2 * k] = inverse ? re / (double)len : re, out[2 * k + 1] = inverse ? im / (double)len : im;
  }
}

/* cos and sin of 2 pi j / len for j < len. */
static double *twiddles(const struct loom_kcall *c, int64_t len) {
  double *cs = loom_k_alloc(c, 2 * (len ? len : 1), sizeof(double));
  for (int64_t j = 0; cs && j < len; j++) cs[2 * j] = cos(2 * PI * (double)j / (double)len), cs[2 * j + 1] = sin(2 * PI * (double)j / (double)len);
  return cs;
}

static loom_status k_dft(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 2, 1, 1);
  const struct loom_kt *x = &c->in[0];
  int axis = 0;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "input", 3, LOOM_KT_MAX_RANK);
  if (!st && x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2) st = KFAIL(c, LOOM_E_INVALID, "the last dim must be 1 or 2");
  if (!st) st = loom_k_axis(c, loom_kattr_int(c, "axis", 1), x->rank - 1, &axis);
  if (!st && axis == 0) st = KFAIL(c, LOOM_E_INVALID, "axis 0 is the batch");
  if (st) return st;
  int inverse = loom_kattr_int(c, "inverse", 0) != 0, onesided = loom_kattr_int(c, "onesided", 0) != 0;
  int complex_in = x->dims[x->rank - 1] == 2;
  int64_t n = x->dims[axis], len = n;
  if (c->n_in > 1 && loom_kt_present(&c->in[1]) && (st = loom_k_scalar_i64(c, &c->in[1], "dft_length", &len))) return st;
  if (len < 1) return KFAIL(c, LOOM_E_INVALID, "dft_length must be positive");
  if (onesided && (complex_in || inverse)) return KFAIL(c, LOOM_E_UNSUPPORTED, "onesided needs a real forward transform");
  int64_t bins = onesided ? len / 2 + 1 : len, dims[LOOM_KT_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = bins, dims[x->rank - 1] = 2;
  if ((st = loom_k_out_shape(c, &c->out[0], x->rank, dims))) return st;
  int64_t outer = loom_k_span(x, 0, axis), inner = loom_k_span(x, axis + 1, x->rank - 1);
  double *cs = twiddles(c, len), *buf = cs ? loom_k_alloc(c, 2 * bins, sizeof(double)) : NULL;
  if (!buf) return free(cs), LOOM_E_NOMEM;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      dft1(x, o * n * inner + i, inner, complex_in, n, len, inverse, bins, cs, buf);
      for (int64_t k = 0; k < bins; k++)
        for (int p = 0; p < 2; p++) loom_kt_set_f64(&c->out[0], ((o * bins + k) * inner + i) * 2 + p, buf[2 * k + p]);
    }
  free(cs), free(buf);
  return LOOM_OK;
}

static loom_status k_stft(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 4, 1, 1);
  const struct loom_kt *x = &c->in[0];
  const struct loom_kt *win = c->n_in > 2 && loom_kt_present(&c->in[2]) ? &c->in[2] : NULL;
  int64_t step = 0, flen = win ? loom_kt_numel(win) : -1;
  if (!st) st = loom_k_dtype(c, x, "signal", DTM_FLOAT);
  if (!st) st = loom_k_rank(c, x, "signal", 3, 3);
  if (!st && x->dims[2] != 1 && x->dims[2] != 2) st = KFAIL(c, LOOM_E_INVALID, "the signal's last dim must be 1 or 2");
  if (!st) st = loom_k_scalar_i64(c, &c->in[1], "frame_step", &step);
  if (!st && c->n_in > 3 && loom_kt_present(&c->in[3])) st = loom_k_scalar_i64(c, &c->in[3], "frame_length", &flen);
  if (st) return st;
  if (flen < 1 || step < 1 || flen > x->dims[1] || (win && loom_kt_numel(win) != flen))
    return KFAIL(c, LOOM_E_INVALID, "bad frame_length, frame_step or window");
  int complex_in = x->dims[2] == 2, onesided = loom_kattr_int(c, "onesided", 1) != 0;
  if (onesided && complex_in) return KFAIL(c, LOOM_E_UNSUPPORTED, "onesided STFT of a complex signal");
  int64_t frames = (x->dims[1] - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen;
  int64_t dims[4] = {x->dims[0], frames, bins, 2};
  if ((st = loom_k_out_shape(c, &c->out[0], 4, dims))) return st;
  double *cs = twiddles(c, flen), *buf = cs ? loom_k_alloc(c, 2 * bins + 2 * flen, sizeof(double)) : NULL;
  if (!buf) return free(cs), LOOM_E_NOMEM;
  double *frame = buf + 2 * bins;
  struct loom_kt fr = {LOOM_DT_F64, 2, {flen, 2}, frame};
  for (int64_t b = 0; b < x->dims[0]; b++)
    for (int64_t f = 0; f < frames; f++) {
      for (int64_t t = 0; t < flen; t++) {
        int64_t at = (b * x->dims[1] + f * step + t) * x->dims[2];
        double w = win ? loom_kt_get_f64(win, t) : 1;
        frame[2 * t] = loom_kt_get_f64(x, at) * w, frame[2 * t + 1] = complex_in ? loom_kt_get_f64(x, at + 1) * w : 0;
      }
      dft1(&fr, 0, 1, 1, flen, flen, 0, bins, cs, buf);
      for (int64_t k = 0; k < 2 * bins; k++) loom_kt_set_f64(&c->out[0], ((b * frames + f) * bins) * 2 + k, buf[k]);
    }
  free(cs), free(buf);
  return LOOM_OK;
}

/* The output type of a generator: output_datatype (default float). */
static loom_status gen_type(const struct loom_kcall *c, const struct loom_kt *y) {
  loom_dtype want = loom_dtype_from_onnx(loom_kattr_int(c, "output_datatype", 1));
  if (want != y->dtype)
    return KFAIL(c, LOOM_E_INVALID, "output type %s is not output_datatype's %s", loom_dtype_name(y->dtype),
                 loom_dtype_name(want));
  return LOOM_OK;
}

static loom_status k_window(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  int64_t n = 0;
  if (!st) st = loom_k_scalar_i64(c, &c->in[0], "size", &n);
  if (!st) st = gen_type(c, &c->out[0]);
  if (!st && n < 0) st = KFAIL(c, LOOM_E_INVALID, "size is negative");
  if (!st) st = loom_k_out_shape(c, &c->out[0], 1, &n);
  if (st) return st;
  double den = loom_kattr_int(c, "periodic", 1) ? (double)n : (double)(n - 1);
  double a0 = 0.5, a1 = 0.5, a2 = 0; /* Hann */
  if (!strcmp(c->op, "HammingWindow")) a0 = 25.0 / 46, a1 = 1 - a0;
  if (!strcmp(c->op, "BlackmanWindow")) a0 = 0.42, a1 = 0.5, a2 = 0.08;
  for (int64_t i = 0; i < n; i++) {
    double t = den > 0 ? 2 * PI * (double)i / den : 0;
    loom_kt_set_f64(&c->out[0], i, a0 - a1 * cos(t) + a2 * cos(2 * t));
  }
  return LOOM_OK;
}

static loom_status k_melweight(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 5, 5, 1, 1);
  int64_t mels = 0, dft = 0, rate = 0;
  double lo = 0, hi = 0;
  if (!st) st = loom_k_scalar_i64(c, &c->in[0], "num_mel_bins", &mels);
  if (!st) st = loom_k_scalar_i64(c, &c->in[1], "dft_length", &dft);
  if (!st) st = loom_k_scalar_i64(c, &c->in[2], "sample_rate", &rate);
  if (!st) st = loom_k_scalar_f64(c, &c->in[3], "lower_edge_hertz", &lo);
  if (!st) st = loom_k_scalar_f64(c, &c->in[4], "upper_edge_hertz", &hi);
  if (!st) st = gen_type(c, &c->out[0]);
  if (!st && (mels < 1 || dft < 1 || rate < 1 || lo < 0 || hi < lo)) st = KFAIL(c, LOOM_E_INVALID, "bad mel parameters");
  int64_t bins = dft / 2 + 1, dims[2] = {bins, mels};
  if (!st) st = loom_k_out_shape(c, &c->out[0], 2, dims);
  if (st) return st;
  int64_t *edge = loom_k_alloc(c, mels + 2, sizeof(int64_t));
  double *w = edge ? loom_k_alloc(c, bins * mels, sizeof(double)) : NULL;
  if (!w) return free(edge), LOOM_E_NOMEM;
  double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700), step = (mhi - mlo) / (double)(mels + 2);
  for (int64_t i = 0; i < mels + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
    edge[i] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
    edge[i] = edge[i] < 0 ? 0 : edge[i] >= bins ? bins - 1 : edge[i];
  }
  for (int64_t i = 0; i < mels; i++) {
    int64_t l = edge[i], m = edge[i + 1], r = edge[i + 2];
    if (m == l) w[m * mels + i] = 1;
    for (int64_t j = l; m > l && j <= m; j++) w[j * mels + i] = (double)(j - l) / (double)(m - l);
    for (int64_t j = m; r > m && j < r; j++) w[j * mels + i] = (double)(r - j) / (double)(r - m);
  }
  for (int64_t i = 0; i < bins * mels; i++) loom_kt_set_f64(&c->out[0], i, w[i]);
  free(edge), free(w);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_signal[] = {
    {"DFT", k_dft, 0, NULL},
    {"STFT", k_stft, 0, NULL},
    {"HannWindow", k_window, 0, NULL},
    {"HammingWindow", k_window, 0, NULL},
    {"BlackmanWindow", k_window, 0, NULL},
    {"MelWeightMatrix", k_melweight, 0, NULL},
    {NULL, NULL, 0, NULL},
};
