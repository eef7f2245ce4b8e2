/*
 * kernels_binary.c - elementwise ops on two broadcast tensors: Add, Sub,
 * Mul, Div, Pow, Mod, PRelu, BitShift, And, Or, Xor and the comparisons
 * Equal, Greater, Less, GreaterOrEqual, LessOrEqual.
 *
 * Broadcasting is multidirectional (opset 7 on; PRelu's one-directional
 * slope is the special case where the output has the input's shape):
 * loom_kbcast_each hands out runs along the innermost dimension, in which
 * each operand either steps by one element or stays put.  float32 (and
 * int64, the shape-arithmetic type) have typed loops for the three step
 * patterns, which the compiler vectorizes; the other types go through
 * double (floats) or int64/uint64 (integers) one element at a time.
 *
 * Integer semantics are C's, as ONNX Runtime implements them: Add, Sub, Mul
 * wrap; Div truncates toward zero; Mod follows the divisor's sign unless
 * fmod=1 (then the dividend's, and floats require fmod=1); BitShift by the
 * type's width or more gives 0.  An integer division or modulo by zero is
 * refused (LOOM_E_INVALID): ONNX leaves it undefined and C would trap.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"

enum bop {
  B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MOD, B_FMOD, B_PRELU, B_SHL, B_SHR,
  B_AND, B_OR, B_XOR, B_EQ, B_GT, B_LT, B_GE, B_LE, B_COUNT
};

static const struct {
  const char *op;
  enum bop bop;
  unsigned types; /* of the first input */
} bops[] = {
    {"Add", B_ADD, DTM_NUM},    {"Sub", B_SUB, DTM_NUM},        {"Mul", B_MUL, DTM_NUM},
    {"Div", B_DIV, DTM_NUM},    {"Pow", B_POW, DTM_NUM},        {"Mod", B_MOD, DTM_NUM},
    {"PRelu", B_PRELU, DTM_NUM}, {"BitShift", B_SHL, DTM_UINT}, {"And", B_AND, DTM(LOOM_DT_BOOL)},
    {"Or", B_OR, DTM(LOOM_DT_BOOL)}, {"Xor", B_XOR, DTM(LOOM_DT_BOOL)}, {"Equal", B_EQ, DTM_ALL},
    {"Greater", B_GT, DTM_NUM}, {"Less", B_LT, DTM_NUM},        {"GreaterOrEqual", B_GE, DTM_NUM},
    {"LessOrEqual", B_LE, DTM_NUM},
};

static int is_compare(enum bop op) { return op >= B_EQ; }

struct bctx {
  enum bop op;
  const struct loom_kt *a, *b;
  struct loom_kt *y;
  int uns;        /* integers as unsigned (u64 magnitudes, comparisons, division) */
  int64_t bad_at; /* first element of an integer division by zero, or -1 */
};

/* The loop over one run for the three step patterns, with x and w the
 * operands' elements in EXPR. */
#define LOOP3(TA, TB, TO, EXPR)                                                             \
  do {                                                                                      \
    const TA *restrict pa = (const TA *)k->a->data + off[0];                                \
    const TB *restrict pb = (const TB *)k->b->data + off[1];                                \
    TO *restrict po = (TO *)k->y->data + o;                                                 \
    if (sa && sb) {                                                                         \
      for (int64_t i = 0; i < len; i++) {                                                   \
        const TA x = pa[i];                                                                 \
        const TB w = pb[i];                                                                 \
        po[i] = (TO)(EXPR);                                                                 \
      }                                                                                     \
    } else if (sa) {                                                                        \
      const TB w = pb[0];                                                                   \
      for (int64_t i = 0; i < len; i++) {                                                   \
        const TA x = pa[i];                                                                 \
        po[i] = (TO)(EXPR);                                                                 \
      }                                                                                     \
    } else if (sb) {                                                                        \
      const TA x = pa[0];                                                                   \
      for (int64_t i = 0; i < len; i++) {                                                   \
        const TB w = pb[i];                                                                 \
        po[i] = (TO)(EXPR);                                                                 \
      }                                                                                     \
    } else {                                                                                \
      const TA x = pa[0];                                                                   \
      const TB w = pb[0];                                                                   \
      for (int64_t i = 0; i < len; i++) po[i] = (TO)(EXPR);                                 \
    }                                                                                       \
  } while (0)

#define STEPS                                                                               \
  struct bctx *k = ctx;                                                                     \
  const int sa = b->st[0][b->rank - 1] != 0, sb = b->st[1][b->rank - 1] != 0

static void row_f32(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                    int64_t len) {
  STEPS;
  switch (k->op) {
  case B_ADD: LOOP3(float, float, float, x + w); break;
  case B_SUB: LOOP3(float, float, float, x - w); break;
  case B_MUL: LOOP3(float, float, float, x * w); break;
  case B_DIV: LOOP3(float, float, float, x / w); break;
  case B_POW: LOOP3(float, float, float, powf(x, w)); break;
  case B_FMOD: LOOP3(float, float, float, fmodf(x, w)); break;
  case B_PRELU: LOOP3(float, float, float, x < 0 ? w * x : x); break;
  case B_EQ: LOOP3(float, float, uint8_t, x == w); break;
  case B_GT: LOOP3(float, float, uint8_t, x > w); break;
  case B_LT: LOOP3(float, float, uint8_t, x < w); break;
  case B_GE: LOOP3(float, float, uint8_t, x >= w); break;
  case B_LE: LOOP3(float, float, uint8_t, x <= w); break;
  default: LOOM_ASSERT(0);
  }
}

#define WRAP(OP) (int64_t)((uint64_t)x OP(uint64_t) w)

static void row_i64(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                    int64_t len) {
  STEPS;
  switch (k->op) {
  case B_ADD: LOOP3(int64_t, int64_t, int64_t, WRAP(+)); break;
  case B_SUB: LOOP3(int64_t, int64_t, int64_t, WRAP(-)); break;
  case B_MUL: LOOP3(int64_t, int64_t, int64_t, WRAP(*)); break;
  case B_EQ: LOOP3(int64_t, int64_t, uint8_t, x == w); break;
  case B_GT: LOOP3(int64_t, int64_t, uint8_t, x > w); break;
  case B_LT: LOOP3(int64_t, int64_t, uint8_t, x < w); break;
  case B_GE: LOOP3(int64_t, int64_t, uint8_t, x >= w); break;
  case B_LE: LOOP3(int64_t, int64_t, uint8_t, x <= w); break;
  default: LOOM_ASSERT(0);
  }
}

static void row_bool(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                     int64_t len) {
  STEPS;
  switch (k->op) {
  case B_AND: LOOP3(uint8_t, uint8_t, uint8_t, x && w); break;
  case B_OR: LOOP3(uint8_t, uint8_t, uint8_t, x || w); break;
  case B_XOR: LOOP3(uint8_t, uint8_t, uint8_t, !x != !w); break;
  case B_EQ: LOOP3(uint8_t, uint8_t, uint8_t, !x == !w); break;
  default: LOOM_ASSERT(0);
  }
}

static double op_f64(enum bop op, double x, double w) {
  switch (op) {
  case B_ADD: return x + w;
  case B_SUB: return x - w;
  case B_MUL: return x * w;
  case B_DIV: return x / w;
  case B_POW: return pow(x, w);
  case B_FMOD: return fmod(x, w);
  case B_PRELU: return x < 0 ? w * x : x;
  case B_EQ: return x == w;
  case B_GT: return x > w;
  case B_LT: return x < w;
  case B_GE: return x >= w;
  case B_LE: return x <= w;
  default: LOOM_ASSERT(0);
  }
}

/* Integer x**w by squaring (wrapping); a negative exponent gives the
 * truncated real result (0 unless |x| is 1). */
static int64_t ipow(int64_t x, int64_t w) {
  if (w < 0) return x == 1 ? 1 : x == -1 ? (w & 1 ? -1 : 1) : 0;
  uint64_t r = 1, base = (uint64_t)x;
  for (; w; w >>= 1, base *= base)
    if (w & 1) r *= base;
  return (int64_t)r;
}

/* Integer ops; *bad on a division by zero. */
static int64_t op_int(enum bop op, int64_t x, int64_t w, int uns, int *bad) {
  uint64_t ux = (uint64_t)x, uw = (uint64_t)w;
  switch (op) {
  case B_ADD: return (int64_t)(ux + uw);
  case B_SUB: return (int64_t)(ux - uw);
  case B_MUL: return (int64_t)(ux * uw);
  case B_POW: return ipow(x, w);
  case B_PRELU: return x < 0 ? (int64_t)(ux * uw) : x;
  case B_SHL: return uw >= 64 ? 0 : (int64_t)(ux << uw);
  case B_SHR: return uw >= 64 ? 0 : (int64_t)(ux >> uw);
  case B_EQ: return x == w;
  case B_GT: return uns ? ux > uw : x > w;
  case B_LT: return uns ? ux < uw : x < w;
  case B_GE: return uns ? ux >= uw : x >= w;
  case B_LE: return uns ? ux <= uw : x <= w;
  default: break;
  }
  if (w == 0) return *bad = 1, 0;
  if (uns) return (int64_t)(op == B_DIV ? ux / uw : ux % uw);
  if (w == -1) return op == B_DIV ? (int64_t)(0 - ux) : 0; /* no INT64_MIN / -1 trap */
  if (op == B_DIV) return x / w;
  int64_t r = x % w;
  if (op == B_MOD && r != 0 && ((r < 0) != (w < 0))) r += w; /* Python's sign rule */
  return r;
}

/* Bit width of an integer dtype. */
static int width(loom_dtype t) { return (int)loom_dtype_size(t) * 8; }

static void row_generic(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o,
                        int64_t len) {
  STEPS;
  int fl = loom_dtype_is_float(k->a->dtype) || loom_dtype_is_float(k->b->dtype);
  int bits = width(k->a->dtype);
  for (int64_t i = 0; i < len; i++) {
    int64_t ia = off[0] + (sa ? i : 0), ib = off[1] + (sb ? i : 0);
    if (fl) { /* Pow of an integer base with a float exponent too: numpy computes in double */
      double r = op_f64(k->op, loom_kt_get_f64(k->a, ia), loom_kt_get_f64(k->b, ib));
      loom_kt_set_f64(k->y, o + i, r);
      continue;
    }
    int bad = 0;
    int64_t w = loom_kt_get_i64(k->b, ib);
    if ((k->op == B_SHL || k->op == B_SHR) && (uint64_t)w >= (uint64_t)bits) w = 64;
    int64_t r = op_int(k->op, loom_kt_get_i64(k->a, ia), w, k->uns, &bad);
    if (bad && k->bad_at < 0) k->bad_at = o + i;
    loom_kt_set_i64(k->y, o + i, r);
  }
}

static loom_status k_binary(const struct loom_kcall *c) {
  int idx = 0;
  while (idx < (int)(sizeof bops / sizeof bops[0]) - 1 && strcmp(bops[idx].op, c->op)) idx++;
  LOOM_ASSERT(!strcmp(bops[idx].op, c->op));
  struct bctx k = {bops[idx].bop, &c->in[0], &c->in[1], &c->out[0], 0, -1};
  loom_status st = loom_k_arity(c, 2, 2, 1, 1);
  if (!st) st = loom_k_dtype(c, k.a, "input 0", bops[idx].types);
  if (!st && k.op != B_POW) st = loom_k_same_dtype(c, k.a, k.b, "input 1");
  if (!st && k.op == B_POW) st = loom_k_dtype(c, k.b, "the exponent", DTM_NUM);
  if (!st) st = loom_k_dtype(c, k.y, "output", is_compare(k.op) ? DTM(LOOM_DT_BOOL) : DTM(k.a->dtype));
  if (st) return st;
  if (k.op == B_MOD && loom_kattr_int(c, "fmod", 0)) k.op = B_FMOD;
  if (k.op == B_MOD && loom_dtype_is_float(k.a->dtype))
    return KFAIL(c, LOOM_E_INVALID, "Mod of floats needs fmod=1");
  if (k.op == B_SHL) {
    const char *d = loom_kattr_string(c, "direction", "");
    if (strcmp(d, "LEFT") && strcmp(d, "RIGHT"))
      return KFAIL(c, LOOM_E_INVALID, "direction \"%s\" is neither LEFT nor RIGHT", d);
    k.op = d[0] == 'L' ? B_SHL : B_SHR;
  }
  /* Unsigned 64-bit values do not fit int64: compare and divide them as
   * unsigned (the narrower unsigned types are exact either way). */
  k.uns = loom_dtype_is_unsigned_int(k.a->dtype);
  struct loom_kbcast plan;
  const struct loom_kt *in[2] = {k.a, k.b};
  if ((st = loom_kbcast_init(c, &plan, 2, in, k.y))) return st;
  loom_krow_fn *row = row_generic;
  if (k.a->dtype == LOOM_DT_F32 && k.b->dtype == LOOM_DT_F32 && k.op != B_MOD)
    row = row_f32;
  else if (k.a->dtype == LOOM_DT_I64 && k.b->dtype == LOOM_DT_I64 &&
           (k.op <= B_MUL || is_compare(k.op)))
    row = row_i64;
  else if (k.a->dtype == LOOM_DT_BOOL)
    row = row_bool;
  loom_kbcast_each(&plan, row, &k);
  if (k.bad_at >= 0)
    return KFAIL(c, LOOM_E_INVALID, "integer division by zero (output element %lld)",
                 (long long)k.bad_at);
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_binary[] = {
    {"Add", k_binary, 0, NULL},      {"Sub", k_binary, 0, NULL},     {"Mul", k_binary, 0, NULL},
    {"Div", k_binary, 0, NULL},      {"Pow", k_binary, 0, NULL},     {"Mod", k_binary, 0, NULL},
    {"PRelu", k_binary, 0, NULL},    {"BitShift", k_binary, 0, NULL}, {"And", k_binary, 0, NULL},
    {"Or", k_binary, 0, NULL},       {"Xor", k_binary, 0, NULL},     {"Equal", k_binary, 0, NULL},
    {"Greater", k_binary, 0, NULL},  {"Less", k_binary, 0, NULL},    {"GreaterOrEqual", k_binary, 0, NULL},
    {"LessOrEqual", k_binary, 0, NULL}, {NULL, NULL, 0, NULL},
};
