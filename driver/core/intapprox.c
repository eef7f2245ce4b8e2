/*
 * intapprox.c - integer-only exp, GELU, square root, softmax and LayerNorm
 * (intapprox.h).
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
#include <string.h>

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
  s->mask_mult = 0, s->mask_shift = 0; /* loom_isoftmax_mask_init's */
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
  if ((s->mask_mult || s->mask_shift) && (s->mask_mult < (INT64_C(1) << 30) || s->mask_mult >= (INT64_C(1) << 31) ||
                                          s->mask_shift < 0 || s->mask_shift > 62))
    return "the mask's multiplier is out of range (2^30..2^31-1, shift 0..62)";
  return NULL;
}

/* loom_iexp(-k) for k = 0..255 without a division each: z = floor(k 2^up
 * / q_ln2) and its remainder r advance by the quotient and remainder of
 * 2^up / q_ln2, and loom_iexp's p is -r. */
void loom_isoftmax_table(const struct loom_isoftmax *s, int64_t table[256]) {
  const struct loom_iexp *e = &s->e;
  LOOM_ASSERT(e->up <= 22 && e->q_ln2 >= 1); /* loom_isoftmax_check's limits: 255 2^up < 2^31 */
  const int64_t step = INT64_C(1) << e->up, dz = step / e->q_ln2, dr = step % e->q_ln2;
  int64_t z = 0, r = 0;
  for (int k = 0; k < 256; k++) {
    int64_t t = e->q_b - r;
    table[k] = z >= 62 ? 0 : (t * t + e->q_c) >> z;
    z += dz, r += dr;
    if (r >= e->q_ln2) r -= e->q_ln2, z++;
  }
}

/* An output code of the softmax: v / 2^k rounded half to even without a
 * branch (v + 2^(k-1) - 1, plus 1 when the quotient is odd, then the
 * shift), plus the zero point, clamped. */
static inline int8_t isoftmax_code(uint64_t v, int k, uint64_t half_less, int32_t zp) {
  int64_t q = (int64_t)((v + half_less + ((v >> k) & 1)) >> k) + zp;
  q = q < -128 ? -128 : q;
  return (int8_t)(q > 127 ? 127 : q);
}

/* The output code of e_i, given the row's reciprocal rm (the masked rows). */
static inline int8_t out_code(const struct loom_isoftmax *s, uint64_t e, uint64_t rm, int k, uint64_t half_less) {
  return isoftmax_code(e * rm, k, half_less, s->out_zp);
}

/* The row's exps are gathered once into a local array (a chunk of it at
 * a time for rows longer than the array), the sum and the outputs computed
 * from that array: loops the compiler vectorizes, as the int8 stores can
 * alias neither the array nor the constants held in locals. */
#define SOFTMAX_CHUNK 256
LOOM_TARGET_CLONES void loom_isoftmax_row(const struct loom_isoftmax *s, const int64_t table[256], const int8_t *x,
                                          int8_t *y, int64_t len) {
  LOOM_ASSERT(len >= 1 && len <= LOOM_ISOFTMAX_MAX_ROW);
  const int k = s->shift + 1;
  const int32_t zp = s->out_zp;
  const uint64_t half_less = (UINT64_C(1) << (k - 1)) - 1;
  int m = x[0];
  for (int64_t i = 1; i < len; i++) m = x[i] > m ? x[i] : m;
  uint64_t e[SOFTMAX_CHUNK], sum = 0;
  const int head = len < SOFTMAX_CHUNK ? (int)len : SOFTMAX_CHUNK;
  for (int j = 0; j < head; j++) e[j] = (uint64_t)table[m - x[j]];
  for (int j = 0; j < head; j++) sum += e[j];
  for (int64_t i = head; i < len; i++) sum += (uint64_t)table[m - x[i]];
  const uint64_t rm = ((uint64_t)s->mult << 32) / sum; /* the row's reciprocal, times 1/s_y */
  for (int64_t i = 0; i < len; i += SOFTMAX_CHUNK) {
    int c = len - i < SOFTMAX_CHUNK ? (int)(len - i) : SOFTMAX_CHUNK;
    if (i) /* the first chunk's exps are in e already */
      for (int j = 0; j < c; j++) e[j] = (uint64_t)table[m - x[i + j]];
    for (int j = 0; j < c; j++) y[i + j] = isoftmax_code(e[j] * rm, k, half_less, zp);
  }
}

void loom_isoftmax_rows(const struct loom_isoftmax *s, const int8_t *x, int64_t x_pitch, int8_t *y, int64_t y_pitch,
                        int64_t rows, int64_t len) {
  int64_t table[256];
  loom_isoftmax_table(s, table);
  for (int64_t r = 0; r < rows; r++) loom_isoftmax_row(s, table, x + r * x_pitch, y + r * y_pitch, len);
}

int loom_isoftmax_mask_init(double in_scale, struct loom_isoftmax *s) {
  if (!scale_ok(in_scale)) return -1;
  int ex;
  double m = frexp(1.0 / in_scale, &ex); /* 1/s_x = m 2^ex, m in [0.5, 1), ex in -19..30 */
  s->mask_mult = (int64_t)llround(ldexp(m, 31));
  if (s->mask_mult == INT64_C(1) << 31) s->mask_mult >>= 1, ex++;
  s->mask_shift = 31 - ex;
  return loom_isoftmax_check(s) ? -1 : 0;
}

/* |mask| = man 2^(ex - 150) (a normal float32; a subnormal's ex is 1), so
 * |mask| / s_x = man mask_mult / 2^sh, sh = mask_shift + 150 - ex, and
 * man mask_mult < 2^55. */
int32_t loom_isoftmax_offset(const struct loom_isoftmax *s, float mask) {
  uint32_t b;
  memcpy(&b, &mask, sizeof b);
  int neg = (int)(b >> 31), ex = (int)(b >> 23 & 0xff);
  uint64_t man = b & 0x7fffff, q;
  if (ex == 0xff) return man || neg ? -LOOM_ISOFTMAX_MASK_LIMIT : LOOM_ISOFTMAX_MASK_LIMIT; /* NaN, -inf; +inf */
  if (ex) man |= UINT64_C(1) << 23;
  else ex = 1;
  uint64_t v = man * (uint64_t)s->mask_mult;
  int sh = s->mask_shift + 150 - ex;
  if (sh <= 0) q = v ? LOOM_ISOFTMAX_MASK_LIMIT : 0; /* v 2^-sh >= 2^30 */
  else if (sh > 56) q = 0;                          /* v / 2^sh < 1/2 */
  else {
    q = v >> sh;
    uint64_t rem = v & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
    q += rem > half || (rem == half && (q & 1));
  }
  q = q > LOOM_ISOFTMAX_MASK_LIMIT ? LOOM_ISOFTMAX_MASK_LIMIT : q;
  return neg ? -(int32_t)q : (int32_t)q;
}

/* The masked code u_i (loom_isoftmax_masked_rows). */
static inline int32_t masked_code(int8_t x, int32_t o) {
  return o <= -LOOM_ISOFTMAX_MASK_LIMIT ? -LOOM_ISOFTMAX_MASK_LIMIT - 128 : x + o;
}

/* loom_iexp(-k) for any k >= 0: the table, the exp, or 0 from k_zero on. */
static inline uint64_t exp_of(const struct loom_isoftmax *s, const int64_t table[256], int64_t k, int64_t k_zero) {
  return (uint64_t)(k < 256 ? table[k] : k < k_zero ? loom_iexp(&s->e, -k) : 0);
}

static void masked_row(const struct loom_isoftmax *s, const int64_t table[256], int64_t k_zero, const int8_t *x,
                       const int32_t *off, int8_t *y, int64_t len) {
  int32_t m = masked_code(x[0], off[0]);
  for (int64_t i = 1; i < len; i++) {
    int32_t u = masked_code(x[i], off[i]);
    m = u > m ? u : m;
  }
  uint64_t sum = 0; /* >= T[0] >= 1: the maximum's */
  for (int64_t i = 0; i < len; i++) sum += exp_of(s, table, (int64_t)m - masked_code(x[i], off[i]), k_zero);
  uint64_t rm = ((uint64_t)s->mult << 32) / sum;
  int k = s->shift + 1;
  uint64_t half_less = (UINT64_C(1) << (k - 1)) - 1;
  for (int64_t i = 0; i < len; i++)
    y[i] = out_code(s, exp_of(s, table, (int64_t)m - masked_code(x[i], off[i]), k_zero), rm, k, half_less);
}

void loom_isoftmax_masked_rows(const struct loom_isoftmax *s, const int8_t *x, int64_t x_pitch, int8_t *y,
                               int64_t y_pitch, int64_t rows, int64_t len, const int32_t *off, int64_t mask_rows,
                               int64_t group) {
  LOOM_ASSERT(len >= 1 && len <= LOOM_ISOFTMAX_MAX_ROW && mask_rows >= 1 && group >= 1);
  int64_t table[256];
  loom_isoftmax_table(s, table);
  /* k 2^up >= 33 q_ln2 makes the exp's shift z >= 33, and its t^2 + c < 2^31 */
  int64_t k_zero = (33 * s->e.q_ln2 + (INT64_C(1) << s->e.up) - 1) >> s->e.up;
  for (int64_t r = 0; r < rows; r++)
    masked_row(s, table, k_zero, x + r * x_pitch, off + (r / group) % mask_rows * len, y + r * y_pitch, len);
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

int32_t loom_ilayernorm_frac(int64_t len) {
  int c = 0;
  while (c < 62 && (INT64_C(1) << c) < len) c++;
  int32_t f = 45 - 2 * c;
  f = f > 44 ? 44 : f;
  return f < 0 ? -1 : f & ~1;
}

int loom_ilayernorm_init(double in_scale, int32_t in_zp, double out_scale, int32_t out_zp, double eps, int64_t len,
                         const float *gamma, int64_t n_gamma, const float *beta, int64_t n_beta, int32_t *g,
                         int32_t *b, struct loom_ilayernorm *l) {
  if (!scale_ok(in_scale) || !scale_ok(out_scale) || !isfinite(eps) || eps < 0 || len < 1 ||
      len > LOOM_ILAYERNORM_MAX_ROW || (n_gamma != 1 && n_gamma != len) || (beta && n_beta != 1 && n_beta != len) ||
      in_zp < -128 || in_zp > 127 || out_zp < -128 || out_zp > 127)
    return -1;
  *l = (struct loom_ilayernorm){.len = len, .frac = loom_ilayernorm_frac(len), .in_zp = in_zp, .out_zp = out_zp,
                                .gamma = g, .beta = b};
  double e = ldexp(eps / (in_scale * in_scale) * (double)len * (double)len, l->frac);
  if (!(e < ldexp(1.0, 61))) return -1;
  l->eps = (int64_t)llround(e);
  double gmax = 0;
  for (int64_t i = 0; i < n_gamma; i++) gmax = fmax(gmax, fabs(gamma[i] / out_scale));
  if (!isfinite(gmax)) return -1;
  int ex = 0;
  if (gmax > 0) frexp(gmax, &ex); /* gmax = m 2^ex, m in [1/2, 1): g_i below 2^30 */
  l->gshift = gmax > 0 && 30 - ex < 40 ? 30 - ex : 40;
  if (l->gshift < -6) return -1;
  for (int64_t i = 0; i < len; i++) {
    double gi = gamma[n_gamma == 1 ? 0 : i] / out_scale, bi = beta ? beta[n_beta == 1 ? 0 : i] / out_scale : 0;
    if (!isfinite(gi) || !(fabs(bi) < 32768.0)) return -1;
    g[i] = (int32_t)llround(ldexp(gi, l->gshift));
    b[i] = (int32_t)llround(ldexp(bi, LOOM_ILAYERNORM_T_BITS));
  }
  return loom_ilayernorm_check(l) ? -1 : 0;
}

const char *loom_ilayernorm_check(const struct loom_ilayernorm *l) {
  if (l->len < 1 || l->len > LOOM_ILAYERNORM_MAX_ROW) return "the row length is not 1..65536";
  if (l->frac < 0 || (l->frac & 1) || l->frac > loom_ilayernorm_frac(l->len))
    return "the epsilon's fraction bits are odd or too many for the row length";
  if (l->eps < 0 || l->eps > (INT64_C(1) << 61)) return "the folded epsilon is not 0..2^61";
  if (l->gshift < -6 || l->gshift > 40) return "gamma's shift is not -6..40";
  if (l->in_zp < -128 || l->in_zp > 127 || l->out_zp < -128 || l->out_zp > 127)
    return "a zero point is not an int8 value";
  if (!l->gamma || !l->beta) return "gamma or beta is missing";
  return NULL;
}

/* The row's statistics in 32 bits, which vectorize: |S1| <= 255 N < 2^24
 * and sum d^2 <= 65025 N < 2^32 for N <= 2^16. */
static void ilayernorm_sums(const int8_t *x, int64_t n, int32_t zp, int64_t *s1, int64_t *s2) {
  int32_t a = 0;
  uint32_t b = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t d = x[i] - zp;
    a += d, b += (uint32_t)(d * d);
  }
  *s1 = a, *s2 = b;
}

/* Every shift below is of a non-negative number: each value is biased by
 * 2^62 (|value| < 2^62), whose shifts are exact, and the bias taken off
 * after; the constant parts are folded per row or per call. */
#define BIAS (UINT64_C(1) << 62)

/* z of the code c: ((N I) c + z0) / 2^k less the bias 2^(62-k). */
static inline int64_t iln_z(int64_t zn, uint64_t z0, int k, int64_t zoff, int c) {
  return (int64_t)(((uint64_t)(zn * c) + z0) >> k) - zoff;
}

/* The output code of z with g_i and b_i: t_i + 2^62 + 2^15 - 1 =
 * round(g_i z / 2^kt) + b_i + tk (|g_i z| < 2^62), then u / 2^16 rounded
 * half to even (u holds t + 2^15 - 1, plus 1 when the quotient is odd, as
 * isoftmax_code), plus q0, clamped. */
static inline int8_t iln_code(int64_t z, int32_t g, int32_t b, uint64_t tr, int kt, int64_t tk, int64_t q0) {
  uint64_t u = (uint64_t)((int64_t)((((uint64_t)((int64_t)g * z)) + tr) >> kt) + b + tk);
  int64_t q = (int64_t)((u + ((u >> LOOM_ILAYERNORM_T_BITS) & 1)) >> LOOM_ILAYERNORM_T_BITS) + q0;
  q = q < -128 ? -128 : q;
  return (int8_t)(q > 127 ? 127 : q);
}

/* Built for x86-64-v3 and -v4 besides the baseline (LOOM_TARGET_CLONES):
 * with every constant in a local the element loop has no loads but x, g
 * and b, and AVX-512's 64-bit multiplies vectorize it. */
LOOM_TARGET_CLONES static void ilayernorm_row(const struct loom_ilayernorm *l, const int8_t *x, int8_t *y) {
  /* every constant in a local: the int8 stores could alias *l */
  const int64_t n = l->len;
  int64_t s1, s2;
  ilayernorm_sums(x, n, l->in_zp, &s1, &s2);
  int64_t v = n * s2 - s1 * s1, inv = 0; /* v = N^2 variance of the codes, >= 0 */
  int k = 1;
  if (v > 0) { /* a constant row keeps z = 0 (inv = 0) */
    uint64_t w = ((uint64_t)v << l->frac) + (uint64_t)l->eps; /* below 2^62 */
    int a = (62 - (64 - __builtin_clzll(w))) / 2;            /* w << 2a in [2^60, 2^62) */
    inv = (int64_t)((UINT64_C(1) << 62) / loom_isqrt(w << 2 * a));
    k = 62 - LOOM_ILAYERNORM_Z_BITS - l->frac / 2 - a; /* >= 10: w >= 2^F */
    LOOM_ASSERT(k >= 1);
  }
  /* z_i = round((N d_i - S1) I / 2^k) = ((N I) q_i + z0 + 2^62 + 2^(k-1)) / 2^k - 2^(62-k),
   * |(N d_i - S1) I| < 2^57 */
  const int64_t zn = n * inv, zoff = (int64_t)(BIAS >> k);
  const uint64_t z0 = (uint64_t)(-(s1 + n * l->in_zp) * inv) + BIAS + (UINT64_C(1) << (k - 1));
  const int kt = l->gshift + LOOM_ILAYERNORM_Z_BITS - LOOM_ILAYERNORM_T_BITS;
  const uint64_t tr = BIAS + (kt ? UINT64_C(1) << (kt - 1) : 0);
  const int64_t tk = (int64_t)(BIAS - (BIAS >> kt) + (UINT64_C(1) << (LOOM_ILAYERNORM_T_BITS - 1)) - 1);
  const int64_t q0 = l->out_zp - (int64_t)(BIAS >> LOOM_ILAYERNORM_T_BITS);
  const int32_t *g = l->gamma, *b = l->beta;
  for (int64_t i = 0; i < n; i++) y[i] = iln_code(iln_z(zn, z0, k, zoff, x[i]), g[i], b[i], tr, kt, tk, q0);
}

void loom_ilayernorm_rows(const struct loom_ilayernorm *l, const int8_t *x, int64_t x_pitch, int8_t *y,
                          int64_t y_pitch, int64_t rows) {
  for (int64_t r = 0; r < rows; r++) ilayernorm_row(l, x + r * x_pitch, y + r * y_pitch);
}
