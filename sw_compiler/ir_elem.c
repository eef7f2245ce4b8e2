/*
 * ir_elem.c - reading and writing single elements of any IR dtype.
 *
 * The compiler mostly works on f32, int8, int32 and int64 with typed loops;
 * these accessors serve the places that must handle every type a model may
 * carry (constants in the text form, shape arithmetic, comparisons of
 * graph outputs in tests).  They are slow by design: one switch per element.
 * Conversions follow ONNX Cast: to an integer type a double is truncated
 * toward zero and saturated, an int64 wraps; binary16 and bfloat16 round to
 * nearest even.
 */
#include "sw_compiler/ir.h"

#include <math.h>
#include <string.h>

float ir_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13); /* inf, NaN (payload kept) */
  } else if (exp) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man) { /* subnormal: normalize */
    int e = -1;
    do man <<= 1, e++;
    while (!(man & 0x400u));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  } else {
    bits = sign;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t ir_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
  if (ax < 0x38800000u) { /* subnormal or zero: scale into the 10-bit field */
    float a;
    memcpy(&a, &ax, sizeof a);
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f)); /* a / 2^-24 */
  }
  uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u); /* round to nearest even */
  return (uint16_t)(sign | (uint16_t)((r - 0x38000000u) >> 13));
}

static float bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

double ir_load_f64(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_F32: return ((const float *)p)[i];
  case IR_DT_F64: return ((const double *)p)[i];
  case IR_DT_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
  case IR_DT_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
  case IR_DT_U64: return (double)((const uint64_t *)p)[i];
  default: return (double)ir_load_i64(dt, p, i);
  }
}

int64_t ir_load_i64(enum ir_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case IR_DT_I8: return ((const int8_t *)p)[i];
  case IR_DT_U8: return ((const uint8_t *)p)[i];
  case IR_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  case IR_DT_I16: return ((const int16_t *)p)[i];
  case IR_DT_U16: return ((const uint16_t *)p)[i];
  case IR_DT_I32: return ((const int32_t *)p)[i];
  case IR_DT_U32: return ((const uint32_t *)p)[i];
  case IR_DT_I64: return ((const int64_t *)p)[i];
  case IR_DT_U64: return (int64_t)((const uint64_t *)p)[i];
  case IR_DT_F32: case IR_DT_F64: case IR_DT_F16: case IR_DT_BF16: {
    double v = ir_load_f64(dt, p, i);
    return isnan(v) ? 0 : v <= -9.2233720368547758e18 ? INT64_MIN : v >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)v;
  }
  case IR_DT_UNDEF: case IR_DT_COUNT: break;
  }
  LOOM_ASSERT(0);
  return 0;
}

/* v truncated and clamped to [lo, hi]. */
static double sat(double v, double lo, double hi) {
  v = trunc(v);
  return v < lo ? lo : v > hi ? hi : v;
}

void ir_store_f64(enum ir_dtype dt, void *p, int64_t i, double v) {
  if (!ir_dtype_is_float(dt) && isnan(v)) v = 0; /* NaN has no integer value */
  switch (dt) {
  case IR_DT_F32: ((float *)p)[i] = (float)v; return;
  case IR_DT_F64: ((double *)p)[i] = v; return;
  case IR_DT_F16: ((uint16_t *)p)[i] = ir_f32_to_f16((float)v); return;
  case IR_DT_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); return;
  case IR_DT_BOOL: ((uint8_t *)p)[i] = v != 0; return;
  case IR_DT_I8: ((int8_t *)p)[i] = (int8_t)sat(v, -128, 127); return;
  case IR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)sat(v, 0, 255); return;
  case IR_DT_I16: ((int16_t *)p)[i] = (int16_t)sat(v, -32768, 32767); return;
  case IR_DT_U16: ((uint16_t *)p)[i] = (uint16_t)sat(v, 0, 65535); return;
  case IR_DT_I32: ((int32_t *)p)[i] = (int32_t)sat(v, INT32_MIN, INT32_MAX); return;
  case IR_DT_U32: ((uint32_t *)p)[i] = (uint32_t)sat(v, 0, UINT32_MAX); return;
  case IR_DT_I64:
    ((int64_t *)p)[i] = v <= -9.2233720368547758e18 ? INT64_MIN : v >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)v;
    return;
  case IR_DT_U64: ((uint64_t *)p)[i] = v <= 0 ? 0 : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v; return;
  case IR_DT_UNDEF: case IR_DT_COUNT: break;
  }
  LOOM_ASSERT(0);
}

void ir_store_i64(enum ir_dtype dt, void *p, int64_t i, int64_t v) {
  switch (dt) {
  case IR_DT_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; return;
  case IR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; return;
  case IR_DT_BOOL: ((uint8_t *)p)[i] = v != 0; return;
  case IR_DT_I16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; return;
  case IR_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; return;
  case IR_DT_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; return;
  case IR_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; return;
  case IR_DT_I64: ((int64_t *)p)[i] = v; return;
  case IR_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; return;
  default: ir_store_f64(dt, p, i, (double)v); return;
  }
}
