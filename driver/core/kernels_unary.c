/*
 * kernels_unary.c - elementwise math and activations on one tensor:
 * Abs ... Atanh, Erf, Exp, Log, Sqrt, Round, Relu, Sigmoid, Tanh and the
 * parameterised activations (LeakyRelu, Elu, Selu, Celu, HardSigmoid,
 * HardSwish, Softplus, Softsign, ThresholdedRelu, Shrink, Mish), plus the
 * type-changing Not, IsNaN and IsInf.
 *
 * Each op is written once, as an expression in x of a type T with the
 * op's attributes alpha, beta, gamma in scope (<tgmath.h> makes exp(x)
 * expf for T = float), and instantiated twice: a float32 loop over the
 * whole tensor (no call per element: the compiler vectorizes it) and a
 * double function that the other float types and the integer types go
 * through (read as double, stored back with the generic accessors).  The
 * integer ops whose exact int64 result matters (Abs, Neg, Sign, Relu) have
 * an int64 form as well.  float32 math is what ONNX's expected outputs are
 * computed in (numpy on float32 arrays).
 */
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "kernel_util.h"

struct uparam {
  double alpha, beta, gamma;
};

typedef void f32_fn(const float *restrict x, float *restrict y, int64_t n, const struct uparam *p);
typedef double f64_fn(double x, const struct uparam *p);
typedef int64_t i64_fn(int64_t x);

#define UNARY(NAME, EXPR)                                                                   \
  static void NAME##_f32(const float *restrict px, float *restrict py, int64_t n,          \
                         const struct uparam *p) {                                         \
    typedef float T;                                                                       \
    const T alpha = (T)p->alpha, beta = (T)p->beta, gamma = (T)p->gamma;                   \
    (void)alpha, (void)beta, (void)gamma;                                                  \
    for (int64_t i = 0; i < n; i++) {                                                      \
      const T x = px[i];                                                                   \
      py[i] = (EXPR);                                                                      \
    }                                                                                      \
  }                                                                                        \
  static double NAME##_f64(double x, const struct uparam *p) {                             \
    typedef double T;                                                                      \
    const T alpha = p->alpha, beta = p->beta, gamma = p->gamma;                            \
    (void)alpha, (void)beta, (void)gamma;                                                  \
    return (EXPR);                                                                         \
  }

#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))

UNARY(abs, fabs(x))
UNARY(neg, -x)
UNARY(sign, x > 0 ? (T)1 : x < 0 ? (T)-1 : x)
UNARY(exp, exp(x))
UNARY(log, log(x))
UNARY(sqrt, sqrt(x))
UNARY(reciprocal, (T)1 / x)
UNARY(floor, floor(x))
UNARY(ceil, ceil(x))
UNARY(round, rint(x))
UNARY(sin, sin(x))
UNARY(cos, cos(x))
UNARY(tan, tan(x))
UNARY(asin, asin(x))
UNARY(acos, acos(x))
UNARY(atan, atan(x))
UNARY(sinh, sinh(x))
UNARY(cosh, cosh(x))
UNARY(asinh, asinh(x))
UNARY(acosh, acosh(x))
UNARY(atanh, atanh(x))
UNARY(erf, erf(x))
UNARY(relu, x < 0 ? (T)0 : x)
UNARY(sigmoid, (T)1 / ((T)1 + exp(-x)))
UNARY(tanh, tanh(x))
UNARY(leakyrelu, x < 0 ? alpha * x : x)
UNARY(elu, x < 0 ? alpha * (exp(x) - (T)1) : x)
UNARY(selu, x <= 0 ? gamma * (alpha * exp(x) - alpha) : gamma * x)
UNARY(celu, fmax((T)0, x) + fmin((T)0, alpha * (exp(x / alpha) - (T)1)))
UNARY(hardsigmoid, fmax((T)0, fmin((T)1, alpha * x + beta)))
UNARY(hardswish, x * fmax((T)0, fmin((T)1, x / (T)6 + (T)0.5)))
UNARY(softplus, SOFTPLUS(x))
UNARY(softsign, x / ((T)1 + fabs(x)))
UNARY(thresholdedrelu, x > alpha ? x : (T)0)
UNARY(shrink, x < -gamma ? x + beta : x > gamma ? x - beta : (T)0)
UNARY(mish, x * tanh(SOFTPLUS(x)))

/* int64 forms (wrapping, as the integer types do). */
static int64_t abs_i64(int64_t x) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }
static int64_t neg_i64(int64_t x) { return (int64_t)(0 - (uint64_t)x); }
static int64_t sign_i64(int64_t x) { return (x > 0) - (x < 0); }
static int64_t relu_i64(int64_t x) { return x < 0 ? 0 : x; }

/* One op: its forms, the types it takes, its attributes. */
struct unary_op {
  const char *op;
  f32_fn *f32;
  f64_fn *f64;
  i64_fn *i64;   /* exact integer form; NULL: integers go through f64 */
  unsigned types;
  const char *attr[3]; /* names of alpha, beta, gamma (NULL: fixed at dflt) */
  double dflt[3];
};

#define OP(NAME, FN, TYPES) {NAME, FN##_f32, FN##_f64, NULL, TYPES, {0}, {0}}
#define OPI(NAME, FN, TYPES) {NAME, FN##_f32, FN##_f64, FN##_i64, TYPES, {0}, {0}}

static const struct unary_op ops[] = {
    OPI("Abs", abs, DTM_NUM),
    OPI("Neg", neg, DTM_FLOAT | DTM_SINT),
    OPI("Sign", sign, DTM_NUM),
    OP("Exp", exp, DTM_FLOAT),
    OP("Log", log, DTM_FLOAT),
    OP("Sqrt", sqrt, DTM_FLOAT),
    OP("Reciprocal", reciprocal, DTM_FLOAT),
    OP("Floor", floor, DTM_FLOAT),
    OP("Ceil", ceil, DTM_FLOAT),
    OP("Round", round, DTM_FLOAT),
    OP("Sin", sin, DTM_FLOAT),
    OP("Cos", cos, DTM_FLOAT),
    OP("Tan", tan, DTM_FLOAT),
    OP("Asin", asin, DTM_FLOAT),
    OP("Acos", acos, DTM_FLOAT),
    OP("Atan", atan, DTM_FLOAT),
    OP("Sinh", sinh, DTM_FLOAT),
    OP("Cosh", cosh, DTM_FLOAT),
    OP("Asinh", asinh, DTM_FLOAT),
    OP("Acosh", acosh, DTM_FLOAT),
    OP("Atanh", atanh, DTM_FLOAT),
    OP("Erf", erf, DTM_NUM),
    OPI("Relu", relu, DTM_FLOAT | DTM_SINT),
    OP("Sigmoid", sigmoid, DTM_FLOAT),
    OP("Tanh", tanh, DTM_FLOAT),
    OP("Softsign", softsign, DTM_FLOAT),
    OP("Softplus", softplus, DTM_FLOAT),
    OP("HardSwish", hardswish, DTM_FLOAT),
    OP("Mish", mish, DTM_FLOAT),
    {"LeakyRelu", leakyrelu_f32, leakyrelu_f64, NULL, DTM_FLOAT, {"alpha"}, {0.01}},
    {"Elu", elu_f32, elu_f64, NULL, DTM_FLOAT, {"alpha"}, {1.0}},
    {"Selu", selu_f32, selu_f64, NULL, DTM_FLOAT, {"alpha", NULL, "gamma"},
     {1.67326319217681884765625, 0, 1.05070102214813232421875}},
    {"Celu", celu_f32, celu_f64, NULL, DTM_FLOAT, {"alpha"}, {1.0}},
    {"HardSigmoid", hardsigmoid_f32, hardsigmoid_f64, NULL, DTM_FLOAT, {"alpha", "beta"},
     {0.2, 0.5}},
    {"ThresholdedRelu", thresholdedrelu_f32, thresholdedrelu_f64, NULL, DTM_FLOAT, {"alpha"},
     {1.0}},
    {"Shrink", shrink_f32, shrink_f64, NULL, DTM_NUM, {NULL, "bias", "lambd"}, {0, 0, 0.5}},
};

static const struct unary_op *find_op(const char *name) {
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(ops[i].op, name)) return &ops[i];
  return NULL;
}

static loom_status k_unary(const struct loom_kcall *c) {
  const struct unary_op *u = find_op(c->op);
  LOOM_ASSERT(u);
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  if (!st) st = loom_k_dtype(c, x, "input", u->types);
  if (!st) st = loom_k_same_dtype(c, x, y, "the output");
  if (!st) st = loom_k_out_like(c, y, x);
  if (st) return st;
  struct uparam p;
  double *v[3] = {&p.alpha, &p.beta, &p.gamma};
  for (int k = 0; k < 3; k++)
    *v[k] = u->attr[k] ? loom_kattr_float(c, u->attr[k], (float)u->dflt[k]) : u->dflt[k];
  if (!strcmp(c->op, "Celu") && p.alpha == 0)
    return KFAIL(c, LOOM_E_INVALID, "alpha must not be 0");
  int64_t n = loom_kt_numel(x);
  if (x->dtype == LOOM_DT_F32) {
    u->f32(x->data, y->data, n, &p);
  } else if (u->i64 && !loom_dtype_is_float(x->dtype)) {
    for (int64_t i = 0; i < n; i++) loom_kt_set_i64(y, i, u->i64(loom_kt_get_i64(x, i)));
  } else {
    for (int64_t i = 0; i < n; i++) loom_kt_set_f64(y, i, u->f64(loom_kt_get_f64(x, i), &p));
  }
  return LOOM_OK;
}

/* Not: bool to bool. */
static loom_status k_not(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->in[0], "input", DTM(LOOM_DT_BOOL));
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_BOOL));
  if (!st) st = loom_k_out_like(c, &c->out[0], &c->in[0]);
  if (st) return st;
  const uint8_t *x = c->in[0].data;
  uint8_t *y = c->out[0].data;
  for (int64_t i = 0, n = loom_kt_numel(&c->in[0]); i < n; i++) y[i] = !x[i];
  return LOOM_OK;
}

/* IsNaN, IsInf (detect_positive, detect_negative): float to bool. */
static loom_status k_isclass(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  if (!st) st = loom_k_dtype(c, &c->in[0], "input", DTM_FLOAT);
  if (!st) st = loom_k_dtype(c, &c->out[0], "output", DTM(LOOM_DT_BOOL));
  if (!st) st = loom_k_out_like(c, &c->out[0], &c->in[0]);
  if (st) return st;
  int nan = !strcmp(c->op, "IsNaN");
  int pos = loom_kattr_int(c, "detect_positive", 1) != 0;
  int neg = loom_kattr_int(c, "detect_negative", 1) != 0;
  uint8_t *y = c->out[0].data;
  for (int64_t i = 0, n = loom_kt_numel(&c->in[0]); i < n; i++) {
    double v = loom_kt_get_f64(&c->in[0], i);
    y[i] = nan ? isnan(v) != 0 : isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
  }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_unary[] = {
    {"Abs", k_unary, 0, NULL},        {"Neg", k_unary, 0, NULL},         {"Sign", k_unary, 0, NULL},
    {"Exp", k_unary, 0, NULL},        {"Log", k_unary, 0, NULL},         {"Sqrt", k_unary, 0, NULL},
    {"Reciprocal", k_unary, 0, NULL}, {"Floor", k_unary, 0, NULL},       {"Ceil", k_unary, 0, NULL},
    {"Round", k_unary, 0, NULL},      {"Sin", k_unary, 0, NULL},         {"Cos", k_unary, 0, NULL},
    {"Tan", k_unary, 0, NULL},        {"Asin", k_unary, 0, NULL},        {"Acos", k_unary, 0, NULL},
    {"Atan", k_unary, 0, NULL},       {"Sinh", k_unary, 0, NULL},        {"Cosh", k_unary, 0, NULL},
    {"Asinh", k_unary, 0, NULL},      {"Acosh", k_unary, 0, NULL},       {"Atanh", k_unary, 0, NULL},
    {"Erf", k_unary, 0, NULL},        {"Relu", k_unary, 0, NULL},        {"Sigmoid", k_unary, 0, NULL},
    {"Tanh", k_unary, 0, NULL},       {"Softsign", k_unary, 0, NULL},    {"Softplus", k_unary, 0, NULL},
    {"HardSwish", k_unary, 0, NULL},  {"Mish", k_unary, 0, NULL},        {"LeakyRelu", k_unary, 0, NULL},
    {"Elu", k_unary, 0, NULL},        {"Selu", k_unary, 0, NULL},        {"Celu", k_unary, 0, NULL},
    {"HardSigmoid", k_unary, 0, NULL}, {"ThresholdedRelu", k_unary, 0, NULL}, {"Shrink", k_unary, 0, NULL},
    {"Not", k_not, 0, NULL},          {"IsNaN", k_isclass, 0, NULL},     {"IsInf", k_isclass, 0, NULL},
    {NULL, NULL, 0, NULL},
};
