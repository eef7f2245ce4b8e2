/*
 * kernel_window.c - the geometry of sliding windows, shared by the
 * convolution and pooling kernels: kernel_shape, strides, dilations, pads
 * and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID), and for pooling
 * ceil_mode, turned into per-dim input/output sizes and begin/end pads.
 *
 * The rules are ONNX's: with explicit pads, out = floor((in + pad_b +
 * pad_e - ((k-1)*d + 1)) / s) + 1 (ceil with ceil_mode); SAME gives out =
 * ceil(in / s) and splits the padding it needs, the odd one at the end
 * (UPPER) or the beginning (LOWER); VALID pads nothing.  With ceil_mode a
 * last window that would start in the end padding is dropped, as PyTorch
 * and later ONNX references do; the count without that correction (older
 * shape inference) is accepted too, since the extra window only sees
 * padding and the kernels clip windows to the input.
 */
#include "kernel_util.h"

static loom_status attr_n(const struct loom_kcall *c, const char *name, int n, int64_t dflt,
                          int64_t *v) {
  const int64_t *a = NULL;
  loom_status st = loom_k_ints_n(c, name, n, &a);
  for (int i = 0; i < n; i++) v[i] = a ? a[i] : dflt;
  return st;
}

loom_status loom_k_window(const struct loom_kcall *c, const struct loom_kt *x,
                          const int64_t *kshape, int pooling, struct loom_kwin *w) {
  loom_status st = loom_k_rank(c, x, "input", 3, LOOM_KT_MAX_RANK);
  if (st) return st;
  int n = w->nsp = x->rank - 2;
  for (int i = 0; i < n; i++) w->in[i] = x->dims[2 + i];
  const int64_t *ks = NULL;
  if ((st = loom_k_ints_n(c, "kernel_shape", n, &ks))) return st;
  if (!ks && !kshape) return KFAIL(c, LOOM_E_INVALID, "kernel_shape is missing");
  for (int i = 0; i < n; i++) {
    w->k[i] = ks ? ks[i] : kshape[i];
    if (kshape && ks && ks[i] != kshape[i])
      return KFAIL(c, LOOM_E_INVALID, "kernel_shape differs from the weights");
  }
  int64_t pads[2 * LOOM_KT_MAX_RANK];
  if ((st = attr_n(c, "strides", n, 1, w->stride)) || (st = attr_n(c, "dilations", n, 1, w->dil)) ||
      (st = attr_n(c, "pads", 2 * n, 0, pads)))
    return st;
  static const char *const modes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", NULL};
  int mode = 0;
  if ((st = loom_k_choice(c, "auto_pad", "NOTSET", modes, &mode))) return st;
  int ceil_mode = pooling && loom_kattr_int(c, "ceil_mode", 0) != 0;
  for (int i = 0; i < n; i++) {
    if (w->k[i] < 1 || w->stride[i] < 1 || w->dil[i] < 1 || pads[i] < 0 || pads[n + i] < 0)
      return KFAIL(c, LOOM_E_INVALID, "kernel, stride and dilation must be positive, pads not negative");
    int64_t eff = (w->k[i] - 1) * w->dil[i] + 1;
    w->pad_b[i] = pads[i], w->pad_e[i] = pads[n + i];
    if (mode == 1 || mode == 2) {
      int64_t out = (w->in[i] + w->stride[i] - 1) / w->stride[i];
      int64_t total = (out - 1) * w->stride[i] + eff - w->in[i];
      total = total < 0 ? 0 : total;
      w->pad_b[i] = mode == 1 ? total / 2 : total - total / 2;
      w->pad_e[i] = total - w->pad_b[i];
    } else if (mode == 3) {
      w->pad_b[i] = w->pad_e[i] = 0;
    }
    int64_t span = w->in[i] + w->pad_b[i] + w->pad_e[i] - eff;
    if (span < 0) return KFAIL(c, LOOM_E_INVALID, "the window is larger than the padded input");
    w->out[i] = span / w->stride[i] + 1;
    w->out_alt[i] = w->out[i];
    if (ceil_mode && span % w->stride[i]) {
      w->out_alt[i] = w->out[i] + 1;
      if ((w->out[i]) * w->stride[i] < w->in[i] + w->pad_b[i]) w->out[i]++;
    }
  }
  return LOOM_OK;
}

loom_status loom_k_window_out(const struct loom_kcall *c, struct loom_kwin *w, const struct loom_kt *y,
                              int64_t n, int64_t ch) {
  int64_t dims[LOOM_KT_MAX_RANK] = {n, ch};
  for (int i = 0; i < w->nsp; i++) {
    if (y->rank == w->nsp + 2 && y->dims[2 + i] == w->out_alt[i]) w->out[i] = w->out_alt[i];
    dims[2 + i] = w->out[i];
  }
  return loom_k_out_shape(c, y, w->nsp + 2, dims);
}
