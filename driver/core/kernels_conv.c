/*
 * kernels_conv.c - Conv, ConvTranspose, ConvInteger and QLinearConv over
 * any number of spatial dims, with groups, strides, dilations, explicit or
 * automatic pads.
 *
 * Float Conv is im2col + GEMM per image and group: the window of every
 * output position is unrolled into a column (zeros where it hangs over the
 * padding) and the group's weights [M/g, C/g * K] multiply the columns
 * with loom_k_sgemm, which blocks for the caches; a 1x1, stride-1,
 * unpadded convolution skips the unrolling (its input already is the
 * column matrix).  ConvTranspose runs the same pieces backwards: the
 * weights' transpose times the input gives, per input position, the
 * contributions of every kernel tap, which col2im adds into the output.
 *
 * The integer forms accumulate exactly in int64 over a direct loop nest
 * (they are small and rare on the host: the accelerator runs quantized
 * convolutions); QLinearConv requantizes with the float32 multiplier
 * x_scale * w_scale[m] / y_scale, rounding to nearest even, as ONNX
 * Runtime does, and saturates.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

/* Spatial element counts. */
static int64_t prod(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= d[i];
  return p;
}

/* Advances an odometer over dims[0..n); 0 when it wrapped around. */
static int step(int64_t *pos, const int64_t *dims, int n) {
  for (int i = n - 1; i >= 0; i--) {
    if (++pos[i] < dims[i]) return 1;
    pos[i] = 0;
  }
  return 0;
}

/* col[(ch * K + tap) * P + p] = x[ch][window of output p at tap] or 0. */
static void im2col(const struct loom_kwin *w, const float *x, int64_t chans, float *col) {
  int n = w->nsp;
  int64_t taps = prod(w->k, n), outs = prod(w->out, n), ins = prod(w->in, n), last = w->out[n - 1];
  int64_t s = w->stride[n - 1];
  for (int64_t ch = 0; ch < chans; ch++) {
    int64_t kpos[LOOM_KT_MAX_RANK] = {0};
    for (int64_t tap = 0; tap < taps; tap++, step(kpos, w->k, n)) {
      float *dst = col + (ch * taps + tap) * outs;
      int64_t opos[LOOM_KT_MAX_RANK] = {0};
      for (int64_t p = 0; p < outs; p += last) {
        int64_t base = 0, ok = 1;
        for (int i = 0; i < n - 1; i++) {
          int64_t v = opos[i] * w->stride[i] - w->pad_b[i] + kpos[i] * w->dil[i];
          ok &= v >= 0 && v < w->in[i];
          base = base * w->in[i] + v;
        }
        step(opos, w->out, n - 1);
        if (!ok) {
          memset(dst + p, 0, (size_t)last * sizeof(float));
          continue;
        }
        const float *src = x + ch * ins + base * w->in[n - 1];
        int64_t off = kpos[n - 1] * w->dil[n - 1] - w->pad_b[n - 1];
        for (int64_t o = 0; o < last; o++) {
          int64_t v = o * s + off;
          dst[p + o] = v >= 0 && v < w->in[n - 1] ? src[v] : 0.0f;
        }
      }
    }
  }
}

/* y[ch][window of input p at tap] += col[(ch * K + tap) * P + p]: the
 * transposed convolution's scatter; w->in/out are the conv's roles (out =
 * the transposed conv's input). */
static void col2im(const struct loom_kwin *w, const float *col, int64_t chans, float *y) {
  int n = w->nsp;
  int64_t taps = prod(w->k, n), outs = prod(w->out, n), ins = prod(w->in, n);
  for (int64_t ch = 0; ch < chans; ch++) {
    int64_t kpos[LOOM_KT_MAX_RANK] = {0};
    for (int64_t tap = 0; tap < taps; tap++, step(kpos, w->k, n)) {
      const float *src = col + (ch * taps + tap) * outs;
      int64_t opos[LOOM_KT_MAX_RANK] = {0};
      for (int64_t p = 0; p < outs; p++, step(opos, w->out, n)) {
        int64_t at = 0, ok = 1;
        for (int i = 0; i < n; i++) {
          int64_t v = opos[i] * w->stride[i] - w->pad_b[i] + kpos[i] * w->dil[i];
          ok &= v >= 0 && v < w->in[i];
          at = at * w->in[i] + v;
        }
        if (ok) y[ch * ins + at] += src[p];
      }
    }
  }
}

/* A 2-D convolution with one input and one output channel per group
 * (depthwise): as a GEMM it would be one row per group, so it runs
 * directly, tap by tap, along contiguous output rows. */
static void depthwise2d(const struct loom_kwin *w, const float *x, const float *wt, float *y, int64_t planes,
                        int64_t ch) {
  int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1], KH = w->k[0], KW = w->k[1];
  int64_t sh = w->stride[0], sw = w->stride[1];
  for (int64_t p = 0; p < planes; p++) {
    const float *xp = x + p * H * W, *wp = wt + (p % ch) * KH * KW;
    float *yp = y + p * OH * OW;
    memset(yp, 0, (size_t)(OH * OW) * sizeof(float));
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t kh = 0; kh < KH; kh++) {
        int64_t ih = oh * sh - w->pad_b[0] + kh * w->dil[0];
        if (ih < 0 || ih >= H) continue;
        const float *xr = xp + ih * W;
        float *yr = yp + oh * OW;
        for (int64_t kw = 0; kw < KW; kw++) {
          float wv = wp[kh * KW + kw];
          int64_t off = kw * w->dil[1] - w->pad_b[1];
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw, hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / sw + 1;
          if (hi > OW) hi = OW;
          if (sw == 1)
            for (int64_t o = lo; o < hi; o++) yr[o] += wv * xr[o + off];
          else
            for (int64_t o = lo; o < hi; o++) yr[o] += wv * xr[o * sw + off];
        }
      }
  }
}

/* The shared checks of the float forms: x, w, optional bias; group. */
static loom_status conv_operands(const struct loom_kcall *c, int64_t *group) {
  loom_status st = loom_k_arity(c, 2, 3, 1, 1);
  const struct loom_kt *x = &c->in[0], *w = &c->in[1];
  if (!st) st = loom_k_dtype(c, x, "X", DTM_FLOAT);
  if (!st) st = loom_k_same_dtype(c, x, w, "W");
  if (!st) st = loom_k_same_dtype(c, x, &c->out[0], "the output");
  if (!st && w->rank != x->rank) st = KFAIL(c, LOOM_E_INVALID, "W has rank %d, X %d", w->rank, x->rank);
  *group = loom_kattr_int(c, "group", 1);
  if (!st && *group < 1) st = KFAIL(c, LOOM_E_INVALID, "group must be positive");
  return st;
}

/* Adds bias[m] to every spatial position of y's channel m. */
static void add_bias(const struct loom_kcall *c, float *y, int64_t n, int64_t m, int64_t sp) {
  if (c->n_in < 3 || !loom_kt_present(&c->in[2])) return;
  for (int64_t b = 0; b < n; b++)
    for (int64_t k = 0; k < m; k++) {
      float v = (float)loom_kt_get_f64(&c->in[2], k), *row = y + (b * m + k) * sp;
      for (int64_t i = 0; i < sp; i++) row[i] += v;
    }
}

static loom_status k_conv(const struct loom_kcall *c) {
  int64_t group;
  struct loom_kwin win;
  loom_status st = conv_operands(c, &group);
  const struct loom_kt *x = &c->in[0], *w = &c->in[1];
  if (!st) st = loom_k_window(c, x, w->dims + 2, 0, &win);
  if (st) return st;
  int64_t n = x->dims[0], ch = x->dims[1], m = w->dims[0], cg = ch / group, mg = m / group;
  if (ch % group || m % group || w->dims[1] != cg)
    return KFAIL(c, LOOM_E_INVALID, "channels (%lld in, %lld out, W %lld) do not fit group %lld", (long long)ch,
                 (long long)m, (long long)w->dims[1], (long long)group);
  if (c->n_in > 2 && loom_kt_present(&c->in[2]) && loom_kt_numel(&c->in[2]) != m)
    return KFAIL(c, LOOM_E_INVALID, "B must have M = %lld values", (long long)m);
  if ((st = loom_k_window_out(c, &win, &c->out[0], n, m))) return st;
  int64_t taps = prod(win.k, win.nsp), outs = prod(win.out, win.nsp), ins = prod(win.in, win.nsp);
  int direct = taps == 1 && outs == ins, dw = win.nsp == 2 && cg == 1 && mg == 1;
  for (int i = 0; i < win.nsp; i++) direct &= win.stride[i] == 1 && win.pad_b[i] == 0;
  struct loom_kviews v;
  float *col = NULL;
  if (!(st = loom_k_views(c, 2, &v)) && !direct && !dw && !(col = loom_k_alloc(c, cg * taps * outs, sizeof(float))))
    st = LOOM_E_NOMEM;
  const float *px = v.in[0], *pw = v.in[1];
  float *py = v.out;
  if (!st && dw) depthwise2d(&win, px, pw, py, n * ch, ch);
  for (int64_t b = 0; b < n && !st && !dw; b++)
    for (int64_t g = 0; g < group && !st; g++) {
      const float *xg = px + (b * ch + g * cg) * ins;
      if (!direct) im2col(&win, xg, cg, col);
      st = loom_k_sgemm(c, mg, outs, cg * taps, 1, pw + g * mg * cg * taps, cg * taps, 0,
                        direct ? xg : col, outs, 0, 0, py + (b * m + g * mg) * outs, outs);
    }
  if (!st) add_bias(c, py, n, m, outs);
  free(col);
  return loom_k_views_done(c, &v, st);
}

/* ConvTranspose's geometry: the conv whose input is the result. */
static loom_status transposed_window(const struct loom_kcall *c, const struct loom_kt *x, const struct loom_kt *w,
                                     struct loom_kwin *win) {
  int n = win->nsp = x->rank - 2;
  const int64_t *ks = NULL, *st_ = NULL, *dl = NULL, *pd = NULL, *op = NULL, *os = NULL;
  loom_status st = loom_k_ints_n(c, "kernel_shape", n, &ks);
  if (!st) st = loom_k_ints_n(c, "strides", n, &st_);
  if (!st) st = loom_k_ints_n(c, "dilations", n, &dl);
  if (!st) st = loom_k_ints_n(c, "pads", 2 * n, &pd);
  if (!st) st = loom_k_ints_n(c, "output_padding", n, &op);
  if (st) return st;
  int nos = loom_kattr_ints(c, "output_shape", &os);
  if (nos >= 0 && nos != n && nos != n + 2) return KFAIL(c, LOOM_E_INVALID, "output_shape has %d values", nos);
  static const char *const modes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", NULL};
  int mode = 0;
  if ((st = loom_k_choice(c, "auto_pad", "NOTSET", modes, &mode))) return st;
  for (int i = 0; i < n; i++) {
    win->k[i] = ks ? ks[i] : w->dims[2 + i];
    win->stride[i] = st_ ? st_[i] : 1, win->dil[i] = dl ? dl[i] : 1;
    win->out[i] = x->dims[2 + i]; /* the conv's output is our input */
    int64_t eff = (win->k[i] - 1) * win->dil[i] + 1, opad = op ? op[i] : 0;
    if (win->k[i] != w->dims[2 + i] || win->stride[i] < 1 || win->dil[i] < 1 || opad < 0)
      return KFAIL(c, LOOM_E_INVALID, "bad kernel_shape, strides, dilations or output_padding");
    int64_t full = win->stride[i] * (win->out[i] - 1) + opad + eff;
    if (nos >= 0 || mode == 1 || mode == 2) {
      int64_t want = nos >= 0 ? os[nos - n + i] : win->out[i] * win->stride[i];
      int64_t total = full - want;
      /* A larger output than the taps reach extends the end (as
       * output_padding would), whatever the mode. */
      win->pad_b[i] = total < 0 ? 0 : mode == 1 ? total / 2 : total - total / 2;
      win->pad_e[i] = total - win->pad_b[i];
    } else {
      win->pad_b[i] = pd ? pd[i] : 0, win->pad_e[i] = pd ? pd[n + i] : 0;
    }
    win->in[i] = full - win->pad_b[i] - win->pad_e[i];
    if (win->in[i] < 0) return KFAIL(c, LOOM_E_INVALID, "negative output size");
  }
  return LOOM_OK;
}

static loom_status k_convtranspose(const struct loom_kcall *c) {
  int64_t group;
  struct loom_kwin win;
  loom_status st = conv_operands(c, &group);
  const struct loom_kt *x = &c->in[0], *w = &c->in[1];
  if (!st) st = loom_k_rank(c, x, "X", 3, LOOM_KT_MAX_RANK);
  if (!st) st = transposed_window(c, x, w, &win);
  if (st) return st;
  int64_t n = x->dims[0], ch = x->dims[1], cg = ch / group, mg = w->dims[1], m = mg * group;
  if (ch % group || w->dims[0] != ch)
    return KFAIL(c, LOOM_E_INVALID, "W's first dim must be the input channels %lld", (long long)ch);
  if (c->n_in > 2 && loom_kt_present(&c->in[2]) && loom_kt_numel(&c->in[2]) != m)
    return KFAIL(c, LOOM_E_INVALID, "B must have M = %lld values", (long long)m);
  int64_t dims[LOOM_KT_MAX_RANK] = {n, m};
  for (int i = 0; i < win.nsp; i++) dims[2 + i] = win.in[i];
  if ((st = loom_k_out_shape(c, &c->out[0], win.nsp + 2, dims))) return st;
  int64_t taps = prod(win.k, win.nsp), pin = prod(win.out, win.nsp), pout = prod(win.in, win.nsp);
  struct loom_kviews v;
  float *col = NULL;
  if (!(st = loom_k_views(c, 2, &v)) && !(col = loom_k_alloc(c, mg * taps * pin, sizeof(float)))) st = LOOM_E_NOMEM;
  const float *px = v.in[0], *pw = v.in[1];
  float *py = v.out;
  if (!st) memset(py, 0, (size_t)loom_kt_numel(&c->out[0]) * sizeof(float));
  for (int64_t b = 0; b < n && !st; b++)
    for (int64_t g = 0; g < group && !st; g++) {
      /* col[mg*K, pin] = W_g^T [mg*K x cg] . X_g [cg x pin] */
      st = loom_k_sgemm(c, mg * taps, pin, cg, 1, pw + g * cg * mg * taps, mg * taps, 1,
                        px + (b * ch + g * cg) * pin, pin, 0, 0, col, pin);
      if (!st) col2im(&win, col, mg, py + (b * m + g * mg) * pout);
    }
  if (!st) add_bias(c, py, n, m, pout);
  free(col);
  return loom_k_views_done(c, &v, st);
}

/* ---- integer convolutions ---- */

/* A zero point or scale: absent (dflt), scalar, or one per output channel. */
static double per_channel(const struct loom_kcall *c, int i, int64_t m, double dflt) {
  if (c->n_in <= i || !loom_kt_present(&c->in[i])) return dflt;
  return loom_kt_get_f64(&c->in[i], loom_kt_numel(&c->in[i]) == 1 ? 0 : m);
}

/* acc[b][m][p] = sum (x - xzp)(w - wzp[m]) over the window, exactly. */
static loom_status int_conv(const struct loom_kcall *c, int xi, int wi, int xzi, int wzi, int64_t **acc_out,
                            struct loom_kwin *win, int64_t *dims_out) {
  const struct loom_kt *x = &c->in[xi], *w = &c->in[wi];
  loom_status st = loom_k_dtype(c, x, "x", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st) st = loom_k_dtype(c, w, "w", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  if (!st && w->rank != x->rank) st = KFAIL(c, LOOM_E_INVALID, "w has rank %d, x %d", w->rank, x->rank);
  if (!st) st = loom_k_window(c, x, w->dims + 2, 0, win);
  int64_t group = loom_kattr_int(c, "group", 1);
  if (st) return st;
  int64_t n = x->dims[0], ch = x->dims[1], m = w->dims[0];
  if (group < 1 || ch % group || m % group || w->dims[1] != ch / group)
    return KFAIL(c, LOOM_E_INVALID, "channels do not fit group %lld", (long long)group);
  if (c->n_in > wzi && loom_kt_present(&c->in[wzi]) && loom_kt_numel(&c->in[wzi]) != 1 && loom_kt_numel(&c->in[wzi]) != m)
    return KFAIL(c, LOOM_E_INVALID, "w_zero_point must be a scalar or have M values");
  dims_out[0] = n, dims_out[1] = m;
  int64_t taps = prod(win->k, win->nsp), outs = prod(win->out, win->nsp), ins = prod(win->in, win->nsp);
  int64_t cg = ch / group, mg = m / group, xz = (int64_t)per_channel(c, xzi, 0, 0);
  int64_t *acc = loom_k_alloc(c, n * m * outs, sizeof(int64_t));
  if (!acc) return LOOM_E_NOMEM;
  for (int64_t b = 0; b < n; b++)
    for (int64_t k = 0; k < m; k++) {
      int64_t wz = (int64_t)per_channel(c, wzi, k, 0), g = k / mg, opos[LOOM_KT_MAX_RANK] = {0};
      for (int64_t p = 0; p < outs; p++, step(opos, win->out, win->nsp)) {
        int64_t sum = 0, kpos[LOOM_KT_MAX_RANK] = {0};
        for (int64_t tap = 0; tap < taps; tap++, step(kpos, win->k, win->nsp)) {
          int64_t at = 0, ok = 1;
          for (int i = 0; i < win->nsp; i++) {
            int64_t v = opos[i] * win->stride[i] - win->pad_b[i] + kpos[i] * win->dil[i];
            ok &= v >= 0 && v < win->in[i];
            at = at * win->in[i] + v;
          }
          for (int64_t q = 0; q < cg; q++) {
            int64_t xv = ok ? loom_kt_get_i64(x, (b * ch + g * cg + q) * ins + at) - xz : 0;
            sum += xv * (loom_kt_get_i64(w, (k * cg + q) * taps + tap) - wz);
          }
        }
        acc[(b * m + k) * outs + p] = sum;
      }
    }
  *acc_out = acc;
  return LOOM_OK;
}

static loom_status k_convinteger(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 2, 4, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_I32));
  struct loom_kwin win;
  int64_t *acc = NULL, d[2];
  if (!st) st = int_conv(c, 0, 1, 2, 3, &acc, &win, d);
  if (!st) st = loom_k_window_out(c, &win, &c->out[0], d[0], d[1]);
  for (int64_t i = 0, n = loom_kt_numel(&c->out[0]); !st && i < n; i++) loom_kt_set_i64(&c->out[0], i, acc[i]);
  free(acc);
  return st;
}

static loom_status k_qlinearconv(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 8, 9, 1, 1);
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, y, "y", DTM(LOOM_DT_I8) | DTM(LOOM_DT_U8));
  struct loom_kwin win;
  int64_t *acc = NULL, d[2];
  if (!st) st = int_conv(c, 0, 3, 2, 5, &acc, &win, d);
  if (!st) st = loom_k_window_out(c, &win, y, d[0], d[1]);
  if (!st && c->n_in > 8 && loom_kt_present(&c->in[8]) && loom_kt_numel(&c->in[8]) != d[1])
    st = KFAIL(c, LOOM_E_INVALID, "B must have M values");
  if (st) return free(acc), st;
  int64_t sp = loom_kt_numel(y) / (d[0] * d[1] > 0 ? d[0] * d[1] : 1), zp = (int64_t)per_channel(c, 7, 0, 0);
  int64_t lo = y->dtype == LOOM_DT_U8 ? 0 : -128, hi = y->dtype == LOOM_DT_U8 ? 255 : 127;
  float xs = (float)per_channel(c, 1, 0, 1), ys = (float)per_channel(c, 6, 0, 1);
  for (int64_t b = 0; b < d[0]; b++)
    for (int64_t k = 0; k < d[1]; k++) {
      float mult = xs * (float)per_channel(c, 4, k, 1) / ys;
      int64_t bias = (int64_t)per_channel(c, 8, k, 0);
      for (int64_t p = 0; p < sp; p++) {
        int64_t at = (b * d[1] + k) * sp + p, v = (int64_t)rintf((float)(acc[at] + bias) * mult) + zp;
        loom_kt_set_i64(y, at, v < lo ? lo : v > hi ? hi : v);
      }
    }
  free(acc);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_conv[] = {
    {"Conv", k_conv, 0, NULL},
    {"ConvTranspose", k_convtranspose, 0, NULL},
    {"ConvInteger", k_convinteger, 0, NULL},
    {"QLinearConv", k_qlinearconv, 0, NULL},
    {NULL, NULL, 0, NULL},
};
