/*
 * hostops.c - the host-op dispatcher: one switch over enum loom_hostop_kind.
 *
 * Every op works on whole tensors through the stored-form accessors of
 * tensor.c: it reads its input into a plain C-order array of the type it
 * computes in, and writes its result back through the same conversion.  So
 * layout packing and (de)quantization are never repeated per op, and an op
 * written for f32 also accepts a quantized int8 tensor on either side.
 * Ops check their tensors (count, dtype, shape) and fail with a message;
 * they never trust the file to have paired them sensibly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hostops.h"
#include "hostops_nn.h"
#include "hostops_qlayernorm.h"
#include "hostops_qsoftmax.h"
#include "core.h"

const char *const loom_hostop_names[] = {
    [LOOM_HOSTOP_COPY] = "COPY",
    [LOOM_HOSTOP_QUANTIZE] = "QUANTIZE",
    [LOOM_HOSTOP_DEQUANTIZE] = "DEQUANTIZE",
    [LOOM_HOSTOP_SOFTMAX] = "SOFTMAX",
    [LOOM_HOSTOP_IM2COL] = "IM2COL",
    [LOOM_HOSTOP_NATIVE] = "NATIVE",
    [LOOM_HOSTOP_QSOFTMAX] = "QSOFTMAX",
    [LOOM_HOSTOP_QLAYERNORM] = "QLAYERNORM",
};
_Static_assert(sizeof loom_hostop_names / sizeof loom_hostop_names[0] == LOOM_HOSTOP_COUNT,
               "every host op needs a name");

const char *loom_hostop_name(uint32_t kind) {
  return kind < LOOM_HOSTOP_COUNT ? loom_hostop_names[kind] : "?";
}

static loom_status want_tensors(const struct loom_hostop_args *a, int n_in, int n_out,
                                char msg[LOOM_MSG_MAX]) {
  if (a->n_in != n_in || a->n_out != n_out)
    return loom_fail(msg, LOOM_E_INVALID, "takes %d input(s) and %d output(s), got %d and %d",
                     n_in, n_out, a->n_in, a->n_out);
  return LOOM_OK;
}

static loom_status same_shape(const struct loom_file_tensor *x, const struct loom_file_tensor *y,
                              char msg[LOOM_MSG_MAX]) {
  if (x->rank != y->rank || memcmp(x->dims, y->dims, x->rank * sizeof x->dims[0]))
    return loom_fail(msg, LOOM_E_INVALID, "input and output shapes differ");
  return LOOM_OK;
}

/* Reads in[0] as `dt` into a malloc'd plain array (*out, *n elements). */
static loom_status read_plain(const struct loom_hostop_args *a, loom_dtype dt, void **out,
                              uint64_t *n, char msg[LOOM_MSG_MAX]) {
  const struct loom_file_tensor *t = a->in[0].desc;
  *n = loom_tensor_elems(t);
  *out = malloc(*n ? *n * loom_dtype_size(dt) : 1);
  if (!*out) return loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  loom_status st = loom_tensor_read(t, a->in[0].data, dt, *out, msg);
  if (st != LOOM_OK) {
    free(*out);
    *out = NULL;
  }
  return st;
}

/* out[0] = in[0] converted through type `dt` (copy, quantize, dequantize). */
static loom_status convert_op(const struct loom_hostop_args *a, loom_dtype dt,
                              char msg[LOOM_MSG_MAX]) {
  void *plain;
  uint64_t n;
  loom_status st = want_tensors(a, 1, 1, msg);
  if (st == LOOM_OK) st = same_shape(a->in[0].desc, a->out[0].desc, msg);
  if (st == LOOM_OK) st = read_plain(a, dt, &plain, &n, msg);
  if (st != LOOM_OK) return st;
  st = loom_tensor_write(a->out[0].desc, a->out[0].data, dt, plain, msg);
  free(plain);
  return st;
}

static loom_status run_copy(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  loom_status st = want_tensors(a, 1, 1, msg);
  if (st != LOOM_OK) return st;
  if (a->in[0].desc->dtype != a->out[0].desc->dtype)
    return loom_fail(msg, LOOM_E_INVALID, "copies between tensors of one dtype only");
  return convert_op(a, (loom_dtype)a->in[0].desc->dtype, msg);
}

static loom_status run_quantize(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  loom_status st = want_tensors(a, 1, 1, msg);
  if (st != LOOM_OK) return st;
  const struct loom_file_tensor *o = a->out[0].desc;
  if (o->scale == 0 || (o->dtype != LOOM_DT_I8 && o->dtype != LOOM_DT_U8))
    return loom_fail(msg, LOOM_E_INVALID, "output must be a quantized int8 or uint8 tensor");
  return convert_op(a, LOOM_DT_F32, msg);
}

static loom_status run_dequantize(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  loom_status st = want_tensors(a, 1, 1, msg);
  if (st != LOOM_OK) return st;
  if (a->in[0].desc->scale == 0 || a->out[0].desc->dtype != LOOM_DT_F32)
    return loom_fail(msg, LOOM_E_INVALID, "needs a quantized input and a float32 output");
  return convert_op(a, LOOM_DT_F32, msg);
}

int32_t loom_hostop_param(const struct loom_hostop_args *a, int i, int32_t dflt) {
  uint64_t off = (uint64_t)i * 4;
  if (!a->params || a->param_size < off + 4) return dflt;
  const uint8_t *p = a->params + off;
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

void loom_hostop_params_put(const int32_t *v, int n, uint8_t *out) {
  for (int i = 0; i < n; i++)
    for (int b = 0; b < 4; b++) out[4 * i + b] = (uint8_t)((uint32_t)v[i] >> (8 * b));
}

/* Softmax of `len` values `stride` apart. */
static void softmax_row(float *x, uint64_t len, uint64_t stride) {
  float max = x[0], sum = 0;
  for (uint64_t i = 1; i < len; i++) max = fmaxf(max, x[i * stride]);
  for (uint64_t i = 0; i < len; i++) sum += x[i * stride] = expf(x[i * stride] - max);
  for (uint64_t i = 0; i < len; i++) x[i * stride] /= sum;
}

static loom_status run_softmax(const struct loom_hostop_args *a, char msg[LOOM_MSG_MAX]) {
  const struct loom_file_tensor *t = a->in[0].desc;
  loom_status st = want_tensors(a, 1, 1, msg);
  if (st == LOOM_OK) st = same_shape(t, a->out[0].desc, msg);
  if (st != LOOM_OK) return st;
  int32_t axis = loom_hostop_param(a, 0, -1), rank = (int32_t)t->rank;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return loom_fail(msg, LOOM_E_INVALID, "axis %d is out of range for rank %d",
                     loom_hostop_param(a, 0, -1), rank);
  uint64_t outer = 1, inner = 1, len = (uint64_t)t->dims[axis], n;
  for (int32_t i = 0; i < axis; i++) outer *= (uint64_t)t->dims[i];
  for (int32_t i = axis + 1; i < rank; i++) inner *= (uint64_t)t->dims[i];
  float *x;
  st = read_plain(a, LOOM_DT_F32, (void **)&x, &n, msg);
  if (st != LOOM_OK) return st;
  for (uint64_t o = 0; o < outer; o++)
    for (uint64_t i = 0; i < inner; i++) softmax_row(x + o * len * inner + i, len, inner);
  st = loom_tensor_write(a->out[0].desc, a->out[0].data, LOOM_DT_F32, x, msg);
  free(x);
  return st;
}

/* The bytes from one row of t's last axis to the next when rows rows are
 * contiguous in t's stored form, else 0. */
static int64_t row_pitch(const struct loom_file_tensor *t, int64_t rows) {
  int64_t len = t->dims[t->rank - 1], pitch = 0;
  if (t->layout == LOOM_LAYOUT_PLAIN) pitch = len;
  if (t->layout == LOOM_LAYOUT_NC && t->rank == 2 && t->layout_block)
    pitch = (len + t->layout_block - 1) / t->layout_block * t->layout_block;
  return pitch && (uint64_t)rows * (uint64_t)pitch <= t->bytes ? pitch : 0;
}

loom_status loom_hostop_int8_rows(const struct loom_hostop_args *a, int64_t rows, int64_t len, int32_t out_zp,
                                  loom_hostop_rows_fn *run, const void *ctx, char msg[LOOM_MSG_MAX]) {
  const struct loom_file_tensor *tx = a->in[0].desc, *ty = a->out[0].desc;
  int64_t px = row_pitch(tx, rows), py = row_pitch(ty, rows);
  if (px && py) { /* in place in the stored forms: no conversion */
    int8_t *y = a->out[0].data;
    run(ctx, a->in[0].data, px, y, py);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = len; c < py; c++) y[r * py + c] = (int8_t)out_zp; /* padding lanes */
    return LOOM_OK;
  }
  int8_t *x = malloc(loom_tensor_elems(tx));
  loom_status st =
      x ? loom_tensor_read(tx, a->in[0].data, LOOM_DT_I8, x, msg) : loom_fail(msg, LOOM_E_NOMEM, "out of memory");
  if (st == LOOM_OK) run(ctx, x, len, x, len);
  if (st == LOOM_OK) st = loom_tensor_write(ty, a->out[0].data, LOOM_DT_I8, x, msg);
  free(x);
  return st;
}

loom_status loom_hostop_run(uint32_t kind, const struct loom_hostop_args *a,
                            char msg[LOOM_MSG_MAX]) {
  switch ((enum loom_hostop_kind)kind) {
  case LOOM_HOSTOP_COPY: return run_copy(a, msg);
  case LOOM_HOSTOP_QUANTIZE: return run_quantize(a, msg);
  case LOOM_HOSTOP_DEQUANTIZE: return run_dequantize(a, msg);
  case LOOM_HOSTOP_SOFTMAX: return run_softmax(a, msg);
  case LOOM_HOSTOP_IM2COL: return loom_hostop_im2col(a, msg);
  case LOOM_HOSTOP_NATIVE: /* model loading refuses such a step without usable native code */
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "this step exists only as native code (HOSTCODE)");
  case LOOM_HOSTOP_QSOFTMAX: return loom_hostop_qsoftmax(a, msg);
  case LOOM_HOSTOP_QLAYERNORM: return loom_hostop_qlayernorm(a, msg);
  case LOOM_HOSTOP_COUNT: break;
  }
  return loom_fail(msg, LOOM_E_UNSUPPORTED, "unknown host op %u", kind);
}
