/*
 * test_introws.c - the fast row loops of the int8 softmax, the masked
 * softmax and LayerNorm (intapprox.c's loom_isoftmax_rows,
 * loom_isoftmax_masked_rows and loom_ilayernorm_rows: constants
 * in locals, the softmax's exps gathered into a local array a chunk of 256
 * at a time, the exp table built without divisions, each built for
 * x86-64-v3/v4 besides the baseline) against plain reference loops kept
 * here, output for output.  The references are the straightforward
 * scalar forms of the formulas intapprox.h states (per element: the table or z from the
 * code, the 64-bit multiply-shifts, round half to even by an explicit
 * remainder, clamp), so any change to the fast loops' results fails here,
 * whether the bound tests (test_qsoftmax.c, test_qlayernorm.c) would notice
 * it or not.
 *
 * Rows: lengths 1 to 300 (every one) and 511, 768, 1000, 4099 (one, two
 * and more softmax chunks); codes uniform over all 256 values, narrow
 * bells of a few values around a random centre, constant rows, and rows of
 * -128 and 127 only; seeded constants over a sweep of scales, zero
 * points, eps and gamma ranges; several rows per call with
 * pitches above the length, and in place (y = x).  Masked rows: masks of
 * 2 rows broadcast in groups of 1 or 2, offsets from 0, -10000, -inf,
 * NaN, -1e9, -3.4e38, +inf, a few steps either way and up to 600 steps
 * down (the exps past the table that the fast loop hands to the scalar
 * one), mixed, and rows whose tail or all is excluded.  The test runs the
 * clone the CPU picks; under `make SAN=1` (no clones, core.h) it runs the
 * baseline loops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/intapprox.h"

#define MAX_LEN 4099
#define ROWS 3
#define PITCH_PAD 5

static uint32_t rng = 777;
static uint32_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
  return rng;
}

/* Codes of kind k: uniform; a bell of width 1..9 around a random centre;
 * constant; -128/127 at random. */
static void fill(int8_t *x, int64_t n, int k) {
  int c = (int)(next() % 256) - 128, w = 1 + (int)(next() % 9);
  for (int64_t i = 0; i < n; i++) {
    int v = k == 0 ? (int)(next() % 256) - 128
          : k == 1 ? c + (int)(next() % (uint32_t)(2 * w + 1)) - w
          : k == 2 ? c : next() & 1 ? 127 : -128;
    x[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
  }
}

/* round_half_even(v / 2^k) for v >= 0 by its remainder. */
static uint64_t round_even(uint64_t v, int k) {
  uint64_t q = v >> k, rem = v - (q << k), half = UINT64_C(1) << (k - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

static int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }

/* intapprox.h's softmax, per element. */
static void ref_softmax(const struct loom_isoftmax *s, const int8_t *x, int8_t *y, int64_t len) {
  int64_t t[256];
  int m = -128;
  uint64_t sum = 0;
  for (int k = 0; k < 256; k++) t[k] = loom_iexp(&s->e, -k);
  for (int64_t i = 0; i < len; i++) m = x[i] > m ? x[i] : m;
  for (int64_t i = 0; i < len; i++) sum += (uint64_t)t[m - x[i]];
  uint64_t r = ((uint64_t)s->mult << 32) / sum;
  for (int64_t i = 0; i < len; i++) y[i] = clamp8((int64_t)round_even((uint64_t)t[m - x[i]] * r, s->shift + 1) + s->out_zp);
}

/* Floor division by 2^k of a signed value, without shifting a negative. */
static int64_t floor_shift(int64_t v, int k) {
  return v >= 0 ? v / (INT64_C(1) << k) : -((-v + (INT64_C(1) << k) - 1) / (INT64_C(1) << k));
}

/* round_half_even(v / 2^k) of a signed value, k >= 1. */
static int64_t round_even_signed(int64_t v, int k) {
  int64_t q = floor_shift(v, k), rem = v - q * (INT64_C(1) << k), half = INT64_C(1) << (k - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

/* intapprox.h's LayerNorm, per element: z_i = round((N d_i - S1) I /
 * 2^k) half up, t_i = round(g_i z_i / 2^kt) half up + b_i, y_i =
 * round_half_even(t_i / 2^16) + z_y, clamped. */
static void ref_layernorm(const struct loom_ilayernorm *l, const int8_t *x, int8_t *y) {
  int64_t n = l->len, s1 = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) s1 += x[i] - l->in_zp, s2 += (int64_t)(x[i] - l->in_zp) * (x[i] - l->in_zp);
  int64_t v = n * s2 - s1 * s1, inv = 0;
  int k = 1;
  if (v > 0) {
    uint64_t w = ((uint64_t)v << l->frac) + (uint64_t)l->eps;
    int a = 0;
    while ((w << 2 * a) < (UINT64_C(1) << 60)) a++; /* into [2^60, 2^62) */
    inv = (int64_t)((UINT64_C(1) << 62) / loom_isqrt(w << 2 * a));
    k = 62 - LOOM_ILAYERNORM_Z_BITS - l->frac / 2 - a;
  }
  int kt = l->gshift + LOOM_ILAYERNORM_Z_BITS - LOOM_ILAYERNORM_T_BITS;
  for (int64_t i = 0; i < n; i++) {
    int64_t z = floor_shift((n * (x[i] - l->in_zp) - s1) * inv + (INT64_C(1) << (k - 1)), k);
    int64_t gz = (int64_t)l->gamma[i] * z;
    int64_t t = (kt ? floor_shift(gz + (INT64_C(1) << (kt - 1)), kt) : gz) + l->beta[i];
    y[i] = clamp8(round_even_signed(t, LOOM_ILAYERNORM_T_BITS) + l->out_zp);
  }
}

static const int64_t extra_lens[] = {511, 768, 1000, 4099};

/* Every length, row kind and layout for one set of constants; run(x, px,
 * y, py, rows, len) the fast loop, ref(x, y, len) the reference. */
static long sweep(const void *c, void (*run)(const void *, const int8_t *, int64_t, int8_t *, int64_t, int64_t, int64_t),
                  void (*ref)(const void *, const int8_t *, int8_t *, int64_t), int64_t only_len) {
  static int8_t x[ROWS * (MAX_LEN + PITCH_PAD)], y[ROWS * (MAX_LEN + PITCH_PAD)], want[MAX_LEN];
  long checked = 0;
  for (int64_t li = 1; li <= 300 + 4; li++) {
    int64_t len = li <= 300 ? li : extra_lens[li - 301];
    if (only_len && len != only_len) continue;
    for (int k = 0; k < 4; k++) {
      int64_t p = len + (k & 1) * PITCH_PAD; /* pitches above the length, and equal */
      for (int r = 0; r < ROWS; r++) fill(x + r * p, len, r == 2 ? 0 : k);
      memset(y, 0x5a, sizeof y);
      run(c, x, p, y, p, ROWS, len);
      for (int r = 0; r < ROWS; r++) {
        ref(c, x + r * p, want, len);
        for (int64_t i = 0; i < len; i++)
          if (y[r * p + i] != want[i])
            fail_msg("len %lld, kind %d, row %d: output %lld is %d, the reference gives %d", (long long)len, k, r,
                     (long long)i, y[r * p + i], want[i]);
        for (int64_t i = len; i < p; i++) assert_int_equal(y[r * p + i], 0x5a); /* the pitch's gap untouched */
        checked += len;
      }
      run(c, x, p, x, p, ROWS, len); /* in place */
      for (int r = 0; r < ROWS; r++) assert_memory_equal(x + r * p, y + r * p, (size_t)len);
    }
  }
  return checked;
}

static void run_softmax(const void *c, const int8_t *x, int64_t px, int8_t *y, int64_t py, int64_t rows, int64_t len) {
  loom_isoftmax_rows(c, x, px, y, py, rows, len);
}
static void ref_softmax_v(const void *c, const int8_t *x, int8_t *y, int64_t len) { ref_softmax(c, x, y, len); }

static void test_softmax_rows(void **state) {
  (void)state;
  static const double in_scales[] = {1.0 / 256, 0.02, 0.1, 0.37, 1.0};
  static const double out_scales[] = {1.0 / 255, 1.0 / 127, 5.3e-4, 1.0 / 4096};
  long checked = 0;
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 4; b++) {
      struct loom_isoftmax s;
      assert_int_equal(loom_isoftmax_init(in_scales[a], out_scales[b], (a + b) % 2 ? -128 : 5, &s), 0);
      checked += sweep(&s, run_softmax, ref_softmax_v, 0);
    }
  fprintf(stderr, "introws: %ld softmax outputs equal to the reference loop\n", checked);
}

/* intapprox.h's masked softmax, per element: u_i = x_i + o_i, or -2^24 -
 * 128 where o_i = -2^24; m = max u; e_i = loom_iexp(u_i - m) below k_zero
 * = ceil(33 q_ln2 / 2^up), 0 from there; then as ref_softmax. */
static void ref_masked(const struct loom_isoftmax *s, const int8_t *x, const int32_t *off, int8_t *y, int64_t len) {
  static int64_t u[MAX_LEN];
  const int64_t k_zero = (33 * s->e.q_ln2 + (INT64_C(1) << s->e.up) - 1) >> s->e.up;
  int64_t m = INT64_MIN;
  uint64_t sum = 0;
  for (int64_t i = 0; i < len; i++) {
    u[i] = off[i] <= -LOOM_ISOFTMAX_MASK_LIMIT ? -LOOM_ISOFTMAX_MASK_LIMIT - 128 : (int64_t)x[i] + off[i];
    m = u[i] > m ? u[i] : m;
  }
  for (int64_t i = 0; i < len; i++) sum += m - u[i] < k_zero ? (uint64_t)loom_iexp(&s->e, u[i] - m) : 0;
  uint64_t r = ((uint64_t)s->mult << 32) / sum;
  for (int64_t i = 0; i < len; i++) {
    uint64_t e = m - u[i] < k_zero ? (uint64_t)loom_iexp(&s->e, u[i] - m) : 0;
    y[i] = clamp8((int64_t)round_even(e * r, s->shift + 1) + s->out_zp);
  }
}

/* A mask value of kind k: 0; BERT's -10000; -inf, NaN or -1e9 (excluded
 * for any scale here); a few steps either way; -3.4e38; +inf; up to 600
 * steps down (exps past the table, below k_zero for small scales). */
static float mask_value(int k, double s_x) {
  switch (k) {
  case 0: return 0.0f;
  case 1: return -10000.0f;
  case 2: return next() % 3 == 0 ? -INFINITY : next() % 2 ? NAN : -1e9f;
  case 3: return (float)(((double)(next() % 41) - 20.0) * s_x * 0.73);
  case 4: return -3.4e38f;
  case 5: return INFINITY;
  default: return (float)(-(double)(next() % 600) * s_x * 1.01);
  }
}

/* Masked rows: every length, row kind and layout as sweep, each call with
 * a mask of 2 rows broadcast in groups of 1 or 2 over 3 score rows; masks
 * of one kind per row, mixed kinds, and rows whose tail (or all) is
 * excluded. */
static long sweep_masked(const struct loom_isoftmax *s, double s_x) {
  static int8_t x[ROWS * (MAX_LEN + PITCH_PAD)], y[ROWS * (MAX_LEN + PITCH_PAD)], want[MAX_LEN];
  static int32_t off[2 * MAX_LEN];
  long checked = 0;
  for (int64_t li = 1; li <= 300 + 4; li++) {
    int64_t len = li <= 300 ? li : extra_lens[li - 301];
    for (int k = 0; k < 4; k++) {
      int64_t p = len + (k & 1) * PITCH_PAD, group = 1 + (li + k) % 2;
      for (int r = 0; r < ROWS; r++) fill(x + r * p, len, r == 2 ? 0 : k);
      for (int mr = 0; mr < 2; mr++) {
        int pattern = (int)((li + 2 * k + mr) % 10);
        int64_t tail = pattern == 8 ? (int64_t)(next() % (uint32_t)len) : pattern == 9 ? 0 : len;
        for (int64_t i = 0; i < len; i++) {
          float v = pattern < 7 ? mask_value(pattern, s_x) : mask_value((int)(next() % 7), s_x);
          if (i >= tail) v = -INFINITY; /* an excluded tail; the whole row with pattern 9 */
          off[mr * len + i] = loom_isoftmax_offset(s, v);
        }
      }
      memset(y, 0x5a, sizeof y);
      loom_isoftmax_masked_rows(s, x, p, y, p, ROWS, len, off, 2, group);
      for (int r = 0; r < ROWS; r++) {
        ref_masked(s, x + r * p, off + (r / group) % 2 * len, want, len);
        for (int64_t i = 0; i < len; i++)
          if (y[r * p + i] != want[i])
            fail_msg("masked: len %lld, kind %d, row %d: output %lld is %d, the reference gives %d", (long long)len, k,
                     r, (long long)i, y[r * p + i], want[i]);
        for (int64_t i = len; i < p; i++) assert_int_equal(y[r * p + i], 0x5a);
        checked += len;
      }
      loom_isoftmax_masked_rows(s, x, p, x, p, ROWS, len, off, 2, group); /* in place */
      for (int r = 0; r < ROWS; r++) assert_memory_equal(x + r * p, y + r * p, (size_t)len);
    }
  }
  return checked;
}

static void test_masked_rows(void **state) {
  (void)state;
  static const double in_scales[] = {1.0 / 256, 0.02, 0.1, 0.37, 1.0};
  static const double out_scales[] = {1.0 / 255, 1.0 / 127, 5.3e-4};
  long checked = 0;
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 3; b++) {
      struct loom_isoftmax s;
      assert_int_equal(loom_isoftmax_init(in_scales[a], out_scales[b], (a + b) % 2 ? -128 : 5, &s), 0);
      assert_int_equal(loom_isoftmax_mask_init(in_scales[a], &s), 0);
      checked += sweep_masked(&s, in_scales[a]);
    }
  fprintf(stderr, "introws: %ld masked softmax outputs equal to the reference loop\n", checked);
}

static void run_layernorm(const void *c, const int8_t *x, int64_t px, int8_t *y, int64_t py, int64_t rows,
                          int64_t len) {
  (void)len;
  loom_ilayernorm_rows(c, x, px, y, py, rows);
}
static void ref_layernorm_v(const void *c, const int8_t *x, int8_t *y, int64_t len) {
  (void)len;
  ref_layernorm(c, x, y);
}

static void test_layernorm_rows(void **state) {
  (void)state;
  static const double in_scales[] = {1.0 / 256, 0.05, 0.5};
  static const double eps_values[] = {0.0, 1e-5, 0.5};
  static const double gammas[] = {1.0, 1e-4, 25.0};
  static float gamma[MAX_LEN], beta[MAX_LEN];
  static int32_t g[MAX_LEN], b[MAX_LEN];
  long checked = 0;
  for (int64_t li = 1; li <= 304; li++) {
    int64_t len = li <= 300 ? li : extra_lens[li - 301];
    for (int a = 0; a < 3; a++) {
      int e = (int)((li + a) % 3), gk = (int)((li / 3 + a) % 3);
      for (int64_t i = 0; i < len; i++) {
        gamma[i] = (float)(gammas[gk] * ((double)(next() % 2001) / 1000.0 - 1.0));
        beta[i] = (float)((double)(next() % 2001) / 1000.0 - 1.0);
      }
      struct loom_ilayernorm l;
      double sy = gk == 2 ? 0.5 : 0.02;
      if (loom_ilayernorm_init(in_scales[a], a == 1 ? -128 : 11 * a, sy, a - 1, eps_values[e], len, gamma, len, beta,
                               len, g, b, &l))
        fail_msg("init refused len %lld", (long long)len);
      checked += sweep(&l, run_layernorm, ref_layernorm_v, len);
    }
  }
  fprintf(stderr, "introws: %ld LayerNorm outputs equal to the reference loop\n", checked);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_softmax_rows),
      cmocka_unit_test(test_masked_rows),
      cmocka_unit_test(test_layernorm_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
