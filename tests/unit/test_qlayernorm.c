/*
 * test_qlayernorm.c - the int8 LayerNorm (host op QLAYERNORM, intapprox.h's
 * loom_ilayernorm_*) against float LayerNorm in double over the whole int8
 * input range, with the bound hostops_qlayernorm.h states:
 *
 *   |y - z_y - v / s_y| <= 1/2 + 2^-15 + G 2^-20 output steps
 *
 * per output, v the double LayerNorm of the dequantized row (population
 * variance, eps inside the square root, the float gamma and beta) clamped
 * to what int8 codes of (s_y, z_y) can hold, G = max |gamma| / s_y.
 *
 * Rows: seeded random codes over the whole range, constant rows (variance
 * 0: the output is beta whatever eps), one outlier on a constant rest,
 * -128/127 alternating, low-variance rows (codes z_x +- 1, where eps
 * decides the result), and all 256 codes in one row; lengths 8 to 1024,
 * not only multiples of 16; input scales 2^-8 to 0.5 with zero points 0,
 * -128 and 37; output scales, eps 0 to 0.5, gamma and beta ranges from
 * tiny to large.  Broken constants (eps dropped, F off, gamma's shift off)
 * must fail the bound; exact ties (gamma 0, beta (k + 1/2) s_y) must round
 * to even.  The op itself: the parameter bytes round trip, a blocked
 * [N, C] input in place, an NCHWc input through the conversion, and
 * LOOM_E_INVALID with a message for bad tensors and parameters.
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
#include "driver/core/hostops_qlayernorm.h"
#include "int8rows.h"

#define MAX_LEN 1024

struct sweep {
  double worst;        /* largest error beyond 1/2, in output steps, less the G term */
  long outputs, exact; /* outputs checked; equal to the rounded float */
  int violations;      /* outputs beyond the bound */
};

struct setup {
  double sx, sy, eps;
  int zx, zy;
  float gamma[MAX_LEN], beta[MAX_LEN];
};

/* One row through loom_ilayernorm_rows, checked against double. */
static void check_row(const struct loom_ilayernorm *l, const struct setup *u, const int8_t *x, struct sweep *w) {
  int64_t n = l->len;
  int8_t y[MAX_LEN];
  loom_ilayernorm_rows(l, x, n, y, n, 1);
  /* mean and variance from exact integer sums, so a constant row has
   * variance 0 exactly (x - mean = 0, and y = beta also when eps = 0,
   * where float gives 0/0) */
  int64_t s1 = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) s1 += x[i] - u->zx, s2 += (x[i] - u->zx) * (x[i] - u->zx);
  double mean = u->sx * (double)s1 / (double)n, gmax = 0;
  double var = u->sx * u->sx * ((double)n * (double)s2 - (double)s1 * (double)s1) / ((double)n * (double)n);
  for (int64_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(u->gamma[i] / u->sy));
  double r = var + u->eps > 0 ? 1.0 / sqrt(var + u->eps) : 0, lo = -128 - u->zy, hi = 127 - u->zy;
  double bound = 0.5 + ldexp(1, -15) + gmax * ldexp(1, -20);
  for (int64_t i = 0; i < n; i++) {
    double v = ((u->sx * (x[i] - u->zx) - mean) * r * u->gamma[i] + u->beta[i]) / u->sy;
    double vc = fmin(fmax(v, lo), hi), err = fabs(y[i] - u->zy - vc);
    if (err > bound) {
      if (!w->violations)
        fprintf(stderr, "first violation: len %lld sx %g zx %d sy %g eps %g: output %lld is %d, float %.4f\n",
                (long long)n, u->sx, u->zx, u->sy, u->eps, (long long)i, y[i] - u->zy, vc);
      w->violations++;
    }
    w->worst = fmax(w->worst, err - 0.5 - gmax * ldexp(1, -20));
    w->exact += y[i] - u->zy == nearbyint(vc);
    w->outputs++;
  }
}

static uint32_t rng = 12345;
static uint32_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
  return rng;
}
static int8_t rand_code(void) { return (int8_t)(next() & 0xff); }
static double rand_unit(void) { return (double)(next() % 20001) / 10000.0 - 1.0; } /* [-1, 1] */

/* Every row kind of length len for one setup (its constants in l). */
static void sweep_rows(const struct loom_ilayernorm *l, const struct setup *u, struct sweep *w) {
  int64_t n = l->len;
  int8_t x[MAX_LEN];
  for (int rep = 0; rep < 3; rep++) {
    for (int64_t i = 0; i < n; i++) x[i] = rand_code();
    check_row(l, u, x, w);
  }
  memset(x, 93, (size_t)n); /* constant: y = beta */
  check_row(l, u, x, w);
  x[n / 3] = -128; /* one outlier */
  check_row(l, u, x, w);
  memset(x, u->zx, (size_t)n);
  x[n - 1] = (int8_t)(u->zx + 1); /* the smallest variance there is */
  check_row(l, u, x, w);
  for (int64_t i = 0; i < n; i++) x[i] = i & 1 ? 127 : -128;
  check_row(l, u, x, w);
  for (int64_t i = 0; i < n; i++) x[i] = (int8_t)(u->zx - 1 + (int)(next() % 3)); /* eps decides */
  check_row(l, u, x, w);
  if (n >= 256) {
    for (int64_t i = 0; i < n; i++) x[i] = (int8_t)((i * 97) & 0xff);
    check_row(l, u, x, w);
  }
}

static const int64_t lens[] = {8, 13, 16, 100, 197, 256, 768, 1000, 1024};
static const double eps_values[] = {0.0, 1e-12, 1e-5, 1e-3, 0.5};
static const double in_scales[] = {1.0 / 256, 0.013, 0.05, 0.5};
static const double out_scales[] = {1.0 / 32, 0.02, 0.07, 0.003};

/* gamma and beta of kind k: ~1 and small; random signs; tiny; large. */
static void fill_affine(struct setup *u, int64_t n, int k) {
  for (int64_t i = 0; i < n; i++) {
    double g = k == 0 ? 1 + 0.1 * rand_unit() : k == 1 ? 2 * rand_unit() : k == 2 ? 1e-4 * rand_unit() : 25 * rand_unit();
    u->gamma[i] = (float)g, u->beta[i] = (float)(k == 3 ? 3 * rand_unit() : 0.5 * rand_unit());
  }
}

/* The sweep, with `broken` applied to each set of constants (0: none). */
static struct sweep run_sweep(int broken) {
  static struct setup u;
  static int32_t g[MAX_LEN], b[MAX_LEN];
  struct sweep w = {0};
  for (unsigned s = 0; s < sizeof in_scales / sizeof in_scales[0]; s++)
    for (int zk = 0; zk < 3; zk++)
      for (unsigned e = 0; e < sizeof eps_values / sizeof eps_values[0]; e++)
        for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++)
          for (int a = 0; a < 4; a++) {
            static const int zxs[] = {0, -128, 37};
            u.sx = in_scales[s], u.zx = zxs[zk], u.eps = eps_values[e];
            u.sy = out_scales[(s + e + k + (unsigned)a) % 4], u.zy = (int)((k * 7 + e) % 5) - 2;
            if (a == 3) u.sy *= 16; /* large gamma: a wider output range */
            fill_affine(&u, lens[k], a);
            struct loom_ilayernorm l;
            if (loom_ilayernorm_init(u.sx, u.zx, u.sy, u.zy, u.eps, lens[k], u.gamma, lens[k], u.beta, lens[k], g, b,
                                     &l))
              fail_msg("init refused sx %g sy %g eps %g len %lld", u.sx, u.sy, u.eps, (long long)lens[k]);
            assert_null(loom_ilayernorm_check(&l));
            if (broken == 1) l.eps = 0;
            if (broken == 2) l.frac -= 2;
            if (broken == 3) l.gshift++;
            sweep_rows(&l, &u, &w);
          }
  return w;
}

static void test_against_float(void **state) {
  (void)state;
  struct sweep w = run_sweep(0);
  fprintf(stderr, "qlayernorm: %ld outputs: worst %.2e steps beyond 1/2 + G 2^-20, %.2f%% equal to the rounded "
          "float, %d beyond the bound\n", w.outputs, w.worst, 100.0 * (double)w.exact / (double)w.outputs,
          w.violations);
  assert_int_equal(w.violations, 0);
  assert_true(w.exact > w.outputs * 99 / 100); /* almost every output is the rounded float itself */
}

/* Broken constants must break the bound. */
static void test_broken_fails(void **state) {
  (void)state;
  static const char *const what[] = {"", "eps dropped", "F two low", "gamma's shift one high"};
  for (int k = 1; k < 4; k++) {
    struct sweep w = run_sweep(k);
    fprintf(stderr, "qlayernorm broken (%s): %d outputs beyond the bound\n", what[k], w.violations);
    assert_true(w.violations > 0);
  }
}

/* gamma 0 and beta (k + 1/2) s_y, s_y a power of two: exact ties of the
 * output, rounded to even; a constant row gives beta too. */
static void test_ties_to_even(void **state) {
  (void)state;
  enum { N = 24 };
  float gamma[1] = {0}, beta[N];
  int32_t g[N], b[N];
  int8_t x[N], y[N];
  for (int i = 0; i < N; i++) beta[i] = (float)((i - 12 + 0.5) / 16.0), x[i] = rand_code();
  struct loom_ilayernorm l;
  assert_int_equal(loom_ilayernorm_init(0.05, 3, 1.0 / 16, -1, 1e-5, N, gamma, 1, beta, N, g, b, &l), 0);
  for (int rep = 0; rep < 2; rep++) {
    loom_ilayernorm_rows(&l, x, N, y, N, 1);
    for (int i = 0; i < N; i++) {
      int k = i - 12, want = k % 2 == 0 ? k : k + 1; /* k + 1/2 to the even neighbour */
      if (y[i] != want - 1) fail_msg("beta %d + 1/2: got %d, want %d", k, y[i] + 1, want);
    }
    memset(x, 11, sizeof x);
  }
}

/* The op: the parameter bytes through the three stored forms
 * (int8rows.h), and refusals. */
static void test_hostop(void **state) {
  (void)state;
  enum { N = 12, C = 37 };
  int8_t plain[N * C], want[N * C];
  for (int i = 0; i < N * C; i++) plain[i] = rand_code();
  float gamma[C], beta[C];
  int32_t g[C], b[C];
  for (int i = 0; i < C; i++) gamma[i] = (float)(1 + 0.3 * rand_unit()), beta[i] = (float)(0.2 * rand_unit());
  struct loom_ilayernorm l;
  assert_int_equal(loom_ilayernorm_init(0.04f, -5, 0.03f, 2, 1e-5, C, gamma, C, beta, C, g, b, &l), 0);
  loom_ilayernorm_rows(&l, plain, C, want, C, N);
  uint8_t params[4 * LOOM_QLAYERNORM_PARAM_COUNT(C)];
  loom_qlayernorm_params(&l, params);
  assert_string_equal(loom_hostop_name(LOOM_HOSTOP_QLAYERNORM), "QLAYERNORM");
  assert_int_equal(LOOM_HOSTOP_QLAYERNORM, 7); /* the file format's kind number */
  struct loom_hostop_args a;
  int8_rows_layouts(LOOM_HOSTOP_QLAYERNORM, params, sizeof params, N, C, 0.04f, -5, 0.03f, 2, plain, want, &a);
  const struct loom_file_tensor y = *a.out[0].desc;
  char msg[LOOM_MSG_MAX];

  /* refusals: each with a message */
  struct { const char *what, *expect; } cases[] = {
      {"short params", "parameters"}, {"len 36", "rows of 36"}, {"F odd", "fraction bits"},
      {"eps 2^62", "epsilon"}, {"gshift 41", "shift"}, {"float out", "int8"}, {"last dim", "last dimension"},
      {"two inputs", "input"}, {"zp 300", "zero point"}, {"no params", "parameters"},
  };
  for (int k = 0; k < 10; k++) {
    struct loom_hostop_args e = a;
    struct loom_file_tensor y2 = y;
    uint8_t p2[sizeof params];
    memcpy(p2, params, sizeof p2);
    e.params = p2, e.out[0].desc = &y2;
    if (k == 0) e.param_size -= 4;
    if (k == 1) p2[4 * LOOM_QLAYERNORM_LEN] = 36;
    if (k == 2) p2[4 * LOOM_QLAYERNORM_FRAC] |= 1;
    if (k == 3) p2[4 * LOOM_QLAYERNORM_EPS_HI + 3] = 0x40;
    if (k == 4) memset(p2 + 4 * LOOM_QLAYERNORM_GSHIFT, 0, 4), p2[4 * LOOM_QLAYERNORM_GSHIFT] = 41;
    if (k == 5) y2.dtype = LOOM_DT_F32;
    if (k == 6) y2.dims[1] = 2, y2.dims[2] = 2 * C;
    if (k == 7) e.n_in = 2, e.in[1] = a.in[0];
    if (k == 8) y2.zero_point = 300;
    if (k == 9) e.params = NULL, e.param_size = 0;
    msg[0] = 0;
    assert_int_equal(loom_hostop_run(LOOM_HOSTOP_QLAYERNORM, &e, msg), LOOM_E_INVALID);
    if (!strstr(msg, cases[k].expect)) fail_msg("%s: message '%s' lacks '%s'", cases[k].what, msg, cases[k].expect);
  }
}

static void test_init_limits(void **state) {
  (void)state;
  float one = 1, big = 3000, half = 0.5f;
  int32_t g[MAX_LEN], b[MAX_LEN];
  struct loom_ilayernorm l;
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, 1e-5, 768, &one, 1, NULL, 0, g, b, &l), 0);
  assert_int_equal(l.frac, 24); /* 45 - 2 * 10, even */
  assert_int_equal(b[767], 0);
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, -1e-5, 8, &one, 1, NULL, 0, g, b, &l), -1);
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 128, 1e-5, 8, &one, 1, NULL, 0, g, b, &l), -1);
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.0, 0, 1e-5, 8, &one, 1, NULL, 0, g, b, &l), -1);
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, 1e-5, 0, &one, 1, NULL, 0, g, b, &l), -1);
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, 1e-5, 8, &one, 2, NULL, 0, g, b, &l), -1); /* 2 of 8 */
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, 1e-5, 8, &one, 1, &big, 1, g, b, &l), -1); /* beta 2^17 steps */
  assert_int_equal(loom_ilayernorm_init(1e-6, 0, 0.02, 0, 1.0, 1024, &one, 1, &half, 1, g, b, &l), -1); /* E N^2 2^F */
  assert_int_equal(loom_ilayernorm_init(0.05, 0, 0.02, 0, NAN, 8, &one, 1, NULL, 0, g, b, &l), -1);
  assert_int_equal(loom_ilayernorm_frac(1), 44);
  assert_int_equal(loom_ilayernorm_frac(65536), 12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_float),
      cmocka_unit_test(test_broken_fails),
      cmocka_unit_test(test_ties_to_even),
      cmocka_unit_test(test_hostop),
      cmocka_unit_test(test_init_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
