/*
 * kernel_util.c - the kernels' shared ground: element access for every
 * dtype, binary16/bfloat16 conversions, the ONNX dtype codes, the checks
 * that refuse a call with a message, and float32 views of float operands.
 *
 * The generic accessors are the semantics of record for the rare types:
 * a double stored into a narrower float type is rounded once, to nearest
 * even, directly from the double (never through float32, whose rounding
 * would round twice); integers stored from doubles truncate toward zero and
 * saturate; integers stored from int64 wrap (ONNX Cast between integers is
 * C's modular conversion).  Kernels on hot paths read float32 directly and
 * use these only for the other types.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_util.h"

/* ---- dtypes ---- */

int loom_dtype_is_float(loom_dtype t) { return (unsigned)t < 32 && (DTM_FLOAT >> t & 1); }
int loom_dtype_is_signed_int(loom_dtype t) { return (unsigned)t < 32 && (DTM_SINT >> t & 1); }
int loom_dtype_is_unsigned_int(loom_dtype t) { return (unsigned)t < 32 && (DTM_UINT >> t & 1); }

/* TensorProto.DataType codes of onnx.proto. */
static const struct {
  int onnx;
  loom_dtype dt;
} onnx_types[] = {
    {1, LOOM_DT_F32},  {2, LOOM_DT_U8},   {3, LOOM_DT_I8},   {4, LOOM_DT_U16},
    {5, LOOM_DT_I16},  {6, LOOM_DT_I32},  {7, LOOM_DT_I64},  {9, LOOM_DT_BOOL},
    {10, LOOM_DT_F16}, {11, LOOM_DT_F64}, {12, LOOM_DT_U32}, {13, LOOM_DT_U64},
    {16, LOOM_DT_BF16},
};
_Static_assert(sizeof onnx_types / sizeof onnx_types[0] == LOOM_DT_COUNT - 1,
               "every loom_dtype needs its ONNX code");

loom_dtype loom_dtype_from_onnx(int64_t onnx_type) {
  for (size_t i = 0; i < sizeof onnx_types / sizeof onnx_types[0]; i++)
    if (onnx_types[i].onnx == onnx_type) return onnx_types[i].dt;
  return LOOM_DT_INVALID;
}

int loom_dtype_to_onnx(loom_dtype t) {
  for (size_t i = 0; i < sizeof onnx_types / sizeof onnx_types[0]; i++)
    if (onnx_types[i].dt == t) return onnx_types[i].onnx;
  return 0;
}

/* ---- binary16 and bfloat16 ---- */

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

static float bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

float loom_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = h >> 10 & 0x1f, man = h & 0x3ff;
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000 | man << 13);
  return bits_f32(sign | (exp + 112) << 23 | man << 13);
}

uint16_t loom_f32_to_f16(float f) {
  uint32_t x = f32_bits(f), ax = x & 0x7fffffff;
  uint16_t sign = (uint16_t)(x >> 16 & 0x8000);
  if (ax > 0x7f800000) return sign | 0x7e00 | (uint16_t)(ax >> 13 & 0x1ff); /* quiet NaN */
  if (ax >= 0x477ff000) return sign | 0x7c00; /* rounds to or beyond infinity */
  if (ax >= 0x38800000)                       /* normal: rebias, round to nearest even */
    return sign | (uint16_t)((ax - (112u << 23) + 0xfff + (ax >> 13 & 1)) >> 13);
  /* Subnormal half: round(|f| * 2^24) = round(m * 2^(e - 126)). */
  uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - e;
  if (shift > 24) return sign;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  return sign | (uint16_t)q;
}

float loom_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t loom_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)(x >> 16 | 0x40); /* quiet NaN */
  return (uint16_t)((x + 0x7fff + (x >> 16 & 1)) >> 16);
}

/* x rounded (to nearest even) to a binary format with `man` fraction bits
 * and smallest normal exponent `emin`; exact scaling, one rounding. */
static double round_to_format(double x, int man, int emin) {
  if (!isfinite(x) || x == 0) return x;
  int e = ilogb(x);
  if (e < emin) e = emin;
  return ldexp(rint(ldexp(x, man - e)), e - man);
}

/* ---- element access ---- */

int64_t loom_kt_numel(const struct loom_kt *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

double loom_kt_get_f64(const struct loom_kt *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
  case LOOM_DT_F32: return ((const float *)p)[i];
  case LOOM_DT_F64: return ((const double *)p)[i];
  case LOOM_DT_F16: return loom_f16_to_f32(((const uint16_t *)p)[i]);
  case LOOM_DT_BF16: return loom_bf16_to_f32(((const uint16_t *)p)[i]);
  case LOOM_DT_I8: return ((const int8_t *)p)[i];
  case LOOM_DT_U8: return ((const uint8_t *)p)[i];
  case LOOM_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  case LOOM_DT_I16: return ((const int16_t *)p)[i];
  case LOOM_DT_U16: return ((const uint16_t *)p)[i];
  case LOOM_DT_I32: return ((const int32_t *)p)[i];
  case LOOM_DT_U32: return ((const uint32_t *)p)[i];
  case LOOM_DT_I64: return (double)((const int64_t *)p)[i];
  case LOOM_DT_U64: return (double)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* A double truncated toward zero into [lo, hi]; NaN is 0. */
static int64_t sat_trunc(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  if (v <= lo) return (int64_t)lo;
  if (v >= hi) return (int64_t)hi;
  return (int64_t)v;
}

int64_t loom_kt_get_i64(const struct loom_kt *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
  case LOOM_DT_I8: return ((const int8_t *)p)[i];
  case LOOM_DT_U8: return ((const uint8_t *)p)[i];
  case LOOM_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  case LOOM_DT_I16: return ((const int16_t *)p)[i];
  case LOOM_DT_U16: return ((const uint16_t *)p)[i];
  case LOOM_DT_I32: return ((const int32_t *)p)[i];
  case LOOM_DT_U32: return ((const uint32_t *)p)[i];
  case LOOM_DT_I64: return ((const int64_t *)p)[i];
  case LOOM_DT_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return sat_trunc(loom_kt_get_f64(t, i), -0x1p63, 0x1p63 - 1024);
  }
}

void loom_kt_set_f64(struct loom_kt *t, int64_t i, double v) {
  void *p = t->data;
  switch (t->dtype) {
  case LOOM_DT_F32: ((float *)p)[i] = (float)v; break;
  case LOOM_DT_F64: ((double *)p)[i] = v; break;
  case LOOM_DT_F16: ((uint16_t *)p)[i] = loom_f32_to_f16((float)round_to_format(v, 10, -14)); break;
  case LOOM_DT_BF16:
    ((uint16_t *)p)[i] = loom_f32_to_bf16((float)round_to_format(v, 7, -126));
    break;
  case LOOM_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case LOOM_DT_I8: ((int8_t *)p)[i] = (int8_t)sat_trunc(v, INT8_MIN, INT8_MAX); break;
  case LOOM_DT_U8: ((uint8_t *)p)[i] = (uint8_t)sat_trunc(v, 0, UINT8_MAX); break;
  case LOOM_DT_I16: ((int16_t *)p)[i] = (int16_t)sat_trunc(v, INT16_MIN, INT16_MAX); break;
  case LOOM_DT_U16: ((uint16_t *)p)[i] = (uint16_t)sat_trunc(v, 0, UINT16_MAX); break;
  case LOOM_DT_I32: ((int32_t *)p)[i] = (int32_t)sat_trunc(v, INT32_MIN, INT32_MAX); break;
  case LOOM_DT_U32: ((uint32_t *)p)[i] = (uint32_t)sat_trunc(v, 0, UINT32_MAX); break;
  case LOOM_DT_I64: ((int64_t *)p)[i] = sat_trunc(v, -0x1p63, 0x1p63 - 1024); break;
  case LOOM_DT_U64:
    /* [2^63, 2^64) does not fit int64: go through uint64 directly. */
    if (v >= 0x1p63)
      ((uint64_t *)p)[i] = v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
    else
      ((uint64_t *)p)[i] = (uint64_t)sat_trunc(v, 0, 0x1p63);
    break;
  default: break;
  }
}

void loom_kt_set_i64(struct loom_kt *t, int64_t i, int64_t v) {
  void *p = t->data;
  switch (t->dtype) {
  case LOOM_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case LOOM_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case LOOM_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case LOOM_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case LOOM_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case LOOM_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
  case LOOM_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case LOOM_DT_I64: ((int64_t *)p)[i] = v; break;
  case LOOM_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case LOOM_DT_F32: ((float *)p)[i] = (float)v; break;
  default: loom_kt_set_f64(t, i, (double)v); break;
  }
}

/* ---- checks ---- */

loom_status loom_k_arity(const struct loom_kcall *c, int min_in, int max_in, int min_out,
                         int max_out) {
  if (c->n_in < min_in || c->n_in > max_in)
    return min_in == max_in
               ? KFAIL(c, LOOM_E_INVALID, "takes %d input(s), got %d", min_in, c->n_in)
               : KFAIL(c, LOOM_E_INVALID, "takes %d to %d inputs, got %d", min_in, max_in, c->n_in);
  if (c->n_out < min_out || c->n_out > max_out)
    return min_out == max_out
               ? KFAIL(c, LOOM_E_INVALID, "takes %d output(s), got %d", min_out, c->n_out)
               : KFAIL(c, LOOM_E_INVALID, "takes %d to %d outputs, got %d", min_out, max_out, c->n_out);
  for (int i = 0; i < min_in; i++)
    if (!loom_kt_present(&c->in[i])) return KFAIL(c, LOOM_E_INVALID, "input %d is missing", i);
  if (min_out > 0 && !loom_kt_present(&c->out[0]))
    return KFAIL(c, LOOM_E_INVALID, "output 0 is missing");
  return LOOM_OK;
}

loom_status loom_k_dtype(const struct loom_kcall *c, const struct loom_kt *t, const char *what,
                         unsigned mask) {
  if ((unsigned)t->dtype < 32 && (mask >> t->dtype & 1)) return LOOM_OK;
  return KFAIL(c, LOOM_E_UNSUPPORTED, "%s of type %s is not supported", what,
               loom_dtype_name(t->dtype));
}

loom_status loom_k_same_dtype(const struct loom_kcall *c, const struct loom_kt *a,
                              const struct loom_kt *b, const char *what) {
  if (a->dtype == b->dtype) return LOOM_OK;
  return KFAIL(c, LOOM_E_INVALID, "%s has type %s, expected %s", what, loom_dtype_name(b->dtype),
               loom_dtype_name(a->dtype));
}

loom_status loom_k_axis(const struct loom_kcall *c, int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
    return KFAIL(c, LOOM_E_INVALID, "axis %lld is out of range for rank %d", (long long)axis,
                 rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return LOOM_OK;
}

const char *loom_k_shape_str(int rank, const int64_t *dims, char buf[96]) {
  int n = snprintf(buf, 96, "[");
  for (int i = 0; i < rank && n < 90; i++)
    n += snprintf(buf + n, (size_t)(96 - n), "%s%lld", i ? "," : "", (long long)dims[i]);
  snprintf(buf + n, (size_t)(96 - n), "]");
  return buf;
}

loom_status loom_k_out_shape(const struct loom_kcall *c, const struct loom_kt *out, int rank,
                             const int64_t *dims) {
  int same = out->rank == rank;
  for (int i = 0; same && i < rank; i++) same = out->dims[i] == dims[i];
  if (same) return LOOM_OK;
  char a[96], b[96];
  return KFAIL(c, LOOM_E_INVALID, "output shape %s differs from the computed %s",
               loom_k_shape_str(out->rank, out->dims, a), loom_k_shape_str(rank, dims, b));
}

loom_status loom_k_out_like(const struct loom_kcall *c, const struct loom_kt *out,
                            const struct loom_kt *like) {
  return loom_k_out_shape(c, out, like->rank, like->dims);
}

loom_status loom_k_rank(const struct loom_kcall *c, const struct loom_kt *t, const char *what,
                        int lo, int hi) {
  if (t->rank >= lo && t->rank <= hi) return LOOM_OK;
  if (lo == hi) return KFAIL(c, LOOM_E_INVALID, "%s has rank %d, expected %d", what, t->rank, lo);
  return KFAIL(c, LOOM_E_INVALID, "%s has rank %d, expected %d to %d", what, t->rank, lo, hi);
}

loom_status loom_k_ints_n(const struct loom_kcall *c, const char *name, int n,
                          const int64_t **v) {
  int got = loom_kattr_ints(c, name, v);
  if (got < 0) {
    *v = NULL;
    return LOOM_OK;
  }
  if (got != n) return KFAIL(c, LOOM_E_INVALID, "%s has %d values, expected %d", name, got, n);
  return LOOM_OK;
}

loom_status loom_k_choice(const struct loom_kcall *c, const char *name, const char *dflt,
                          const char *const *options, int *which) {
  const char *s = loom_kattr_string(c, name, dflt);
  for (int i = 0; options[i]; i++)
    if (!strcmp(s, options[i])) {
      *which = i;
      return LOOM_OK;
    }
  return KFAIL(c, LOOM_E_UNSUPPORTED, "%s \"%s\" is not supported", name, s);
}

int loom_k_op_index(const char *const *names, const char *op) {
  for (int i = 0; names[i]; i++)
    if (!strcmp(names[i], op)) return i;
  LOOM_ASSERT(0 && "a kernel runs only for the ops of its table");
  return -1;
}

/* ---- tensors ---- */

void loom_k_strides(const struct loom_kt *t, int64_t *strides) {
  int64_t s = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= t->dims[i];
  }
}

int64_t loom_k_span(const struct loom_kt *t, int lo, int hi) {
  int64_t n = 1;
  for (int i = lo; i < hi; i++) n *= t->dims[i];
  return n;
}

static loom_status one_element(const struct loom_kcall *c, const struct loom_kt *t, const char *what) {
  if (loom_kt_numel(t) == 1) return LOOM_OK;
  return KFAIL(c, LOOM_E_INVALID, "%s must have one element, has %lld", what, (long long)loom_kt_numel(t));
}

loom_status loom_k_scalar_f64(const struct loom_kcall *c, const struct loom_kt *t,
                              const char *what, double *v) {
  loom_status st = one_element(c, t, what);
  if (!st) *v = loom_kt_get_f64(t, 0);
  return st;
}

loom_status loom_k_scalar_i64(const struct loom_kcall *c, const struct loom_kt *t,
                              const char *what, int64_t *v) {
  loom_status st = one_element(c, t, what);
  if (!st) *v = loom_kt_get_i64(t, 0);
  return st;
}

void *loom_k_alloc(const struct loom_kcall *c, int64_t n, size_t size) {
  if (n < 0 || (size && (uint64_t)n > SIZE_MAX / 2 / size)) {
    KFAIL(c, LOOM_E_NOMEM, "scratch of %lld elements is too large", (long long)n);
    return NULL;
  }
  void *p = calloc(n ? (size_t)n : 1, size ? size : 1);
  if (!p) KFAIL(c, LOOM_E_NOMEM, "out of memory for %lld elements of scratch", (long long)n);
  return p;
}

const float *loom_k_in_f32(const struct loom_kcall *c, const struct loom_kt *t, float **tmp) {
  *tmp = NULL;
  if (t->dtype == LOOM_DT_F32) return t->data;
  int64_t n = loom_kt_numel(t);
  float *p = loom_k_alloc(c, n, sizeof(float));
  if (!p) return NULL;
  for (int64_t i = 0; i < n; i++) p[i] = (float)loom_kt_get_f64(t, i);
  return *tmp = p;
}

float *loom_k_out_f32(const struct loom_kcall *c, struct loom_kt *out, float **tmp) {
  *tmp = NULL;
  if (out->dtype == LOOM_DT_F32) return out->data;
  return *tmp = loom_k_alloc(c, loom_kt_numel(out), sizeof(float));
}

void loom_k_out_f32_done(struct loom_kt *out, float *tmp) {
  if (!tmp) return;
  int64_t n = loom_kt_numel(out);
  for (int64_t i = 0; i < n; i++) loom_kt_set_f64(out, i, tmp[i]);
  free(tmp);
}

void loom_k_sort(int64_t *idx, int64_t n, loom_kcmp_fn *cmp, const void *ctx, int64_t *tmp) {
  for (int64_t w = 1; w < n; w *= 2) { /* bottom-up: runs of w merge into 2w */
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp(ctx, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

loom_status loom_k_views(const struct loom_kcall *c, int n_in, struct loom_kviews *v) {
  LOOM_ASSERT(n_in <= LOOM_KVIEW_MAX);
  memset(v, 0, sizeof *v);
  for (int i = 0; i < n_in && i < c->n_in; i++)
    if (loom_kt_present(&c->in[i]) && !(v->in[i] = loom_k_in_f32(c, &c->in[i], &v->tmp_in[i])))
      return LOOM_E_NOMEM;
  return (v->out = loom_k_out_f32(c, &c->out[0], &v->tmp_out)) ? LOOM_OK : LOOM_E_NOMEM;
}

loom_status loom_k_views_done(const struct loom_kcall *c, struct loom_kviews *v, loom_status st) {
  for (int i = 0; i < LOOM_KVIEW_MAX; i++) free(v->tmp_in[i]);
  if (st == LOOM_OK) loom_k_out_f32_done(&c->out[0], v->tmp_out);
  else free(v->tmp_out);
  return st;
}

/* ---- broadcasting ---- */

loom_status loom_k_bcast_dims(const struct loom_kcall *c, int ra, const int64_t *a, int rb,
                              const int64_t *b, int *rank, int64_t *dims) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t x = i < r - ra ? 1 : a[i - (r - ra)], y = i < r - rb ? 1 : b[i - (r - rb)];
    if (x != y && x != 1 && y != 1) {
      char sa[96], sb[96];
      return KFAIL(c, LOOM_E_INVALID, "shapes %s and %s do not broadcast",
                   loom_k_shape_str(ra, a, sa), loom_k_shape_str(rb, b, sb));
    }
    dims[i] = x == 1 ? y : x;
  }
  *rank = r;
  return LOOM_OK;
}

/* strict: the output must be exactly the broadcast of the inputs (an
 * elementwise op); otherwise it may be larger (Expand-like). */
static loom_status bcast_init(const struct loom_kcall *c, struct loom_kbcast *b, int n,
                              const struct loom_kt *const *in, const struct loom_kt *out, int strict) {
  LOOM_ASSERT(n >= 1 && n <= LOOM_KB_MAX);
  int r = out->rank;
  int64_t want[LOOM_KT_MAX_RANK], st[LOOM_KB_MAX][LOOM_KT_MAX_RANK];
  for (int d = 0; d < r; d++) want[d] = 1;
  for (int k = 0; k < n; k++) {
    const struct loom_kt *t = in[k];
    if (!loom_kt_present(t)) return KFAIL(c, LOOM_E_INVALID, "operand %d is missing", k);
    if (t->rank > r) goto mismatch;
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
      int td = d - (r - t->rank);
      int64_t dim = td >= 0 ? t->dims[td] : 1;
      if (dim != 1 && dim != out->dims[d]) goto mismatch;
      if (dim != 1) want[d] = dim;
      st[k][d] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  for (int d = 0; d < r && strict; d++)
    if (want[d] != out->dims[d]) goto mismatch;
  /* Collapse neighbouring dims where every operand stays contiguous (or
   * stays broadcast) across both; size-1 dims vanish. */
  b->n = n;
  b->rank = 0;
  for (int d = 0; d < r; d++) {
    if (out->dims[d] == 1) continue;
    int j = b->rank - 1, merge = j >= 0;
    for (int k = 0; merge && k < n; k++)
      merge = b->st[k][j] == st[k][d] * out->dims[d];
    if (merge) {
      b->dims[j] *= out->dims[d];
      for (int k = 0; k < n; k++) b->st[k][j] = st[k][d];
      continue;
    }
    b->dims[b->rank] = out->dims[d];
    for (int k = 0; k < n; k++) b->st[k][b->rank] = st[k][d];
    b->rank++;
  }
  if (b->rank == 0) {
    b->rank = 1;
    b->dims[0] = 1;
    for (int k = 0; k < n; k++) b->st[k][0] = 0;
  }
  return LOOM_OK;
mismatch:;
  char so[96], s0[96], s1[96] = "";
  if (n > 1) loom_k_shape_str(in[1]->rank, in[1]->dims, s1);
  return KFAIL(c, LOOM_E_INVALID, "output shape %s is not the broadcast of the inputs %s%s%s%s",
               loom_k_shape_str(r, out->dims, so), loom_k_shape_str(in[0]->rank, in[0]->dims, s0),
               n > 1 ? ", " : "", s1, n > 2 ? ", ..." : "");
}

loom_status loom_kbcast_init(const struct loom_kcall *c, struct loom_kbcast *b, int n,
                             const struct loom_kt *const *in, const struct loom_kt *out) {
  return bcast_init(c, b, n, in, out, 1);
}

void loom_kbcast_each(const struct loom_kbcast *b, loom_krow_fn *row, void *ctx) {
  int r = b->rank;
  int64_t len = b->dims[r - 1], idx[LOOM_KT_MAX_RANK] = {0}, off[LOOM_KB_MAX] = {0};
  for (int d = 0; d < r; d++)
    if (b->dims[d] == 0) return;
  for (int64_t o = 0;; o += len) {
    row(ctx, b, off, o, len);
    int d = r - 2;
    for (; d >= 0; d--) {
      for (int k = 0; k < b->n; k++) off[k] += b->st[k][d];
      if (++idx[d] < b->dims[d]) break;
      for (int k = 0; k < b->n; k++) off[k] -= b->st[k][d] * b->dims[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

static void row_expand(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                       int64_t len) {
  const struct loom_kt *const *io = ctx;
  int64_t s = b->st[0][b->rank - 1];
  float *dst = io[1]->data;
  for (int64_t i = 0; i < len; i++) dst[o + i] = (float)loom_kt_get_f64(io[0], off[0] + i * s);
}

loom_status loom_k_expand_f32(const struct loom_kcall *c, const struct loom_kt *t, int rank,
                              const int64_t *dims, float *dst) {
  struct loom_kt out = {LOOM_DT_F32, rank, {0}, dst};
  memcpy(out.dims, dims, (size_t)rank * sizeof dims[0]);
  struct loom_kbcast plan;
  loom_status st = bcast_init(c, &plan, 1, &t, &out, 0);
  if (st) return st;
  const struct loom_kt *io[2] = {t, &out};
  loom_kbcast_each(&plan, row_expand, io);
  return LOOM_OK;
}
