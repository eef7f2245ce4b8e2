/*
 * hostops_nn.c - IM2COL, the host half of a folded stem convolution.
 *
 * A convolution with few input channels (ResNet's 3-channel 7x7 stem) uses
 * 3 of the GEMM core's 16 input lanes per tap.  The compiler can instead
 * have the host gather every output pixel's k_h x k_w x C taps into
 * channels, so the accelerator runs a 1x1 convolution over C*k_h*k_w
 * channels at nearly full width (docs/lowering.md, "im2col").  The gather
 * is this op.  It reads and writes through tensor.c like every host op,
 * so its input may be any stored layout and its output lands in the
 * blocked layout the job reads, padding lanes set to the zero point.
 * Every parameter is checked against the tensors: a hostile file gets a
 * message, never an out-of-bounds read.
 */
#include <stdlib.h>
#include <string.h>

#include "hostops_nn.h"
#include "core.h"

loom_status loom_hostop_im2col_check(const struct loom_hostop_args *a, struct loom_im2col *g,
                                    char msg[LOOM_MSG_MAX]) {
  if (a->n_in != 1 || a->n_out != 1) return loom_fail(msg, LOOM_E_INVALID, "takes 1 input and 1 output");
  if (!a->params || a->param_size < 4 * LOOM_IM2COL_PARAM_COUNT)
    return loom_fail(msg, LOOM_E_INVALID, "needs %d int32 parameters", LOOM_IM2COL_PARAM_COUNT);
  const struct loom_file_tensor *x = a->in[0].desc, *y = a->out[0].desc;
  if (x->dtype != LOOM_DT_I8 || y->dtype != LOOM_DT_I8 || x->rank != 4 || y->rank != 4)
    return loom_fail(msg, LOOM_E_INVALID, "needs int8 tensors of rank 4");
  for (int i = 0; i < LOOM_IM2COL_PARAM_COUNT; i++) g->v[i] = loom_hostop_param(a, i, 0);
  const int32_t *v = g->v;
  g->n = x->dims[0], g->c = x->dims[1], g->h = x->dims[2], g->w = x->dims[3];
  if (v[LOOM_IM2COL_K_H] < 1 || v[LOOM_IM2COL_K_W] < 1 || v[LOOM_IM2COL_STRIDE_H] < 1 ||
      v[LOOM_IM2COL_STRIDE_W] < 1 || v[LOOM_IM2COL_DIL_H] < 1 || v[LOOM_IM2COL_DIL_W] < 1 ||
      v[LOOM_IM2COL_PAD_VALUE] < -128 || v[LOOM_IM2COL_PAD_VALUE] > 127)
    return loom_fail(msg, LOOM_E_INVALID, "invalid kernel, stride, dilation or pad value");
  if (y->dims[0] != g->n || y->dims[1] != g->c * v[LOOM_IM2COL_K_H] * v[LOOM_IM2COL_K_W] ||
      y->dims[2] != v[LOOM_IM2COL_OUT_H] || y->dims[3] != v[LOOM_IM2COL_OUT_W])
    return loom_fail(msg, LOOM_E_INVALID, "output shape does not match the input and the window");
  return LOOM_OK;
}

/* Channel cc of output pixel (oy, ox) of image n. */
static int8_t tap(const struct loom_im2col *g, const int8_t *x, int64_t n, int64_t cc, int64_t oy, int64_t ox) {
  const int32_t *v = g->v;
  int64_t t = cc / g->c, ch = cc % g->c;
  int64_t iy = oy * v[LOOM_IM2COL_STRIDE_H] - v[LOOM_IM2COL_PAD_T] + (t / v[LOOM_IM2COL_K_W]) * v[LOOM_IM2COL_DIL_H];
  int64_t ix = ox * v[LOOM_IM2COL_STRIDE_W] - v[LOOM_IM2COL_PAD_L] + (t % v[LOOM_IM2COL_K_W]) * v[LOOM_IM2COL_DIL_W];
  if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) return (int8_t)v[LOOM_IM2COL_PAD_VALUE];
  return x[((n * g->c + ch) * g->h + iy) * g->w + ix];
}

loom_status loom_hostop_im2col(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  struct loom_im2col g = {0};
  loom_status st = loom_hostop_im2col_check(a, &g, msg);
  if (st != LOOM_OK) return st;
  const struct loom_file_tensor *y = a->out[0].desc;
  uint64_t nx = loom_tensor_elems(a->in[0].desc), ny = loom_tensor_elems(y);
  int8_t *x = malloc(nx ? nx : 1), *out = malloc(ny ? ny : 1);
  if (!x || !out) st = loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  if (st == LOOM_OK) st = loom_tensor_read(a->in[0].desc, a->in[0].data, LOOM_DT_I8, x, msg);
  int64_t cc_n = y->dims[1], oh = y->dims[2], ow = y->dims[3];
  for (int64_t n = 0, i = 0; st == LOOM_OK && n < g.n; n++)
    for (int64_t cc = 0; cc < cc_n; cc++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) out[i++] = tap(&g, x, n, cc, oy, ox);
  if (st == LOOM_OK) st = loom_tensor_write(y, a->out[0].data, LOOM_DT_I8, out, msg);
  free(x);
  free(out);
  return st;
}
