/*
 * tensor.c - moving tensor data between the user's form and the form a
 * model stores it in.
 *
 * The user's form is a dense C-order array of the logical shape in the
 * user's dtype.  The stored form is what the accelerator program reads: the
 * tensor's stored dtype (int8 for a quantized tensor) in its layout:
 *
 *   PLAIN  the logical C order;
 *   NCHWC  [N][ceil(C/c)][H][W][c]  and  NC  [N][ceil(C/c)][c]: the channel
 *          axis (axis 1) is split into blocks of c = layout_block lanes that
 *          become the innermost axis.  Both are the same "blocked" layout
 *          with every axis after 1 treated as spatial, so one pair of loops
 *          serves them.  Lanes past C are padding: zero, or the zero point
 *          of a quantized tensor, so that they contribute nothing to a sum.
 *
 * Conversion is done first and layout second when writing (and the reverse
 * when reading), through a temporary plain array in the stored dtype.
 *
 * Quantization follows ONNX QuantizeLinear/DequantizeLinear in float32:
 * q = saturate(rint(x / scale) + zero_point) with ties to even, and
 * x = (q - zero_point) * scale.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* No tensor has more elements than this; keeps every byte count in range. */
#define MAX_ELEMS (UINT64_C(1) << 40)

uint64_t loom_tensor_elems(const struct loom_file_tensor *t) {
  uint64_t n = 1;
  if (t->rank > LOOM_MAX_RANK) return 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    /* n <= MAX_ELEMS, so the division keeps the product from wrapping */
    if (t->dims[i] < 1 || (uint64_t)t->dims[i] > MAX_ELEMS / n) return 0;
    n *= (uint64_t)t->dims[i];
  }
  return n;
}

/* The blocked view of a tensor: outer x channels x inner, block lanes. */
struct blocked {
  uint64_t outer, channels, inner, block, nblocks;
};

static int blocked_view(const struct loom_file_tensor *t, struct blocked *b) {
  if (t->rank < 2 || t->layout_block == 0 || !loom_tensor_elems(t)) return 0;
  b->outer = (uint64_t)t->dims[0];
  b->channels = (uint64_t)t->dims[1];
  b->inner = 1;
  for (uint32_t i = 2; i < t->rank; i++) b->inner *= (uint64_t)t->dims[i];
  b->block = t->layout_block;
  b->nblocks = (b->channels + b->block - 1) / b->block;
  return 1;
}

uint64_t loom_tensor_stored_elems(const struct loom_file_tensor *t) {
  struct blocked b;
  switch (t->layout) {
  case LOOM_LAYOUT_PLAIN: return loom_tensor_elems(t);
  case LOOM_LAYOUT_NCHWC:
  case LOOM_LAYOUT_NC:
    if (!blocked_view(t, &b) || b.block > MAX_ELEMS) return 0;
    uint64_t n;
    if (__builtin_mul_overflow(b.outer, b.nblocks * b.block, &n) || n > MAX_ELEMS ||
        b.inner > MAX_ELEMS / n)
      return 0;
    return n * b.inner;
  default: return 0;
  }
}

int32_t loom_quantize1(float x, float scale, int32_t zp, loom_dtype dt) {
  double lo = dt == LOOM_DT_U8 ? 0 : -128, hi = dt == LOOM_DT_U8 ? 255 : 127;
  float v = x / scale;
  if (isnan(v)) return zp < lo ? (int32_t)lo : zp > hi ? (int32_t)hi : zp;
  double q = (double)rintf(v) + zp;
  if (q < lo) q = lo;
  if (q > hi) q = hi;
  return (int32_t)q;
}

static int32_t int_at(const void *p, loom_dtype dt, uint64_t i) {
  switch (dt) {
  case LOOM_DT_I8: return ((const int8_t *)p)[i];
  case LOOM_DT_U8: return ((const uint8_t *)p)[i];
  case LOOM_DT_I32: return ((const int32_t *)p)[i];
  default: LOOM_ASSERT(0); return 0;
  }
}

static void quantize(void *dst, loom_dtype dd, const float *src, uint64_t n, float scale,
                     int32_t zp) {
  for (uint64_t i = 0; i < n; i++) {
    int32_t q = loom_quantize1(src[i], scale, zp, dd);
    if (dd == LOOM_DT_U8) ((uint8_t *)dst)[i] = (uint8_t)q;
    else ((int8_t *)dst)[i] = (int8_t)q;
  }
}

static void dequantize(float *dst, const void *src, loom_dtype sd, uint64_t n, float scale,
                       int32_t zp) {
  for (uint64_t i = 0; i < n; i++) dst[i] = (float)((int64_t)int_at(src, sd, i) - zp) * scale;
}

static int is_int8ish(loom_dtype t) { return t == LOOM_DT_I8 || t == LOOM_DT_U8; }

/* n elements from src (type sd) into dst (type dd). */
static loom_status convert(void *dst, loom_dtype dd, const void *src, loom_dtype sd, uint64_t n,
                           const struct loom_file_tensor *t, char msg[LOOM_MSG_MAX]) {
  if (!n) return LOOM_OK; /* an empty tensor: nothing to move (src may be NULL) */
  /* bfloat16 travels as its raw bits in uint16 arrays: numpy has no bfloat16 */
  if (dd == sd || (dd == LOOM_DT_BF16 && sd == LOOM_DT_U16) || (dd == LOOM_DT_U16 && sd == LOOM_DT_BF16)) {
    memcpy(dst, src, n * loom_dtype_size(sd));
    return LOOM_OK;
  }
  if (t->scale != 0 && sd == LOOM_DT_F32 && is_int8ish(dd)) {
    quantize(dst, dd, src, n, t->scale, t->zero_point);
    return LOOM_OK;
  }
  if (t->scale != 0 && dd == LOOM_DT_F32 && (is_int8ish(sd) || sd == LOOM_DT_I32)) {
    dequantize(dst, src, sd, n, t->scale, t->zero_point);
    return LOOM_OK;
  }
  return loom_fail(msg, LOOM_E_INVALID, "cannot convert %s%s to %s", loom_dtype_name(sd),
                   t->scale != 0 ? "" : " (tensor is not quantized)", loom_dtype_name(dd));
}

static void put_fill(uint8_t *dst, loom_dtype dt, int32_t fill) {
  switch (dt) {
  case LOOM_DT_I8: *(int8_t *)dst = (int8_t)fill; break;
  case LOOM_DT_U8: *dst = (uint8_t)fill; break;
  case LOOM_DT_I32: memcpy(dst, &fill, 4); break;
  default: memset(dst, 0, loom_dtype_size(dt)); break;
  }
}

/* Logical C order -> blocked; padding lanes get `fill`. */
static void pack(const struct loom_file_tensor *t, uint8_t *dst, const uint8_t *src, int32_t fill) {
  struct blocked b;
  size_t es = loom_dtype_size((loom_dtype)t->dtype);
  LOOM_ASSERT(blocked_view(t, &b));
  uint8_t pad[4];
  put_fill(pad, (loom_dtype)t->dtype, fill);
  for (uint64_t n = 0; n < b.outer; n++)
    for (uint64_t cb = 0; cb < b.nblocks; cb++)
      for (uint64_t s = 0; s < b.inner; s++)
        for (uint64_t ci = 0; ci < b.block; ci++, dst += es) {
          uint64_t ch = cb * b.block + ci;
          if (ch < b.channels) memcpy(dst, src + ((n * b.channels + ch) * b.inner + s) * es, es);
          else memcpy(dst, pad, es);
        }
}

/* Blocked -> logical C order; padding lanes are dropped. */
static void unpack(const struct loom_file_tensor *t, uint8_t *dst, const uint8_t *src) {
  struct blocked b;
  size_t es = loom_dtype_size((loom_dtype)t->dtype);
  LOOM_ASSERT(blocked_view(t, &b));
  for (uint64_t n = 0; n < b.outer; n++)
    for (uint64_t cb = 0; cb < b.nblocks; cb++)
      for (uint64_t s = 0; s < b.inner; s++)
        for (uint64_t ci = 0; ci < b.block; ci++, src += es) {
          uint64_t ch = cb * b.block + ci;
          if (ch < b.channels) memcpy(dst + ((n * b.channels + ch) * b.inner + s) * es, src, es);
        }
}

static loom_status check_tensor(const struct loom_file_tensor *t, char msg[LOOM_MSG_MAX]) {
  if (!loom_dtype_size((loom_dtype)t->dtype) || (!loom_tensor_stored_elems(t) && !loom_file_tensor_empty(t)))
    return loom_fail(msg, LOOM_E_FORMAT, "tensor has an invalid dtype, shape or layout");
  return LOOM_OK;
}

loom_status loom_tensor_write(const struct loom_file_tensor *t, void *stored, loom_dtype ud,
                              const void *user, char msg[LOOM_MSG_MAX]) {
  loom_status st = check_tensor(t, msg);
  if (st != LOOM_OK) return st;
  loom_dtype sd = (loom_dtype)t->dtype;
  uint64_t n = loom_tensor_elems(t);
  if (t->layout == LOOM_LAYOUT_PLAIN) return convert(stored, sd, user, ud, n, t, msg);
  void *tmp = malloc(n * loom_dtype_size(sd));
  if (!tmp) return loom_fail(msg, LOOM_E_NOMEM, "out of memory converting a tensor");
  st = convert(tmp, sd, user, ud, n, t, msg);
  if (st == LOOM_OK) pack(t, stored, tmp, t->scale != 0 ? t->zero_point : 0);
  free(tmp);
  return st;
}

loom_status loom_tensor_read(const struct loom_file_tensor *t, const void *stored, loom_dtype ud,
                             void *user, char msg[LOOM_MSG_MAX]) {
  loom_status st = check_tensor(t, msg);
  if (st != LOOM_OK) return st;
  loom_dtype sd = (loom_dtype)t->dtype;
  uint64_t n = loom_tensor_elems(t);
  if (t->layout == LOOM_LAYOUT_PLAIN) return convert(user, ud, stored, sd, n, t, msg);
  void *tmp = malloc(n * loom_dtype_size(sd));
  if (!tmp) return loom_fail(msg, LOOM_E_NOMEM, "out of memory converting a tensor");
  unpack(t, tmp, stored);
  st = convert(user, ud, tmp, sd, n, t, msg);
  free(tmp);
  return st;
}
