/*
 * hostops.h - operations a model runs on the host CPU between accelerator
 * jobs (a STEP of kind HOST in a .loom file; its `index` is the kind below).
 *
 * A host op reads and writes tensors in their stored form (dtype and layout
 * of the .loom tensor descriptor) in mapped device buffers.  Each op is one
 * case of the switch in hostops.c; adding a kind without its name (the
 * _Static_assert there) or its case (-Wswitch) breaks the build.
 *
 * Parameters (DATA bytes named by the step) are little-endian and listed
 * per op; ops without parameters ignore them.
 */
#ifndef LOOM_HOSTOPS_H
#define LOOM_HOSTOPS_H

#include <stdint.h>

#include "loomfile.h"

enum loom_hostop_kind {
  LOOM_HOSTOP_COPY = 0,   /* out = in: same dtype and shape, any layouts */
  LOOM_HOSTOP_QUANTIZE,   /* out (int8/uint8, scale != 0) = quantize(in f32), out's scale/zp */
  LOOM_HOSTOP_DEQUANTIZE, /* out (f32) = dequantize(in), in's scale/zp */
  LOOM_HOSTOP_SOFTMAX,    /* f32 softmax; params: optional int32 axis (default -1, the last) */
  LOOM_HOSTOP_IM2COL,     /* int8 [N,C,H,W] -> [N,C*kh*kw,OH,OW] (hostops_nn.c); params: 11 int32 */
  LOOM_HOSTOP_NATIVE,     /* only native code (HOSTCODE, hostcode.h), e.g. a whole float graph
                           * of `loom compile --target cpu`; no portable form */
  LOOM_HOSTOP_QSOFTMAX,   /* int8 -> int8 softmax, last axis, integer only (hostops_qsoftmax.h);
                           * params: 6 int32 */
  LOOM_HOSTOP_QLAYERNORM, /* int8 -> int8 LayerNorm, last axis, integer only (hostops_qlayernorm.h);
                           * params: 5 + 2 N int32 (N: the row length) */
  LOOM_HOSTOP_COUNT
};
#define LOOM_HOSTOP_HAVE_IM2COL 1

extern const char *const loom_hostop_names[LOOM_HOSTOP_COUNT];

/* The name of a kind ("?" when out of range). */
const char *loom_hostop_name(uint32_t kind);

struct loom_hostop_tensor {
  const struct loom_file_tensor *desc;
  void *data; /* stored form: desc->bytes bytes */
};

struct loom_hostop_args {
  struct loom_hostop_tensor in[4], out[2];
  int n_in, n_out;
  const uint8_t *params;
  uint64_t param_size;
};

/* Parameter i of a step, a little-endian int32, or dflt when the step's
 * parameters are shorter.  The ops' own files read theirs with it. */
int32_t loom_hostop_param(const struct loom_hostop_args *a, int i, int32_t dflt);
/* n values as parameter bytes (4 n, little-endian): what the compiler
 * writes and loom_hostop_param reads. */
void loom_hostop_params_put(const int32_t *v, int n, uint8_t *out);

/* An int8 row op (QSOFTMAX, QLAYERNORM) over the `rows` rows of `len`
 * values of op a's input 0 into its output 0: run(ctx, x, px, y, py) in
 * place in the stored bytes when both tensors' rows are contiguous there
 * (plain, or [N, C] blocked: row n is n * ceil(C / c) * c bytes in), the
 * output's padding lanes then set to out_zp; otherwise on a plain copy read
 * and written through the tensors' layouts (px = py = len). */
typedef void loom_hostop_rows_fn(const void *ctx, const int8_t *x, int64_t px, int8_t *y, int64_t py);
loom_status loom_hostop_int8_rows(const struct loom_hostop_args *a, int64_t rows, int64_t len, int32_t out_zp,
                                  loom_hostop_rows_fn *run, const void *ctx, char msg[LOOM_MSG_MAX]);

/* Runs one op.  LOOM_E_INVALID with a message when the tensors do not fit
 * the op; LOOM_E_UNSUPPORTED for an unknown kind. */
loom_status loom_hostop_run(uint32_t kind, const struct loom_hostop_args *a,
                            char msg[LOOM_MSG_MAX]);

#endif
