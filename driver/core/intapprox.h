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
 *                to the int8 range of s_y, z_y; docs/quantization.md);
 *                masked (loom_isoftmax_masked_rows), the same against
 *                float softmax(s_x (x - z_x) + mask) when each live
 *                mask is 0 or shared by all live positions, plus the
 *                rounding of other masks to steps of s_x
 *                (tests/unit/test_qsoftmax.c)
 *   loom_ilayernorm: |y - z_y - v / s_y| <= 1/2 + 2^-15 + G 2^-20 output
 *                steps (v: float LayerNorm of the dequantized row with the
 *                float gamma and beta, clamped to the int8 range of s_y,
 *                z_y; G = max |gamma_c| / s_y; tests/unit/test_qlayernorm.c)
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
  int64_t mask_mult;   /* with an additive mask: 1/s_x = mask_mult 2^-mask_shift, */
  int32_t mask_shift;  /* 2^30 <= mask_mult < 2^31, shift 0..62; 0, 0: no mask */
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

/* The masked softmax, softmax(s_x x + mask) along a row (BERT's attention:
 * the mask 0 or -10000 per key).  The float mask becomes integer offsets
 * in steps of s_x once per tensor: o = round_half_even(mask / s_x), from
 * the float32's bits and mask_mult (integer only), clamped to +-2^24 (NaN:
 * -2^24).  Per row the codes are u_i = x_i + o_i, except that a position
 * with o_i = -2^24 (mask <= about -2^24 s_x: -inf, NaN, -1e9; not BERT's
 * -10000 unless s_x < 6e-4) is excluded: u_i = -2^24 - 128, below every
 * other code and independent of x_i, as float32 absorbs a score into a
 * mask that large.  Then as the unmasked row with m = max u and e_i =
 * loom_iexp(u_i - m) for every k = m - u_i >= 0 (the table below 256, the
 * exp itself up to k_zero = ceil(33 q_ln2 / 2^up), 0 beyond, where the
 * exp's shift z reaches 33 and it is 0 anyway).  The row's maximum has e =
 * T[0] >= 1, so S >= 1: a row whose positions are all excluded gives
 * every position e = T[0], i.e. 1/len (float32 with masks of -3.4e38
 * gives the same; with -inf it gives NaN).  A row whose positions all
 * carry one finite mask gives the unmasked softmax, as float does. */
#define LOOM_ISOFTMAX_MASK_LIMIT (INT32_C(1) << 24)
/* Sets s's mask_mult and mask_shift for input scale in_scale (-1 when it
 * is out of loom_iexp_init's range). */
int loom_isoftmax_mask_init(double in_scale, struct loom_isoftmax *s);
/* o for one mask value, -2^24..2^24 (s has mask constants). */
int32_t loom_isoftmax_offset(const struct loom_isoftmax *s, float mask);
/* rows rows as loom_isoftmax_rows, row r adding the offsets (of len)
 * at off + ((r / group) % mask_rows) * len: a mask of mask_rows rows
 * broadcast over the scores' rows in groups of group (BERT's [1, 1, 1, S]:
 * 1 row; [B, 1, 1, S] over [B, H, S, S]: B rows, group H S; [1, 1, S, S]:
 * S rows, group 1). */
void loom_isoftmax_masked_rows(const struct loom_isoftmax *s, const int8_t *x, int64_t x_pitch, int8_t *y,
                               int64_t y_pitch, int64_t rows, int64_t len, const int32_t *off, int64_t mask_rows,
                               int64_t group);

/* LayerNorm of int8 codes along a row, int8 codes out, per-channel gamma
 * and beta (the host op QLAYERNORM, hostops_qlayernorm.c, and the
 * reference interpreter's int8 LayerNormalization).  With d_i = q_i - z_x
 * and N the row length, the float LayerNorm is, in output steps,
 *
 *   y_i = G_i (N d_i - S1) / sqrt(V + E N^2) + B_i,
 *   S1 = sum d, V = N sum d^2 - S1^2 (exact, >= 0), E = eps / s_x^2,
 *   G_i = gamma_i / s_y, B_i = beta_i / s_y,
 *
 * so per row: S1 and sum d^2 in 32 bits, V in int64; W = V 2^F +
 * eps_fp, eps_fp the compiler's round(E N^2 2^F) (epsilon folded into the
 * integer domain once, for the row length; F even, as large as W < 2^62
 * allows); W shifted up by 2a
 * bits into [2^60, 2^62), R = loom_isqrt of that (2^30 <= R < 2^31) and
 * one integer reciprocal I = floor(2^62 / R), so 1 / sqrt(V + E N^2) =
 * I 2^(F/2 + a - 62); z_i = (N d_i - S1) I rounded to 2^-22 steps (|z_i| <=
 * sqrt N); t_i = g_i z_i rounded to 2^-16 steps plus b_i, where g_i =
 * round(G_i 2^gshift) and b_i = round(B_i 2^16) are the int32 constants;
 * y_i = clamp(round_half_even(t_i / 2^16) + z_y, -128, 127).  A constant
 * row (V = 0) gives z = 0: y = beta, whatever eps.  Nothing overflows for
 * rows of up to 2^16 values: V < 2^16 N^2, |N d_i - S1| I < 2^57, |g_i z_i|
 * < 2^62.  The error besides the output's rounding: I is within 2^-29
 * (relative) of the exact reciprocal square root, z's rounding 2^-23,
 * g_i's 2^-30 G, t's and b_i's 2^-17 each. */
#define LOOM_ILAYERNORM_MAX_ROW (INT64_C(1) << 16)
#define LOOM_ILAYERNORM_Z_BITS 22   /* z_i's fraction bits */
#define LOOM_ILAYERNORM_T_BITS 16   /* t_i's and b_i's fraction bits */
struct loom_ilayernorm {
  int64_t len;          /* N, 1..LOOM_ILAYERNORM_MAX_ROW */
  int32_t frac;         /* F: even, 0..loom_ilayernorm_frac(N) */
  int64_t eps;          /* round(eps / s_x^2 N^2 2^F), 0..2^61 */
  int32_t gshift;       /* G_i = g_i 2^-gshift, -6..40 */
  int32_t in_zp, out_zp;
  const int32_t *gamma; /* g_i, len values */
  const int32_t *beta;  /* b_i, len values */
};
/* The largest F rows of len values allow: even, 16 + 2 ceil(log2 len) + F
 * <= 61, at most 44. */
int32_t loom_ilayernorm_frac(int64_t len);
/* The constants for rows of len values of (s_x, z_x) to (s_y, z_y):
 * gamma[n_gamma] and beta[n_beta] (n 1 or len: broadcast; beta may be
 * NULL: 0) into g[len] and b[len], which *l points at.  -1 when a scale,
 * zero point, eps (>= 0) or len is out of range, E N^2 2^F reaches 2^61,
 * max |gamma| / s_y reaches 2^36 or |beta| / s_y 2^15. */
int loom_ilayernorm_init(double in_scale, int32_t in_zp, double out_scale, int32_t out_zp, double eps, int64_t len,
                         const float *gamma, int64_t n_gamma, const float *beta, int64_t n_beta, int32_t *g,
                         int32_t *b, struct loom_ilayernorm *l);
/* NULL when l's constants are within the limits above, else what is wrong. */
const char *loom_ilayernorm_check(const struct loom_ilayernorm *l);
/* rows rows of l->len codes, row r at x + r * x_pitch and y + r * y_pitch
 * (pitches >= len; y may alias x). */
void loom_ilayernorm_rows(const struct loom_ilayernorm *l, const int8_t *x, int64_t x_pitch, int8_t *y,
                          int64_t y_pitch, int64_t rows);

/* floor(sqrt(n)) by Newton steps from a power of two above the root. */
uint32_t loom_isqrt(uint64_t n);

#endif
