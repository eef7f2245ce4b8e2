/*
 * test_lower_misc.c - max and average pooling, the requantized Add and
 * fully connected layers, lowered and run on fsim, bit-exact against
 * tests/support/ref_qconv.c, on the tiny and default configurations.
 *
 * As in test_lower_conv.c: no error or deadlock, fsim's exact counters
 * equal the lowering's prediction, and the ALU / GEMM micro-op counts equal
 * what the layer needs (one ALU micro-op per output and tap for max
 * pooling; four compute micro-ops per output row for Add).
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

#include "ref_qconv.h"

static const char *const configs[] = {"tiny", "default"};

/* fsim on packed NCHWc inputs; the unpacked output must equal `ref`. */
static void run_check(const struct lower_program *p, const int8_t *a, const int8_t *b,
                      const int8_t *ref, const char *name) {
  const struct lower_act *ia = &p->act[LOWER_SEG_IN], *oa = &p->act[LOWER_SEG_OUT];
  int8_t *pa = malloc(ia->bytes), *pb = b ? malloc(ia->bytes) : NULL, *out = malloc(oa->bytes);
  ref_to_nchwc(a, ia->n, ia->c, ia->h, ia->w, ia->block, 77, pa);
  if (b) ref_to_nchwc(b, ia->n, ia->c, ia->h, ia->w, ia->block, -77, pb);
  struct fsim_result res;
  uint32_t err = ref_q_run_fsim(p, pa, pb, out, &res);
  if (err) fprintf(stderr, "%s: fsim error %u: %s\n", name, err, res.message);
  assert_int_equal(err, LOOM_ERR_NONE);
  int bad = ref_q_counter_mismatch(p, &res);
  if (bad >= 0) fprintf(stderr, "%s: counter %s differs\n", name, loom_counter_name((uint32_t)bad));
  assert_int_equal(bad, -1);
  size_t ny = (size_t)oa->n * oa->c * oa->h * oa->w, wrong = 0;
  int8_t *y = malloc(ny);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  for (size_t i = 0; i < ny; i++)
    if (y[i] != ref[i] && wrong++ < 5)
      fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  assert_int_equal(wrong, 0);
  free(pa), free(pb), free(out), free(y);
}

/* ---- pooling ---- */

struct pool_case {
  enum lower_pool_kind kind;
  int32_t n, c, h, w, k_h, k_w, s_h, s_w, p_t, p_l, p_b, p_r;
};

static void check_pool(const struct loom_hw_config *cfg, const struct pool_case *k, struct ref_q_rng *r) {
  struct lower_qpool l = {k->kind, k->n, k->c, k->h, k->w, k->k_h, k->k_w, k->s_h, k->s_w,
                          k->p_t, k->p_l, k->p_b, k->p_r, 0, 0, 0, 0, -128, 127, 0};
  if (k->kind == LOWER_POOL_AVG) {
    assert_int_equal(lower_quantize_multiplier(0.9 / (k->k_h * k->k_w), &l.multiplier, &l.shift), 0);
    l.in_zero_point = ref_q_range(r, -10, 10), l.out_zero_point = ref_q_range(r, -10, 10);
    l.round_even = ref_q_rand(r) & 1;
  }
  char name[96];
  snprintf(name, sizeof name, "%s %dx%d k%dx%d s%d/%s", k->kind == LOWER_POOL_MAX ? "max" : "avg",
           k->h, k->w, k->k_h, k->k_w, k->s_h, cfg->name);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  int rc = lower_pool(cfg, &l, name, &p, msg);
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  const struct lower_act *oa = &p.act[LOWER_SEG_OUT];
  size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)oa->n * oa->c * oa->h * oa->w;
  int8_t *x = malloc(nx), *ref = malloc(ny);
  ref_q_fill(r, x, nx, -128, 127);
  ref_qpool(&l, x, ref);
  run_check(&p, x, NULL, ref, name);
  if (k->kind == LOWER_POOL_MAX) {
    /* Separable (lower_pool.c): k_w - 1 row maxima per window row and
     * output column, then k_h per output; else one per output and tap. */
    int32_t th = p.report.tiling.th, tw = p.report.tiling.tw;
    uint64_t cols = (uint64_t)((oa->w + tw - 1) / tw * tw);
    uint64_t blocks = (uint64_t)((k->c + cfg->block_out - 1) / cfg->block_out);
    int sep = k->k_w >= 2 && k->s_h <= k->k_h;
    for (int32_t kw = 1; kw <= k->k_w - 2; kw++) sep = sep && kw % k->s_w != 0;
    uint64_t per_col = 0;
    for (int32_t oy = 0; oy < oa->h; oy += th) {
      int32_t rows = oa->h - oy < th ? oa->h - oy : th;
      per_col += sep ? (uint64_t)(k->k_w - 1) * (uint64_t)((rows - 1) * k->s_h + k->k_h) +
                           (uint64_t)k->k_h * (uint64_t)rows
                     : (uint64_t)rows * (uint64_t)(k->k_h * k->k_w);
    }
    assert_true(p.report.counters[LOOM_CNT_ALU_OPS] == (uint64_t)k->n * blocks * cols * per_col);
  }
  free(x), free(ref);
  lower_program_free(&p);
}

static void test_pool(void **state) {
  (void)state;
  static const struct pool_case cases[] = {
      {LOWER_POOL_MAX, 1, 16, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0},
      {LOWER_POOL_MAX, 1, 20, 15, 15, 3, 3, 2, 2, 1, 1, 1, 1}, /* ResNet's stem pooling, small */
      {LOWER_POOL_MAX, 2, 9, 7, 11, 3, 2, 1, 2, 1, 0, 1, 1},
      {LOWER_POOL_MAX, 1, 40, 30, 30, 3, 3, 2, 2, 1, 1, 1, 1},
      {LOWER_POOL_MAX, 1, 8, 5, 70, 3, 3, 1, 1, 1, 1, 1, 1},
      {LOWER_POOL_AVG, 1, 16, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0},
      {LOWER_POOL_AVG, 1, 24, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1},
      {LOWER_POOL_AVG, 2, 33, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0},   /* GlobalAveragePool */
      {LOWER_POOL_AVG, 1, 5, 6, 5, 6, 5, 1, 1, 0, 0, 0, 0},    /* global, odd shape */
  };
  struct ref_q_rng r = {42};
  for (size_t c = 0; c < 2; c++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
      check_pool(loom_hw_config_by_name(configs[c]), &cases[i], &r);
}

/* ---- Add ---- */

static void check_add(const struct loom_hw_config *cfg, int32_t n, int32_t c, int32_t h, int32_t w,
                      double ma, double mb, struct ref_q_rng *r) {
  struct lower_qadd l = {n, c, h, w, 0, 0, 0, 0, 0, 0, 0, -128, 127, 0};
  assert_int_equal(lower_add_scales(ma, mb, &l), 0);
  l.a_zero_point = ref_q_range(r, -20, 20), l.b_zero_point = ref_q_range(r, -20, 20);
  l.out_zero_point = ref_q_range(r, -5, 5), l.round_even = ref_q_rand(r) & 1;
  if (ref_q_rand(r) & 1) l.clamp_lo = l.out_zero_point; /* Add + ReLU */
  char name[96];
  snprintf(name, sizeof name, "add %dx%dx%dx%d/%s", n, c, h, w, cfg->name);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  int rc = lower_add(cfg, &l, name, &p, msg);
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  size_t total = (size_t)n * c * h * w;
  int8_t *a = malloc(total), *b = malloc(total), *ref = malloc(total);
  ref_q_fill(r, a, total, -128, 127);
  ref_q_fill(r, b, total, -128, 127);
  ref_qadd(&l, a, b, ref);
  run_check(&p, a, b, ref, name);
  uint64_t rows = (uint64_t)n * (uint64_t)((c + cfg->block_out - 1) / cfg->block_out) * (uint64_t)(h * w);
  assert_true(p.report.counters[LOOM_CNT_GEMM_OPS] == 2 * rows);
  assert_true(p.report.counters[LOOM_CNT_ALU_OPS] == 0); /* ISA v2: the epilogue rides on the GEMM */
  free(a), free(b), free(ref);
  lower_program_free(&p);
}

static void test_add(void **state) {
  (void)state;
  struct ref_q_rng r = {7};
  for (size_t c = 0; c < 2; c++) {
    const struct loom_hw_config *cfg = loom_hw_config_by_name(configs[c]);
    check_add(cfg, 1, 16, 4, 4, 0.5, 0.5, &r);
    check_add(cfg, 1, 21, 9, 7, 0.81, 0.33, &r);
    check_add(cfg, 2, 40, 13, 13, 0.12, 1.7, &r);
    check_add(cfg, 1, 64, 28, 28, 0.6, 0.45, &r);
    check_add(cfg, 1, 3, 1, 300, 1.0, 0.02, &r);
  }
}

/* lower_add_scales: the larger term exact, the smaller within 1/254 of the
 * larger scale (int8 operand weights: the best ratio with denominators up
 * to 127). */
static void test_add_scales(void **state) {
  (void)state;
  struct ref_q_rng r = {3};
  for (int i = 0; i < 400; i++) {
    double ma = 0.01 + (ref_q_rand(&r) % 10000) / 5000.0, mb = 0.01 + (ref_q_rand(&r) % 10000) / 5000.0;
    struct lower_qadd q;
    assert_int_equal(lower_add_scales(ma, mb, &q), 0);
    double m = ldexp((double)q.multiplier, -(int)q.shift), big = ma > mb ? ma : mb;
    double ea = fabs(q.a_weight * m - ma), eb = fabs(q.b_weight * m - mb);
    assert_true((ma >= mb ? ea : eb) / big < 1e-8);
    assert_true((ea > eb ? ea : eb) / big <= 1.0 / 254);
    assert_true(q.a_weight >= 1 && q.a_weight <= 127 && q.b_weight >= 1 && q.b_weight <= 127);
  }
  int32_t m;
  uint32_t s;
  assert_int_equal(lower_quantize_multiplier(0.0, &m, &s), -1);
  assert_int_equal(lower_quantize_multiplier(0.75, &m, &s), 0);
  assert_int_equal(m, 3 << 29);
  assert_int_equal(s, 31);
}

/* ---- fully connected ---- */

static void check_fc(const struct loom_hw_config *cfg, int32_t n, int32_t in, int32_t out, struct ref_q_rng *r) {
  int8_t *w = malloc((size_t)in * out), *x = malloc((size_t)n * in), *ref = malloc((size_t)n * out);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)out), *mult = malloc(sizeof(int32_t) * (size_t)out);
  ref_q_fill(r, w, (size_t)in * out, -128, 127);
  ref_q_fill(r, x, (size_t)n * in, -128, 127);
  struct lower_qfc l = {n, in, out, w, bias, mult, 0, ref_q_range(r, -9, 9), ref_q_range(r, -9, 9), -128, 127, 0, 1, 0, NULL, NULL};
  double sigma = 74.0 * 74.0 * sqrt((double)in);
  int32_t m0;
  assert_int_equal(lower_quantize_multiplier(60.0 / sigma, &m0, &l.shift), 0);
  for (int32_t o = 0; o < out; o++) {
    bias[o] = ref_q_range(r, -(int32_t)sigma, (int32_t)sigma);
    mult[o] = m0 / 2 + (int32_t)(ref_q_rand(r) % (uint32_t)(m0 / 2));
  }
  char name[64];
  snprintf(name, sizeof name, "fc %dx%d->%d/%s", n, in, out, cfg->name);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  int rc = lower_fc(cfg, &l, name, &p, msg);
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  assert_int_equal(p.report.kind, LOWER_KIND_FC);
  ref_qfc(&l, x, ref);
  run_check(&p, x, NULL, ref, name);
  free(w), free(x), free(ref), free(bias), free(mult);
  lower_program_free(&p);
}

static void test_fc(void **state) {
  (void)state;
  struct ref_q_rng r = {11};
  for (size_t c = 0; c < 2; c++) {
    const struct loom_hw_config *cfg = loom_hw_config_by_name(configs[c]);
    check_fc(cfg, 1, 64, 10, &r);
    check_fc(cfg, 3, 100, 37, &r);
    check_fc(cfg, 1, 512, 1000, &r); /* ResNet-18's classifier: weights stream */
  }
}

static void test_errors(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("default");
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  struct lower_qpool l = {LOWER_POOL_MAX, 1, 8, 8, 8, 3, 3, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, -128, 127, 0};
  assert_int_equal(lower_pool(cfg, &l, "net.onnx: node pool1", &p, msg), -1);
  assert_non_null(strstr(msg, "net.onnx: node pool1: padding"));
  lower_program_free(&p);
  struct lower_qadd a = {1, 8, 2, 2, 0, 300, 1, 1, 1 << 30, 31, 0, -128, 127, 0};
  assert_int_equal(lower_add(cfg, &a, "add1", &p, msg), -1);
  lower_program_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pool),   cmocka_unit_test(test_add), cmocka_unit_test(test_add_scales),
      cmocka_unit_test(test_fc),     cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
