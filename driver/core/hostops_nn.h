/*
 * hostops_nn.h - host ops the compiler needs beyond hostops.c's: the
 * network-level data movement around accelerator jobs.  Each is one
 * function with the signature of a case of loom_hostop_run() (hostops.c
 * dispatches to it once its kind is listed in enum loom_hostop_kind).
 */
#ifndef LOOM_HOSTOPS_NN_H
#define LOOM_HOSTOPS_NN_H

#include "hostops.h"

/* The parameters of IM2COL: 11 little-endian int32 in this order. */
enum loom_im2col_param {
  LOOM_IM2COL_K_H = 0, LOOM_IM2COL_K_W, LOOM_IM2COL_STRIDE_H, LOOM_IM2COL_STRIDE_W,
  LOOM_IM2COL_PAD_T, LOOM_IM2COL_PAD_L, LOOM_IM2COL_DIL_H, LOOM_IM2COL_DIL_W,
  LOOM_IM2COL_OUT_H, LOOM_IM2COL_OUT_W, LOOM_IM2COL_PAD_VALUE,
  LOOM_IM2COL_PARAM_COUNT
};

/* IM2COL: in int8 [N,C,H,W] (any layout) -> out int8 [N, C*k_h*k_w, OH, OW]
 * (any layout; the compiler gives it NCHWc), where channel
 * (kh * k_w + kw) * C + c of output pixel (oy, ox) is input pixel
 * (oy * stride_h - pad_t + kh * dil_h, ox * stride_w - pad_l + kw * dil_w)
 * of channel c, or pad_value outside the image: the folded-stem layout of
 * sw_compiler/lower.h (LOWER_ACT_IM2COL). */
loom_status loom_hostop_im2col(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]);

/* The checks loom_hostop_im2col makes before touching data (tensors'
 * dtypes, ranks and shapes against the parameters; a->in/out data unused),
 * with the decoded parameters and input dims in *g.  Shared with the LLVM
 * builder (sw_compiler/llvm/hostgen_ops.c), so both refuse the same steps. */
struct loom_im2col {
  int64_t n, c, h, w;
  int32_t v[LOOM_IM2COL_PARAM_COUNT];
};
loom_status loom_hostop_im2col_check(const struct loom_hostop_args *a, struct loom_im2col *g,
                                    char msg[LOOM_MSG_MAX]);

#endif
