/*
 * intapprox.h - integer-only approximations of the transcendental steps of
 * a transformer (softmax's exp, GELU's erf, LayerNorm's square root), for
 * int8 lowerings that must not leave integer arithmetic.
 *
 * Each function takes quantized integers and constants that the compiler
 * computes once from the scales (the *_init functions, which use floats);
 * evaluating them is integer arithmetic only (adds, multiplies, shifts, one
 * integer division by a constant), so fsim, an RTL unit or a host kernel can
 * implement it bit for bit.  The exp and erf polynomials are I-BERT's
 * (Kim et al., 2021): second-order fits on a reduced range.  The bounds
 * below are checked over every int8 input and a sweep of scales by
 * tests/unit/test_intapprox.c:
 *
 *   loom_iexp:   |exp(x) - y|      <= 2.2e-3 + 2 * 2^-10   (x <= 0; y <= 1)
 *   loom_igelu:  |gelu(x) - y|     <= 1.9e-2 + 2^-8 * |x|
 *   loom_isqrt:  exactly floor(sqrt(n)) for every uint64 n
 *   loom_isoftmax: |s_y (y - z_y) - p| <= s_y / 2 + 1.7e-2 p + 2^-30 for each
 *                output (p: float softmax of the dequantized row, clamped
 *                to the int8 range of s_y, z_y; docs/quantization.md)
 *
 * The 2^-10 terms are the internal fixed point: the input is shifted up
 * until ln 2 (exp) or the erf clip point (GELU) is at least 2^10 steps, so
 * the floors of the constants cost at most that much; the rest is the
 * polynomial's own error against float (0.00213 for exp on [-ln 2, 0],
 * 0.0182 for x * erf's fit on the whole line).
 */
#ifndef LOOM_CORE_INTAPPROX_H
#define LOOM_CORE_INTAPPROX_H

#include <stdint.h>

/* exp(q * scale) for q <= 0: y * out_scale. */
struct loom_iexp {
  uint32_t up;        /* q is shifted up by this many bits first */
  int64_t q_ln2;      /* floor(ln 2 / s'), s' = scale / 2^up */
  int64_t q_b, q_c;   /* floor(1.353 / s'), floor(0.344 / (0.3585 s'^2)) */
  double out_scale;   /* 0.3585 s'^2 */
};
/* -1 when scale is not a positive finite number below 2^20. */
int loom_iexp_init(double scale, struct loom_iexp *e);
/* q <= 0 (positive q is clamped to 0), |q| 2^up < 2^31; the result is >= 0. */
int64_t loom_iexp(const struct loom_iexp *e, int64_t q);

/* gelu(q * scale) = x / 2 * (1 + erf(x / sqrt 2)): y * out_scale. */
struct loom_igelu {
  uint32_t up;        /* q is shifted up by this many bits first */
  int64_t q_b;        /* floor(-1.769 / s_e), s_e = s' / sqrt 2, negative */
  int64_t q_c;        /* floor(1 / s_L), s_L = -0.2888 s_e^2: the 1 in steps of s_L, negative */
  double out_scale;   /* s' * s_L / 2 */
};
int loom_igelu_init(double scale, struct loom_igelu *g);
/* |q| 2^up < 2^31 (every int8 q for scales down to 2^-20). */
int64_t loom_igelu(const struct loom_igelu *g, int64_t q);

/* Softmax of int8 codes along a row, int8 codes out (the host op
 * QSOFTMAX, hostops_qsoftmax.c, and the reference interpreter's int8
 * Softmax).  Per row: m = max q; e_i = T[m - q_i], T[k] = loom_iexp(-k)
 * (a 256-entry table, built once per tensor); S = sum e_i; R =
 * floor(mult 2^32 / S), the one integer reciprocal (with 1/s_y folded in);
 * y_i = clamp(round_half_even(e_i R / 2^(shift + 1)) + z_y, -128, 127),
 * where 1/s_y = mult 2^(31 - shift).  Nothing overflows: table entries are
 * below 2^33 (loom_isoftmax_check's limits), so S < 2^61 for rows of up
 * to 2^28 values, and e_i <= S makes e_i R <= mult 2^32 < 2^63.  The floor
 * of R costs at most e_i / 2^(shift + 1) <= 2^-7 of an output step, which
 * is why s_y is at least 2^-22 (shift >= 39). */
struct loom_isoftmax {
  struct loom_iexp e;  /* exp of the input's scale (out_scale unused: it cancels) */
  int64_t mult;        /* 1/s_y = mult 2^(31 - shift), 2^30 <= mult < 2^31 */
  int32_t shift;       /* 39..62 */
  int32_t out_zp;      /* -128..127 */
};
#define LOOM_ISOFTMAX_MAX_ROW (INT64_C(1) << 28)
/* -1 when a scale is out of range (input: loom_iexp_init's and a shift of
 * at most 22; output: 2^-22 <= s_y <= 2) or zp is not int8. */
int loom_isoftmax_init(double in_scale, double out_scale, int32_t out_zp, struct loom_isoftmax *s);
/* NULL when s's integer constants are within the limits above (a file's
 * parameters are checked with it), else what is wrong. */
const char *loom_isoftmax_check(const struct loom_isoftmax *s);
/* T[k] = exp(-k in steps of the input scale), k = 0..255. */
void loom_isoftmax_table(const struct loom_isoftmax *s, int64_t table[256]);
/* One row of len (1..LOOM_ISOFTMAX_MAX_ROW) codes: y may alias x. */
void loom_isoftmax_row(const struct loom_isoftmax *s, const int64_t table[256], const int8_t *x, int8_t *y,
                       int64_t len);
/* rows rows of len codes, row r at x + r * x_pitch and y + r * y_pitch
 * (pitches >= len; y may alias x), with one table for all of them. */
void loom_isoftmax_rows(const struct loom_isoftmax *s, const int8_t *x, int64_t x_pitch, int8_t *y, int64_t y_pitch,
                        int64_t rows, int64_t len);

/* floor(sqrt(n)) by Newton steps from a power of two above the root. */
uint32_t loom_isqrt(uint64_t n);

#endif
