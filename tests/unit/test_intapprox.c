/*
 * test_intapprox.c - the integer approximations of driver/core/intapprox.c
 * against float over their whole input range, with the bounds stated in
 * intapprox.h.
 *
 * exp and GELU take int8 inputs: every one of the 256 values (exp: the
 * 256 values of q - max(q), i.e. -255..0, as softmax feeds it) for scales
 * from 2^-12 to 4 (a score step of 0.1 is typical; the sweep covers
 * narrower and far wider ranges), compared with libm.  The bounds are
 * tight enough to fail for a wrong constant: the test also checks that
 * using ln 2 one step off, or dropping the up-shift, breaks them.
 * The square root is exact: every n below 2^20, every square and its
 * neighbours up to 2^32, and random uint64 values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "driver/core/intapprox.h"

#define EXP_BOUND (2.2e-3 + 2.0 / 1024.0)
#define GELU_BOUND 1.9e-2
#define GELU_REL (1.0 / 256.0)

/* Largest |exp(x) - y| over q in [-255, 0]. */
static double exp_error(const struct loom_iexp *e, double scale) {
  double worst = 0;
  for (int q = -255; q <= 0; q++) {
    double y = (double)loom_iexp(e, q) * e->out_scale, err = fabs(y - exp(q * scale));
    if (err > worst) worst = err;
  }
  return worst;
}

static void test_exp(void **state) {
  (void)state;
  double worst = 0;
  for (double scale = 1.0 / 4096; scale <= 4.0; scale *= 1.25) {
    struct loom_iexp e;
    assert_int_equal(loom_iexp_init(scale, &e), 0);
    double err = exp_error(&e, scale);
    if (err > EXP_BOUND) fprintf(stderr, "exp: scale %g: error %g\n", scale, err);
    assert_true(err <= EXP_BOUND);
    if (err > worst) worst = err;
    assert_true(loom_iexp(&e, 5) == loom_iexp(&e, 0)); /* positive inputs clamp to 0 */
    /* a broken constant must fail the bound: the range reduction's ln 2
     * (where the inputs reach past 2 ln 2 on a grid fine enough to see
     * it: above a step of 0.5 every exp but exp(0) is below the bound) and
     * the polynomial's offset */
    struct loom_iexp bad = e;
    bad.q_ln2 += bad.q_ln2 / 32 + 1;
    if (255 * scale > 2 * M_LN2 && scale <= 0.5) assert_true(exp_error(&bad, scale) > EXP_BOUND);
    bad = e;
    bad.q_b += bad.q_b / 64 + 1;
    assert_true(exp_error(&bad, scale) > EXP_BOUND);
  }
  /* without the up-shift a coarse scale cannot meet it */
  struct loom_iexp e;
  assert_int_equal(loom_iexp_init(0.1, &e), 0);
  assert_true(e.up > 0);
  double s = 0.1;
  e.up = 0, e.q_ln2 = (int64_t)floor(M_LN2 / s), e.q_b = (int64_t)floor(1.353 / s);
  e.q_c = (int64_t)floor(0.344 / (0.3585 * s * s)), e.out_scale = 0.3585 * s * s;
  assert_true(exp_error(&e, s) > EXP_BOUND);
  fprintf(stderr, "exp: worst error %.5f over 256 inputs x %d scales (bound %.5f)\n", worst, 47, EXP_BOUND);
  assert_int_equal(loom_iexp_init(0.0, &e), -1);
  assert_int_equal(loom_iexp_init(NAN, &e), -1);
}

static double gelu(double x) { return 0.5 * x * (1.0 + erf(x / M_SQRT2)); }

static void test_gelu(void **state) {
  (void)state;
  double worst = 0;
  for (double scale = 1.0 / 4096; scale <= 4.0; scale *= 1.25) {
    struct loom_igelu g;
    assert_int_equal(loom_igelu_init(scale, &g), 0);
    for (int q = -128; q <= 127; q++) {
      double x = q * scale, y = (double)loom_igelu(&g, q) * g.out_scale;
      double err = fabs(y - gelu(x)), bound = GELU_BOUND + GELU_REL * fabs(x);
      if (err > bound) fprintf(stderr, "gelu: scale %g q %d: %g vs %g\n", scale, q, y, gelu(x));
      assert_true(err <= bound);
      if (err > worst) worst = err;
    }
  }
  fprintf(stderr, "gelu: worst error %.5f over 256 inputs x 47 scales\n", worst);
  struct loom_igelu g;
  assert_int_equal(loom_igelu_init(-1.0, &g), -1);
}

static uint32_t ref_sqrt(uint64_t n) {
  uint64_t r = (uint64_t)sqrtl((long double)n);
  while (r * r > n) r--;
  while ((r + 1) * (r + 1) <= n && r + 1 < (UINT64_C(1) << 32)) r++;
  return (uint32_t)r;
}

static void test_isqrt(void **state) {
  (void)state;
  for (uint64_t n = 0; n < (UINT64_C(1) << 20); n++) assert_int_equal(loom_isqrt(n), ref_sqrt(n));
  for (uint64_t r = 1; r < (UINT64_C(1) << 32); r += r / 7 + 1)
    for (int d = -1; d <= 1; d++) {
      uint64_t n = r * r + (uint64_t)(int64_t)d;
      assert_int_equal(loom_isqrt(n), ref_sqrt(n));
    }
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < 100000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    assert_int_equal(loom_isqrt(x), ref_sqrt(x));
  }
  assert_int_equal(loom_isqrt(UINT64_MAX), 4294967295u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp),
      cmocka_unit_test(test_gelu),
      cmocka_unit_test(test_isqrt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
