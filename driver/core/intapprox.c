/*
 * intapprox.c - integer-only exp, GELU and square root (intapprox.h).
 *
 * The *_init functions turn a scale into integer constants with floats,
 * once, at compile time; the evaluators use integers only.  Each starts by
 * shifting the input up (q * 2^up) until the polynomial's breakpoint (ln 2
 * for exp, erf's clip point 1.769 for GELU) is at least 2^10 steps of the
 * shifted scale s' = scale / 2^up: the floors of the constants then cost at
 * most about 2^-10 of the result, whatever the int8 input's scale was (an
 * int8 softmax input has a step near 0.1, where ln 2 alone would be 6
 * steps).  Intermediates are int64: with |q| 2^up < 2^31 nothing overflows.
 */
#include "driver/core/intapprox.h"

#include <math.h>

#include "driver/core/core.h"

#define FINE_STEPS 1024.0 /* the breakpoint in steps of s', at least */
#define EXP_A 0.3585      /* exp(p) ~ A (p + B)^2 + C on (-ln 2, 0] */
#define EXP_B 1.353
#define EXP_C 0.344
#define ERF_A (-0.2888)   /* erf(x) ~ sgn(x) (A (min(|x|, -B) + B)^2 + 1) */
#define ERF_B (-1.769)

/* The smallest up with breakpoint / (scale / 2^up) >= FINE_STEPS. */
static uint32_t up_shift(double scale, double breakpoint) {
  uint32_t up = 0;
  while (breakpoint / ldexp(scale, -(int)up) < FINE_STEPS) up++;
  return up;
}

static int scale_ok(double scale) {
  return isfinite(scale) && scale >= 1e-9 && scale < 1048576.0;
}

int loom_iexp_init(double scale, struct loom_iexp *e) {
  if (!scale_ok(scale)) return -1;
  e->up = up_shift(scale, M_LN2);
  double s = ldexp(scale, -(int)e->up);
  e->q_ln2 = (int64_t)floor(M_LN2 / s);
  e->q_b = (int64_t)floor(EXP_B / s);
  e->q_c = (int64_t)floor(EXP_C / (EXP_A * s * s));
  e->out_scale = EXP_A * s * s;
  return 0;
}

/* x = -z ln 2 + p with p in (-ln 2, 0]: exp(x) = exp(p) / 2^z. */
int64_t loom_iexp(const struct loom_iexp *e, int64_t q) {
  if (q > 0) q = 0;
  LOOM_ASSERT(-q < (INT64_C(1) << 31) >> e->up || q == 0);
  int64_t qs = q * (INT64_C(1) << e->up);
  int64_t z = -qs / e->q_ln2, qp = qs + z * e->q_ln2, t = qp + e->q_b;
  if (z >= 62) return 0;
  return (t * t + e->q_c) >> z;
}

int loom_igelu_init(double scale, struct loom_igelu *g) {
  if (!scale_ok(scale)) return -1;
  g->up = up_shift(scale / M_SQRT2, -ERF_B);
  double s = ldexp(scale, -(int)g->up), se = s / M_SQRT2, sl = ERF_A * se * se;
  g->q_b = (int64_t)floor(ERF_B / se);
  g->q_c = (int64_t)floor(1.0 / sl);
  g->out_scale = s * sl / 2.0;
  return 0;
}

/* gelu(x) = x (1 + erf(x / sqrt 2)) / 2, erf's fit in steps of s_L. */
int64_t loom_igelu(const struct loom_igelu *g, int64_t q) {
  int64_t qs = q * (INT64_C(1) << g->up);
  LOOM_ASSERT(qs < (INT64_C(1) << 31) && qs > -(INT64_C(1) << 31));
  int64_t mag = qs < 0 ? -qs : qs, clip = -g->q_b;
  if (mag > clip) mag = clip;
  int64_t t = mag + g->q_b, l = t * t + g->q_c;
  if (qs < 0) l = -l;
  if (qs == 0) l = 0;
  return qs * (l + g->q_c); /* 1 + erf: the 1 is q_c steps of s_L too */
}

uint32_t loom_isqrt(uint64_t n) {
  if (n < 2) return (uint32_t)n;
  int bits = 64 - __builtin_clzll(n);
  uint64_t x = UINT64_C(1) << ((bits + 1) / 2); /* above the root */
  for (;;) {
    uint64_t y = (x + n / x) / 2;
    if (y >= x) return (uint32_t)x;
    x = y;
  }
}
