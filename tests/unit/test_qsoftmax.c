/*
 * test_qsoftmax.c - the int8 softmax (host op QSOFTMAX, intapprox.h's
 * loom_isoftmax_*) against float softmax, over the whole int8 input range
 * and a sweep of scales, with the bound intapprox.h states:
 *
 *   |s_y (y - z_y) - p| <= s_y / 2 + 1.7e-2 p + 2^-30
 *
 * per output, p the float (double) softmax of the dequantized row clamped
 * to what int8 codes of (s_y, z_y) can hold.  The s_y / 2 is the output's
 * rounding; 1.7e-2 p is the integer exp's error (2.2e-3 + 2^-9 absolute on
 * exp(r) in (1/2, 1], so at most 0.83% relative on every exp(x) = exp(r) /
 * 2^z) counted twice, once in the numerator and once in the sum; 2^-30 the
 * floors of the fixed point.
 *
 * Rows: all 256 codes in one row (every q - max(q) in [-255, 0] at once),
 * rows with one code above a flat rest (the largest probabilities), flat
 * rows, a single value, and seeded random rows of lengths 2 to 300; input
 * scales from 2^-8 to 1 (scores steps of 0.1 are typical), output scales
 * from 2^-12 to 1/127 with zero points 0 and -128.  Besides the bound, each
 * output must equal the documented fixed-point formula computed here with
 * its own code (an explicit remainder test for round half to even; exact
 * ties, which real scales do not produce, from constructed constants), and
 * broken parameters (1/s_y 2% off, the shift one off, ln 2 off) must fail
 * the bound.  The op itself: blocked [N, C] input and output computed in
 * place in the stored bytes (padding lanes set to the zero point), a
 * strided NCHWc input through the conversion, and LOOM_E_INVALID with a
 * message for bad tensors and parameters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/core.h"
#include "driver/core/hostops_qsoftmax.h"
#include "int8rows.h"

#define REL_BOUND 1.7e-2
#define ABS_BOUND (1.0 / (1 << 30))
#define MAX_LEN 300

struct sweep {
  double worst;        /* largest error beyond s_y / 2, in output steps */
  double rel;          /* largest error beyond s_y / 2 relative to p (p > 10^-3) */
  long outputs, exact; /* outputs checked; equal to the rounded float */
  int violations;      /* outputs beyond the bound */
};

/* y by the formula of intapprox.h, without the op's branch-free rounding. */
static int8_t spec_code(const struct loom_isoftmax *s, const int64_t *t, const int8_t *x, int64_t len, int64_t i) {
  int m = -128;
  uint64_t sum = 0;
  for (int64_t j = 0; j < len; j++) m = x[j] > m ? x[j] : m;
  for (int64_t j = 0; j < len; j++) sum += (uint64_t)t[m - x[j]];
  uint64_t r = ((uint64_t)s->mult << 32) / sum, v = (uint64_t)t[m - x[i]] * r;
  int k = s->shift + 1;
  uint64_t q = v >> k, rem = v - (q << k), half = UINT64_C(1) << (k - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  int64_t y = (int64_t)q + s->out_zp;
  return (int8_t)(y < -128 ? -128 : y > 127 ? 127 : y);
}

/* One row through loom_isoftmax_row, checked against float and the spec. */
static void check_row(const struct loom_isoftmax *s, const int64_t *t, double sx, int zx, double sy, const int8_t *x,
                      int64_t len, int spec, struct sweep *w) {
  int8_t y[MAX_LEN];
  double p[MAX_LEN], mx = -INFINITY, sum = 0;
  loom_isoftmax_row(s, t, x, y, len);
  for (int64_t i = 0; i < len; i++) mx = fmax(mx, sx * (x[i] - zx));
  for (int64_t i = 0; i < len; i++) sum += p[i] = exp(sx * (x[i] - zx) - mx);
  double lo = sy * (-128 - s->out_zp), hi = sy * (127 - s->out_zp);
  for (int64_t i = 0; i < len; i++) {
    double pi = p[i] / sum, pc = fmin(fmax(pi, lo), hi), got = sy * (y[i] - s->out_zp);
    double err = fabs(got - pc), bound = sy / 2 + REL_BOUND * pi + ABS_BOUND;
    if (err > bound) w->violations++;
    if ((err - sy / 2) / sy > w->worst) w->worst = (err - sy / 2) / sy;
    if (pi > 1e-3 && (err - sy / 2) / pi > w->rel) w->rel = (err - sy / 2) / pi;
    double want = fmin(fmax(nearbyint(pi / sy) + s->out_zp, -128), 127);
    w->exact += y[i] == (int8_t)want;
    w->outputs++;
    if (spec && y[i] != spec_code(s, t, x, len, i))
      fail_msg("row of %lld: output %lld is %d, the formula gives %d", (long long)len, (long long)i, y[i],
               spec_code(s, t, x, len, i));
  }
}

static uint32_t rng = 12345;
static int8_t rand_code(void) {
  rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
  return (int8_t)(rng & 0xff);
}

/* Every row kind for one pair of scales; spec: also compare the formula. */
static void sweep_rows(const struct loom_isoftmax *s, double sx, int zx, double sy, int spec, struct sweep *w) {
  int64_t t[256];
  int8_t x[MAX_LEN];
  loom_isoftmax_table(s, t);
  for (int i = 0; i < 256; i++) x[i] = (int8_t)(i - 128);
  check_row(s, t, sx, zx, sy, x, 256, spec, w);
  for (int top = -127; top <= 127; top += 6) /* one code above a flat rest */
    for (int64_t len = 2; len <= 65; len = len * 4 + 1) {
      for (int64_t i = 0; i < len; i++) x[i] = (int8_t)(top - 1 - (top + 128) * (i % 3) / 3);
      x[len / 2] = (int8_t)top;
      check_row(s, t, sx, zx, sy, x, len, spec, w);
    }
  for (int c = -128; c <= 127; c += 51) {
    memset(x, c, sizeof x);
    check_row(s, t, sx, zx, sy, x, 1, spec, w);
    check_row(s, t, sx, zx, sy, x, 65, spec, w);
  }
  static const int64_t lens[] = {2, 3, 7, 65, 197, 300};
  for (int k = 0; k < 6; k++)
    for (int rep = 0; rep < 4; rep++) {
      for (int64_t i = 0; i < lens[k]; i++) x[i] = rand_code();
      check_row(s, t, sx, zx, sy, x, lens[k], spec, w);
    }
}

static const double out_scales[] = {1.0 / 127, 1.0 / 255, 5.3e-4, 1.0 / 64, 1.0 / 4096};

static void test_against_float(void **state) {
  (void)state;
  struct sweep w = {0};
  int pairs = 0;
  for (double sx = 1.0 / 256; sx <= 1.0; sx *= 1.25)
    for (int o = 0; o < 5; o++)
      for (int zy = -128; zy <= 0; zy += 128) {
        struct loom_isoftmax s;
        assert_int_equal(loom_isoftmax_init(sx, out_scales[o], zy, &s), 0);
        assert_null(loom_isoftmax_check(&s));
        sweep_rows(&s, sx, -17, out_scales[o], 1, &w);
        pairs++;
      }
  fprintf(stderr, "qsoftmax: %ld outputs over %d scale pairs: worst %.3f steps or %.4f p beyond s_y/2, %.2f%% equal "
          "to the rounded float, %d beyond the bound\n", w.outputs, pairs, w.worst, w.rel,
          100.0 * (double)w.exact / (double)w.outputs, w.violations);
  assert_int_equal(w.violations, 0);
  assert_true(w.exact > w.outputs * 9 / 10); /* most outputs are the float result itself */
}

/* Broken constants must break the bound. */
static void test_broken_fails(void **state) {
  (void)state;
  static const char *const what[] = {"1/s_y 2% high", "shift one low", "ln 2 3% off", "exp constant c 12% high"};
  for (int b = 0; b < 4; b++) {
    struct sweep w = {0};
    for (double sx = 1.0 / 64; sx <= 0.5; sx *= 2) {
      struct loom_isoftmax s;
      assert_int_equal(loom_isoftmax_init(sx, 1.0 / 127, 0, &s), 0);
      if (b == 0) s.mult += s.mult / 50;
      if (b == 1) s.shift--;
      if (b == 2) s.e.q_ln2 += s.e.q_ln2 / 32 + 1;
      if (b == 3) s.e.q_c += s.e.q_c / 8;
      sweep_rows(&s, sx, 0, 1.0 / 127, 0, &w);
    }
    fprintf(stderr, "qsoftmax broken (%s): %d outputs beyond the bound\n", what[b], w.violations);
    assert_true(w.violations > 0);
  }
}

/* The op on a blocked [N, C] input (how attention's scores arrive) into a
 * plain [H, S, C] output, and the other stored forms (int8rows.h), against
 * the rows computed directly. */
static void test_hostop_blocked(void **state) {
  (void)state;
  enum { N = 12, C = 21 };
  char msg[LOOM_MSG_MAX];
  int8_t plain[N * C], want[N * C];
  for (int i = 0; i < N * C; i++) plain[i] = rand_code();
  struct loom_isoftmax s;
  int64_t t[256];
  assert_int_equal(loom_isoftmax_init(0.1f, 1.0f / 127, 3, &s), 0);
  loom_isoftmax_table(&s, t);
  for (int r = 0; r < N; r++) loom_isoftmax_row(&s, t, plain + r * C, want + r * C, C);
  uint8_t params[4 * LOOM_QSOFTMAX_PARAM_COUNT] = {0};
  int psize = loom_qsoftmax_params(&s, 1, params);
  assert_int_equal(psize, 24); /* the unmasked form: 6 int32, as the op's first version */
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_QSOFTMAX), "QSOFTMAX");
  assert_int_equal(LOOM_HOSTOP_QSOFTMAX, 6); /* the file format's kind number */
  struct loom_hostop_args a;
  int8_rows_layouts(LOOM_HOSTOP_QSOFTMAX, params, (uint64_t)psize, N, C, 0.1f, -5, 1.0f / 127, 3, plain, want, &a);
  const struct loom_file_tensor y = *a.out[0].desc;

  /* refusals: each with a message */
  struct { const char *what, *expect; } cases[] = {
      {"short params", "parameters"}, {"up 23", "up-shift"}, {"mult 0", "multiplier"}, {"ln2 0", "constants"},
      {"float out", "int8"}, {"last dim", "last dimension"}, {"two inputs", "input"}, {"zp 300", "zero point"},
  };
  for (int k = 0; k < 8; k++) {
    struct loom_hostop_args b = a;
    struct loom_file_tensor y2 = y;
    uint8_t p2[sizeof params];
    memcpy(p2, params, sizeof p2);
    b.params = p2, b.out[0].desc = &y2;
    if (k == 0) b.param_size = 20;
    if (k == 1) p2[4 * LOOM_QSOFTMAX_UP] = 23;
    if (k == 2) memset(p2 + 4 * LOOM_QSOFTMAX_MULT, 0, 4);
    if (k == 3) memset(p2 + 4 * LOOM_QSOFTMAX_Q_LN2, 0, 4);
    if (k == 4) y2.dtype = LOOM_DT_F32;
    if (k == 5) y2.dims[1] = 2, y2.dims[2] = 42;
    if (k == 6) b.n_in = 2, b.in[1] = a.in[0];
    if (k == 7) y2.zero_point = 300;
    msg[0] = 0;
    assert_int_equal(loom_hostop_run(LOOM_HOSTOP_QSOFTMAX, &b, msg), LOOM_E_INVALID);
    if (!strstr(msg, cases[k].expect)) fail_msg("%s: message '%s' lacks '%s'", cases[k].what, msg, cases[k].expect);
  }
}

/* Exact ties, which real scales almost never produce: exp(0) = 2^20 (b = 0,
 * c = 2^20), one value per row, so y = mult 2^32 / 2^(shift + 1); 1/s_y of
 * 5 2^28 and 7 2^28 with shift 60 give 2.5 and 3.5, rounded to 2 and 4. */
static void test_ties_to_even(void **state) {
  (void)state;
  static const int64_t mults[] = {5 << 28, 7 << 28, 5 << 28};
  static const int shifts[] = {60, 60, 59};
  static const int8_t want[] = {2, 4, 5};
  for (int k = 0; k < 3; k++) {
    struct loom_isoftmax s = {.e = {.up = 0, .q_ln2 = 1024, .q_b = 0, .q_c = 1 << 20}, .mult = mults[k],
                              .shift = shifts[k], .out_zp = 0};
    int64_t t[256];
    int8_t x = 7, y;
    assert_null(loom_isoftmax_check(&s));
    loom_isoftmax_table(&s, t);
    assert_int_equal(t[0], 1 << 20);
    loom_isoftmax_row(&s, t, &x, &y, 1);
    assert_int_equal(y, want[k]);
  }
}

static void test_init_limits(void **state) {
  (void)state;
  struct loom_isoftmax s;
  assert_int_equal(loom_isoftmax_init(0.1, 1.0 / 127, 0, &s), 0);
  assert_int_equal(loom_isoftmax_init(0.1, 1.0 / 127, 128, &s), -1);
  assert_int_equal(loom_isoftmax_init(0.1, 0.0, 0, &s), -1);
  assert_int_equal(loom_isoftmax_init(0.1, 1e-8, 0, &s), -1); /* below 2^-22 */
  assert_int_equal(loom_isoftmax_init(0.1, 4.0, 0, &s), -1);
  assert_int_equal(loom_isoftmax_init(1e4, 1.0 / 127, 0, &s), -1); /* up-shift above 22 */
  assert_int_equal(loom_isoftmax_init(NAN, 1.0 / 127, 0, &s), -1);
}

/* ---- the masked form: softmax(s_x x + mask) ---- */

#define LIMIT LOOM_ISOFTMAX_MASK_LIMIT

/* loom_isoftmax_offset against mask / s_x in double: the rounded value
 * (a tie goes to even), clamped to +-2^24; NaN and -inf at -2^24. */
static void test_mask_offsets(void **state) {
  (void)state;
  struct loom_isoftmax s;
  assert_int_equal(loom_isoftmax_init(1.0, 1.0 / 127, 0, &s), 0);
  assert_int_equal(s.mask_mult, 0); /* no mask constants until asked */
  assert_int_equal(loom_isoftmax_mask_init(1.0, &s), 0);
  static const float in[] = {0.0f, -0.0f, 2.5f, 3.5f, -2.5f, -3.5f, 0.4999f, 1e-45f, -1e4f, 1.6777216e7f, 3e7f,
                             -3e38f, INFINITY, -INFINITY, NAN};
  static const int32_t want[] = {0, 0, 2, 4, -2, -4, 0, 0, -10000, LIMIT, LIMIT, -LIMIT, LIMIT, -LIMIT, -LIMIT};
  for (int k = 0; k < 15; k++)
    if (loom_isoftmax_offset(&s, in[k]) != want[k])
      fail_msg("offset of %g at s_x 1: %d, want %d", (double)in[k], loom_isoftmax_offset(&s, in[k]), want[k]);
  long checked = 0;
  for (double sx = 1.0 / 4096; sx <= 64; sx *= 1.7) {
    assert_int_equal(loom_isoftmax_mask_init(sx, &s), 0);
    assert_null(loom_isoftmax_check(&s));
    for (int i = 0; i < 4000; i++) {
      uint32_t bits = (uint32_t)rand_code() << 24 ^ (uint32_t)(uint8_t)rand_code() << 16 ^
                      (uint32_t)(uint8_t)rand_code() << 8 ^ (uint32_t)(uint8_t)rand_code();
      float f;
      memcpy(&f, &bits, sizeof f);
      if (!isfinite(f)) continue;
      double o = (double)f / sx, r = fmin(fmax(nearbyint(o), -LIMIT), LIMIT);
      int32_t got = loom_isoftmax_offset(&s, f);
      /* equal to the rounded value unless o is within 2^-29 |o| of a tie */
      double tie = fabs(fabs(o - floor(o)) - 0.5);
      if (got != (int32_t)r && !(tie <= ldexp(fabs(o), -29) && fabs(got - r) == 1))
        fail_msg("offset of %.9g at s_x %g: %d, want %.0f", (double)f, sx, got, r);
      checked++;
    }
  }
  assert_true(checked > 10000);
}

/* The float reference of a masked row: p (the softmax of s_x (x - z_x) +
 * mask, exclusion as intapprox.h says: a mask at or below -2^24 s_x or NaN
 * drops the position, all dropped is 1/len) and the bounds of p' (the same
 * with each mask rounded to the op's offset, |eps_i| <= s_x (|round(o_i) -
 * o_i| + 2^-29 |o_i|)). */
static void masked_reference(double sx, int zx, const int8_t *x, const float *mask, int64_t len, double *p,
                             double *lo, double *hi) {
  double l[MAX_LEN], eps[MAX_LEN], mx = -INFINITY;
  int live = 0;
  for (int64_t i = 0; i < len; i++) {
    double o = (double)mask[i] / sx;
    int excl = isnan(mask[i]) || nearbyint(o) <= -LIMIT;
    l[i] = excl ? -INFINITY : sx * (x[i] - zx) + fmin((double)mask[i], LIMIT * sx);
    eps[i] = excl ? 0 : sx * (fabs(nearbyint(o) - o) + ldexp(fabs(o), -29));
    live += !excl, mx = fmax(mx, l[i]);
  }
  double sum = 0, zlo = 0, zhi = 0;
  for (int64_t i = 0; i < len; i++) sum += p[i] = live ? exp(l[i] - mx) : 1.0;
  for (int64_t i = 0; i < len; i++) {
    p[i] /= sum;
    zlo += p[i] * exp(-eps[i]), zhi += p[i] * exp(eps[i]);
  }
  for (int64_t i = 0; i < len; i++) lo[i] = p[i] * exp(-eps[i]) / zhi, hi[i] = p[i] * exp(eps[i]) / zlo;
}

/* How a sweep breaks the mask (0: not at all). */
enum mask_break { MB_NONE, MB_IGNORE, MB_DOUBLE, MB_NO_EXCLUDE, MB_COUNT };

/* One masked row through loom_isoftmax_masked_rows against the float
 * reference's bound and, unbroken, against the formula computed with
 * loom_iexp itself for every k.  tight: masks whose rounding cannot
 * matter (0, -10000, excluded: each live position's mask is 0 or shared
 * by every live position) must meet the unmasked bound itself. */
static void check_masked_row(const struct loom_isoftmax *s, double sx, int zx, double sy, const int8_t *x,
                             const float *mask, int64_t len, enum mask_break brk, int tight, struct sweep *w) {
  int32_t off[MAX_LEN] = {0};
  int8_t y[MAX_LEN];
  double p[MAX_LEN], lo[MAX_LEN], hi[MAX_LEN];
  for (int64_t i = 0; i < len; i++) {
    off[i] = loom_isoftmax_offset(s, mask[i]);
    if (brk == MB_IGNORE) off[i] = 0;
    if (brk == MB_DOUBLE && off[i] > -LIMIT / 2) off[i] = 2 * off[i] > LIMIT ? LIMIT : 2 * off[i];
    if (brk == MB_NO_EXCLUDE && off[i] <= -LIMIT) off[i] = -LIMIT + 1;
  }
  loom_isoftmax_masked_rows(s, x, len, y, len, 1, len, off, 1, 1);
  masked_reference(sx, zx, x, mask, len, p, lo, hi);
  int32_t u[MAX_LEN], m = INT32_MIN;
  for (int64_t i = 0; i < len; i++) {
    u[i] = off[i] <= -LIMIT ? -LIMIT - 128 : x[i] + off[i];
    m = u[i] > m ? u[i] : m;
  }
  uint64_t e[MAX_LEN], sum = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t k = (int64_t)m - u[i];
    sum += e[i] = k << s->e.up < (INT64_C(1) << 31) ? (uint64_t)loom_iexp(&s->e, -k) : 0;
  }
  uint64_t r = ((uint64_t)s->mult << 32) / sum;
  double cl = sy * (-128 - s->out_zp), ch = sy * (127 - s->out_zp);
  for (int64_t i = 0; i < len; i++) {
    double pc = fmin(fmax(p[i], cl), ch), got = sy * (y[i] - s->out_zp), err = fabs(got - pc);
    double bound = tight ? sy / 2 + REL_BOUND * p[i] + ABS_BOUND /* the unmasked bound */
                         : sy / 2 + REL_BOUND * hi[i] + fmax(hi[i] - p[i], p[i] - lo[i]) + ABS_BOUND;
    if (err > bound) w->violations++;
    if ((err - sy / 2) / sy > w->worst) w->worst = (err - sy / 2) / sy;
    if (p[i] > 1e-3 && (err - sy / 2) / p[i] > w->rel) w->rel = (err - sy / 2) / p[i];
    w->exact += y[i] == (int8_t)fmin(fmax(nearbyint(p[i] / sy) + s->out_zp, -128), 127);
    w->outputs++;
    uint64_t v = e[i] * r, q = v >> (s->shift + 1), rem = v - (q << (s->shift + 1)), half = UINT64_C(1) << s->shift;
    q += rem > half || (rem == half && (q & 1));
    int64_t want = (int64_t)q + s->out_zp;
    want = want < -128 ? -128 : want > 127 ? 127 : want;
    if (brk == MB_NONE && y[i] != want) fail_msg("masked row of %lld: output %lld is %d, the formula gives %d",
                                                 (long long)len, (long long)i, y[i], (int)want);
  }
}

static float rand_unit(void) { return (float)(uint8_t)rand_code() / 255.0f; }

/* Every masked row kind for one pair of scales: the whole int8 range
 * under BERT's 0 / -10000 masks, masks of small finite values, excluded
 * positions (-1e9, -inf, NaN), fully masked rows (-10000: the unmasked
 * softmax; excluded: 1/len; -1e9 and -10000: the -10000 ones), and a zero
 * mask, which must equal the unmasked op bit for bit.  w[0] counts the
 * rows held to the unmasked bound, w[1] the finite biases. */
static void sweep_masked(const struct loom_isoftmax *s, double sx, int zx, double sy, enum mask_break brk,
                         struct sweep w[2]) {
  int8_t x[MAX_LEN], y0[MAX_LEN], y1[MAX_LEN];
  float mask[MAX_LEN];
  int32_t zero[MAX_LEN] = {0};
  int64_t t[256];
  loom_isoftmax_table(s, t);
  for (int i = 0; i < 256; i++) x[i] = (int8_t)(i - 128);
  for (int pat = 0; pat < 4; pat++) { /* every code, every 2nd / 3rd / 7th masked by -10000 */
    static const int every[] = {2, 3, 7, 256};
    for (int i = 0; i < 256; i++) mask[i] = i % every[pat] == 1 ? -10000.0f : 0.0f;
    check_masked_row(s, sx, zx, sy, x, mask, 256, brk, 1, &w[0]);
  }
  static const int64_t lens[] = {1, 2, 7, 32, 65, 197};
  for (int k = 0; k < 6; k++) {
    int64_t len = lens[k];
    for (int rep = 0; rep < 3; rep++) {
      for (int64_t i = 0; i < len; i++) x[i] = rand_code();
      for (int64_t i = 0; i < len; i++) mask[i] = rand_unit() < 0.3f ? -10000.0f : 0.0f; /* BERT's */
      mask[len / 2] = 0;
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 1, &w[0]);
      for (int64_t i = 0; i < len; i++) mask[i] = -8.0f + 10.0f * rand_unit(); /* a finite bias */
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 0, &w[1]);
      for (int64_t i = 0; i < len; i++) { /* excluded positions among live ones */
        static const float ex[] = {-1e9f, -INFINITY, NAN, 0.0f, -10000.0f};
        mask[i] = ex[(uint8_t)rand_code() % 5];
      }
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 1, &w[0]);
      for (int64_t i = 0; i < len; i++) mask[i] = -10000.0f; /* fully masked: the unmasked softmax */
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 1, &w[0]);
      for (int64_t i = 0; i < len; i++) mask[i] = i % 2 ? -INFINITY : -1e9f; /* fully excluded: 1/len */
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 1, &w[0]);
      for (int64_t i = 0; i < len; i++) mask[i] = i % 3 ? -1e9f : -10000.0f;
      check_masked_row(s, sx, zx, sy, x, mask, len, brk, 1, &w[0]);
      if (brk != MB_NONE) continue;
      loom_isoftmax_row(s, t, x, y0, len); /* a zero mask is the unmasked op */
      loom_isoftmax_masked_rows(s, x, len, y1, len, 1, len, zero, 1, 1);
      assert_memory_equal(y0, y1, (size_t)len);
    }
  }
}

static void test_masked_against_float(void **state) {
  (void)state;
  struct sweep w[2];
  memset(w, 0, sizeof w);
  int pairs = 0;
  for (double sx = 1.0 / 256; sx <= 1.0; sx *= 1.6)
    for (int o = 0; o < 5; o++) {
      struct loom_isoftmax s;
      int zy = o % 2 ? -128 : 0;
      assert_int_equal(loom_isoftmax_init(sx, out_scales[o], zy, &s), 0);
      assert_int_equal(loom_isoftmax_mask_init(sx, &s), 0);
      sweep_masked(&s, sx, 9, out_scales[o], MB_NONE, w);
      pairs++;
    }
  static const char *const what[] = {"0 / -10000 / excluded masks (the unmasked bound)", "finite biases"};
  for (int k = 0; k < 2; k++) {
    fprintf(stderr, "qsoftmax masked, %s: %ld outputs over %d scale pairs: worst %.3f steps or %.4f p beyond "
            "s_y/2, %.2f%% equal to the rounded float, %d beyond the bound\n", what[k], w[k].outputs, pairs,
            w[k].worst, w[k].rel, 100.0 * (double)w[k].exact / (double)w[k].outputs, w[k].violations);
    assert_int_equal(w[k].violations, 0);
  }
  assert_true(w[0].exact > w[0].outputs * 9 / 10);
  assert_true(w[1].exact > w[1].outputs * 3 / 4);
}

/* A mask ignored, applied at twice its size or never excluding must
 * break the bound. */
static void test_masked_broken_fails(void **state) {
  (void)state;
  static const char *const what[] = {"", "mask ignored", "offsets doubled", "no exclusion"};
  for (int b = MB_IGNORE; b < MB_COUNT; b++) {
    struct sweep w[2];
  memset(w, 0, sizeof w);
    for (double sx = 1.0 / 64; sx <= 0.5; sx *= 2) {
      struct loom_isoftmax s;
      assert_int_equal(loom_isoftmax_init(sx, 1.0 / 127, 0, &s), 0);
      assert_int_equal(loom_isoftmax_mask_init(sx, &s), 0);
      sweep_masked(&s, sx, 0, 1.0 / 127, (enum mask_break)b, w);
    }
    fprintf(stderr, "qsoftmax masked broken (%s): %d + %d outputs beyond the bound\n", what[b], w[0].violations,
            w[1].violations);
    assert_true(w[0].violations + w[1].violations > 0);
    assert_true(b == MB_DOUBLE || w[0].violations > 0); /* BERT's masks: doubled -10000 is still 0 */
  }
}

/* The op with a mask: [1, 1, 1, C] over every row and [2, 1, C] over two
 * groups of rows, in the three stored forms; an old (unmasked) file's six
 * parameters with one input unchanged; refusals with a message. */
static void test_hostop_masked(void **state) {
  (void)state;
  enum { N = 12, C = 21 };
  char msg[LOOM_MSG_MAX];
  int8_t plain[N * C], want[N * C];
  float mask[2 * C];
  for (int i = 0; i < N * C; i++) plain[i] = rand_code();
  for (int i = 0; i < 2 * C; i++) mask[i] = i % 5 == 2 ? -10000.0f : i % 7 == 3 ? -1.25f : 0.0f;
  struct loom_isoftmax s;
  assert_int_equal(loom_isoftmax_init(0.1f, 1.0f / 127, 3, &s), 0);
  assert_int_equal(loom_isoftmax_mask_init(0.1f, &s), 0);
  int32_t off[2 * C];
  for (int i = 0; i < 2 * C; i++) off[i] = loom_isoftmax_offset(&s, mask[i]);
  uint8_t params[4 * LOOM_QSOFTMAX_PARAM_COUNT];
  struct loom_file_tensor mt;
  memset(&mt, 0, sizeof mt);
  mt.dtype = mt.user_dtype = LOOM_DT_F32;
  struct loom_hostop_tensor mk = {&mt, mask};
  struct loom_hostop_args a;
  for (int form = 0; form < 2; form++) { /* one mask row for all; two rows, 6 score rows each */
    int64_t group = form ? N / 2 : 1, mrows = form ? 2 : 1;
    mt.rank = form ? 3 : 4, mt.dims[0] = mrows, mt.dims[1] = 1, mt.dims[2] = 1, mt.dims[mt.rank - 1] = C;
    mt.bytes = loom_file_tensor_bytes(&mt);
    loom_isoftmax_masked_rows(&s, plain, C, want, C, N, C, off, mrows, group);
    assert_int_equal(loom_qsoftmax_params(&s, group, params), 4 * LOOM_QSOFTMAX_PARAM_COUNT);
    int8_rows_layouts_masked(LOOM_HOSTOP_QSOFTMAX, params, sizeof params, N, C, 0.1f, -5, 1.0f / 127, 3, plain, want,
                             &mk, &a);
  }

  /* the unmasked parameters of an old file: six int32, one input */
  struct loom_isoftmax s0 = s;
  s0.mask_mult = 0, s0.mask_shift = 0;
  uint8_t p0[4 * LOOM_QSOFTMAX_PARAM_COUNT];
  assert_int_equal(loom_qsoftmax_params(&s0, 1, p0), 4 * LOOM_QSOFTMAX_PARAMS_UNMASKED);
  assert_memory_equal(p0, params, 4 * LOOM_QSOFTMAX_PARAMS_UNMASKED);

  struct { const char *what, *expect; } cases[] = {
      {"six params", "second input"}, {"mask mult 0", "multiplier is 0"}, {"mask shift 70", "mask's multiplier"},
      {"int8 mask", "float32"},       {"mask width", "last dimension"},   {"group 0", "broadcast"},
      {"group 5", "broadcast"},       {"three inputs", "input"},
  };
  for (int k = 0; k < 8; k++) {
    struct loom_hostop_args b = a;
    struct loom_file_tensor m2 = mt;
    uint8_t p2[sizeof params];
    memcpy(p2, params, sizeof p2);
    b.params = p2, b.in[1].desc = &m2;
    if (k == 0) b.param_size = 4 * LOOM_QSOFTMAX_PARAMS_UNMASKED;
    if (k == 1) memset(p2 + 4 * LOOM_QSOFTMAX_MASK_MULT, 0, 4);
    if (k == 2) p2[4 * LOOM_QSOFTMAX_MASK_SHIFT] = 70;
    if (k == 3) m2.dtype = LOOM_DT_I8, m2.scale = 1;
    if (k == 4) m2.dims[m2.rank - 1] = C + 1;
    if (k == 5) memset(p2 + 4 * LOOM_QSOFTMAX_MASK_GROUP, 0, 4);
    if (k == 6) p2[4 * LOOM_QSOFTMAX_MASK_GROUP] = 5;
    if (k == 7) b.n_in = 3, b.in[2] = a.in[0];
    msg[0] = 0;
    assert_int_equal(loom_hostop_run(LOOM_HOSTOP_QSOFTMAX, &b, msg), LOOM_E_INVALID);
    if (!strstr(msg, cases[k].expect)) fail_msg("%s: message '%s' lacks '%s'", cases[k].what, msg, cases[k].expect);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_float),
      cmocka_unit_test(test_broken_fails),
      cmocka_unit_test(test_hostop_blocked),
      cmocka_unit_test(test_ties_to_even),
      cmocka_unit_test(test_init_limits),
      cmocka_unit_test(test_mask_offsets),
      cmocka_unit_test(test_masked_against_float),
      cmocka_unit_test(test_masked_broken_fails),
      cmocka_unit_test(test_hostop_masked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
