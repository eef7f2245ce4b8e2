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

int loom_isoftmax_init(double in_scale, double out_scale, int32_t out_zp, struct loom_isoftmax *s) {
  if (loom_iexp_init(in_scale, &s->e) || !isfinite(out_scale) || out_scale <= 0 || out_zp < -128 || out_zp > 127)
    return -1;
  int ex;
  double m = frexp(1.0 / out_scale, &ex); /* 1/s_y = m 2^ex, m in [0.5, 1) */
  s->mult = (int64_t)llround(ldexp(m, 31));
  if (s->mult == INT64_C(1) << 31) s->mult >>= 1, ex++;
  s->shift = 31 - ex + 31;
  s->out_zp = out_zp;
  return loom_isoftmax_check(s) ? -1 : 0;
}

const char *loom_isoftmax_check(const struct loom_isoftmax *s) {
  const struct loom_iexp *e = &s->e;
  if (e->up > 22) return "exp's up-shift is above 22"; /* 255 * 2^up < 2^31 */
  if (e->q_ln2 < 1 || e->q_ln2 > (1 << 15) || e->q_b < 0 || e->q_b > (1 << 15) || e->q_c < 0 || e->q_c > (1 << 30))
    return "exp's constants are out of range (ln 2 and b in 1..2^15, c in 0..2^30)";
  if (e->q_b * e->q_b + e->q_c < 1) return "exp(0) is 0";
  if (s->mult < (INT64_C(1) << 30) || s->mult >= (INT64_C(1) << 31) || s->shift < 39 || s->shift > 62)
    return "the output multiplier is out of range (2^30..2^31-1, shift 39..62)";
  if (s->out_zp < -128 || s->out_zp > 127) return "the output zero point is not an int8 value";
  return NULL;
}

void loom_isoftmax_table(const struct loom_isoftmax *s, int64_t table[256]) {
  for (int k = 0; k < 256; k++) table[k] = loom_iexp(&s->e, -k);
}

void loom_isoftmax_row(const struct loom_isoftmax *s, const int64_t table[256], const int8_t *x, int8_t *y,
                       int64_t len) {
  LOOM_ASSERT(len >= 1 && len <= LOOM_ISOFTMAX_MAX_ROW);
  int m = x[0];
  for (int64_t i = 1; i < len; i++) m = x[i] > m ? x[i] : m;
  uint64_t sum = 0;
  for (int64_t i = 0; i < len; i++) sum += (uint64_t)table[m - x[i]];
  uint64_t rm = ((uint64_t)s->mult << 32) / sum; /* the row's reciprocal, times 1/s_y */
  int k = s->shift + 1;
  uint64_t half_less = (UINT64_C(1) << (k - 1)) - 1;
  for (int64_t i = 0; i < len; i++) {
    /* v / 2^k rounded half to even without a branch: v + 2^(k-1) - 1,
     * plus 1 when the quotient is odd, then the shift */
    uint64_t v = (uint64_t)table[m - x[i]] * rm;
    int64_t q = (int64_t)((v + half_less + ((v >> k) & 1)) >> k) + s->out_zp;
    q = q < -128 ? -128 : q;
    y[i] = (int8_t)(q > 127 ? 127 : q);
  }
}

void loom_isoftmax_rows(const struct loom_isoftmax *s, const int8_t *x, int64_t x_pitch, int8_t *y, int64_t y_pitch,
                        int64_t rows, int64_t len) {
  int64_t table[256];
  loom_isoftmax_table(s, table);
  for (int64_t r = 0; r < rows; r++) loom_isoftmax_row(s, table, x + r * x_pitch, y + r * y_pitch, len);
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
