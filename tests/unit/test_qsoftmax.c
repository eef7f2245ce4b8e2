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
  uint8_t params[4 * LOOM_QSOFTMAX_PARAM_COUNT];
  loom_qsoftmax_params(&s, params);
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_QSOFTMAX), "QSOFTMAX");
  assert_int_equal(LOOM_HOSTOP_QSOFTMAX, 6); /* the file format's kind number */
  struct loom_hostop_args a;
  int8_rows_layouts(LOOM_HOSTOP_QSOFTMAX, params, sizeof params, N, C, 0.1f, -5, 1.0f / 127, 3, plain, want, &a);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_float),
      cmocka_unit_test(test_broken_fails),
      cmocka_unit_test(test_hostop_blocked),
      cmocka_unit_test(test_ties_to_even),
      cmocka_unit_test(test_init_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
