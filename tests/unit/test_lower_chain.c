/*
 * test_lower_chain.c - fused chains of layers (lower_chain.c) run on fsim,
 * bit-exact against the reference applied layer by layer
 * (tests/support/ref_qconv.c): [1x1 expansion ->] depthwise -> 1x1
 * projection [+ the chain's input as a residual Add].
 *
 * Each case is lowered with the chosen tiling on the tiny and the default
 * configuration, and on the tiny one with every tiling (bands x groups)
 * that fits: the bands' halo rows, the short last band and group, the
 * weight and parameter slots by parity, the third input buffer of a
 * residual chain with one group and the depthwise passes of a 5x5 window
 * all change with the tiling.  fsim must end without error or deadlock,
 * its exact counters must equal the lowering's prediction, and no DRAM byte
 * of the intermediate tensors may move: BYTES_WR_OUT is the output once.
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

struct chain_case {
  const char *name;
  int32_t n, in_c, h, w, exp_c, out_c; /* exp_c 0: no expansion (the depthwise reads in_c) */
  int32_t k, s, pad, dil;              /* the depthwise window, stride, padding (all sides), dilation */
  int residual;
};

struct layer {
  struct lower_qconv l;
  struct lower_qresidual res;
  int8_t *w;
  int32_t *bias, *mult;
};

static void make_layer(struct ref_q_rng *r, struct layer *d, int32_t n, int32_t in_c, int32_t h, int32_t w,
                       int32_t out_c, int32_t k, int32_t s, int32_t pad, int32_t dil, int dw, int32_t in_zp) {
  struct lower_qconv *l = &d->l;
  memset(d, 0, sizeof *d);
  l->n = n, l->in_c = in_c, l->in_h = h, l->in_w = w, l->out_c = out_c;
  l->k_h = l->k_w = k, l->stride_h = l->stride_w = s, l->pad_t = l->pad_l = l->pad_b = l->pad_r = pad;
  l->dil_h = l->dil_w = dil, l->groups = dw ? in_c : 1;
  size_t per_out = (size_t)(in_c / l->groups) * (size_t)(k * k);
  d->w = malloc((size_t)out_c * per_out);
  d->bias = malloc(sizeof(int32_t) * (size_t)out_c);
  d->mult = malloc(sizeof(int32_t) * (size_t)out_c);
  ref_q_fill(r, d->w, (size_t)out_c * per_out, -128, 127);
  double sigma = 74.0 * 74.0 * sqrt((double)per_out);
  int32_t m_max;
  assert_int_equal(lower_quantize_multiplier(40.0 / sigma * 1.5, &m_max, &l->shift), 0);
  for (int32_t o = 0; o < out_c; o++) {
    d->bias[o] = ref_q_range(r, -(int32_t)sigma, (int32_t)sigma);
    double real = 40.0 / sigma * (0.5 + (ref_q_rand(r) % 1000) / 1000.0);
    d->mult[o] = (int32_t)llround(ldexp(real, (int)l->shift));
  }
  l->weights = d->w, l->bias = d->bias, l->multiplier = d->mult;
  l->in_zero_point = in_zp;
  l->out_zero_point = ref_q_range(r, -10, 10);
  int clamp = (int)(ref_q_rand(r) % 3);
  l->clamp_lo = clamp ? l->out_zero_point : -128;
  l->clamp_hi = clamp == 2 ? l->out_zero_point + 60 : 127;
  l->round_even = ref_q_rand(r) & 1;
}

static void free_layer(struct layer *d) { free(d->w), free(d->bias), free(d->mult); }

struct chain_data {
  struct layer pw1, dw, pw2;
  struct lower_qchain c;
};

static void make_chain(struct ref_q_rng *r, const struct chain_case *k, struct chain_data *d) {
  int32_t ec = k->exp_c ? k->exp_c : k->in_c, zp = ref_q_range(r, -20, 20);
  if (k->exp_c) {
    make_layer(r, &d->pw1, k->n, k->in_c, k->h, k->w, ec, 1, 1, 0, 1, 0, zp);
    zp = d->pw1.l.out_zero_point;
  }
  make_layer(r, &d->dw, k->n, ec, k->h, k->w, ec, k->k, k->s, k->pad, k->dil, 1, zp);
  int32_t oh = ref_q_out_size(k->h, k->k, k->s, k->dil, k->pad, k->pad);
  int32_t ow = ref_q_out_size(k->w, k->k, k->s, k->dil, k->pad, k->pad);
  make_layer(r, &d->pw2, k->n, ec, oh, ow, k->out_c, 1, 1, 0, 1, 0, d->dw.l.out_zero_point);
  if (k->residual) {
    struct lower_qadd q;
    assert_int_equal(lower_add_scales(0.3 + (ref_q_rand(r) % 100) / 100.0, 0.4, &q), 0);
    struct lower_qresidual res = {q.a_weight, q.b_weight, k->exp_c ? d->pw1.l.in_zero_point : 0, q.multiplier,
                                  q.shift, ref_q_range(r, -5, 5), -128, 127, ref_q_rand(r) & 1};
    if (ref_q_rand(r) & 1) res.clamp_lo = res.out_zero_point;
    d->pw2.res = res;
    d->pw2.l.residual = &d->pw2.res;
  }
  d->c = (struct lower_qchain){k->exp_c ? &d->pw1.l : NULL, &d->dw.l, &d->pw2.l};
}

static void free_chain(const struct chain_case *k, struct chain_data *d) {
  if (k->exp_c) free_layer(&d->pw1);
  free_layer(&d->dw), free_layer(&d->pw2);
}

/* Lowered chain -> fsim -> compare with the layers' reference; returns
 * the mismatching outputs. */
static size_t run_and_compare(const struct lower_program *p, const struct chain_case *k, const struct chain_data *d,
                              struct ref_q_rng *r, const char *name) {
  const struct lower_act *ia = &p->act[LOWER_SEG_IN], *oa = &p->act[LOWER_SEG_OUT];
  int32_t ec = k->exp_c ? k->exp_c : k->in_c;
  size_t nx = (size_t)k->n * k->in_c * k->h * k->w, ne = (size_t)k->n * ec * k->h * k->w;
  size_t nd = (size_t)k->n * ec * oa->h * oa->w, ny = (size_t)oa->n * oa->c * oa->h * oa->w;
  int8_t *x = malloc(nx), *packed = malloc(ia->bytes), *out = malloc(oa->bytes), *e = malloc(ne);
  int8_t *t = malloc(nd), *y = malloc(ny), *ref = malloc(ny);
  ref_q_fill(r, x, nx, -128, 127);
  ref_to_nchwc(x, k->n, k->in_c, k->h, k->w, ia->block, (int8_t)ref_q_range(r, -128, 127), packed);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(p, packed, k->residual ? packed : NULL, out, &fr);
  if (err) fprintf(stderr, "%s: fsim error %u: %s\n", name, err, fr.message);
  assert_int_equal(err, LOOM_ERR_NONE);
  int bad = ref_q_counter_mismatch(p, &fr);
  if (bad >= 0)
    fprintf(stderr, "%s: counter %s: fsim %llu, predicted %llu\n", name, loom_counter_name((uint32_t)bad),
            (unsigned long long)fr.counters[bad], (unsigned long long)p->report.counters[bad]);
  assert_int_equal(bad, -1);
  assert_true(fr.counters[LOOM_CNT_BYTES_WR_OUT] == oa->bytes); /* nothing but the output is stored */
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  if (k->exp_c) ref_qconv(&d->pw1.l, x, NULL, e);
  else memcpy(e, x, ne);
  ref_qconv(&d->dw.l, e, NULL, t);
  ref_qconv(&d->pw2.l, t, k->residual ? x : NULL, ref);
  size_t wrong = 0;
  for (size_t i = 0; i < ny; i++)
    if (y[i] != ref[i] && wrong++ < 5) fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  free(x), free(packed), free(out), free(e), free(t), free(y), free(ref);
  return wrong;
}

static const struct chain_case cases[] = {
    /* name            n  in_c  h  w  exp  out  k  s pad dil res */
    {"ir_residual",    1, 8,   6, 6, 24,  8,   3, 1, 1, 1, 1},
    {"ir_stride2",     1, 8,   7, 9, 16,  12,  3, 2, 1, 1, 0},
    {"ir_odd",         2, 5,   5, 4, 20,  5,   3, 1, 1, 1, 1},
    {"dw_first",       1, 16,  6, 6, 0,   8,   3, 1, 1, 1, 0},
    {"dw_5x5",         1, 8,   7, 7, 12,  8,   5, 1, 2, 1, 1},
    {"dw_5x5_s2",      1, 12,  9, 8, 0,   16,  5, 2, 2, 1, 0},
    {"dilated",        1, 8,   7, 7, 16,  8,   3, 1, 2, 2, 0},
    {"par_slots",      1, 8,   5, 5, 136, 8,   3, 1, 1, 1, 1}, /* PAR rows per group (tiny) */
    {"par_slots_dw",   1, 264, 4, 4, 0,   8,   3, 1, 1, 1, 0},
};

static void check(const struct loom_hw_config *cfg, const struct chain_case *k, int32_t th, int32_t g,
                  uint64_t seed, int *ran) {
  struct ref_q_rng r = {seed * 0x9E3779B97F4A7C15u + 1};
  struct chain_data d;
  memset(&d, 0, sizeof d);
  make_chain(&r, k, &d);
  struct lower_program p;
  char msg[LOWER_MSG_MAX], name[128];
  snprintf(name, sizeof name, "%s/%s/%dx%d", k->name, cfg->name, th, g);
  int rc = th ? lower_chain_tiled(cfg, &d.c, th, g, name, &p, msg) : lower_chain(cfg, &d.c, name, &p, msg);
  if (rc && !th) fprintf(stderr, "%s\n", msg);
  if (!th) assert_int_equal(rc, 0);
  if (rc == 0) {
    assert_int_equal(p.report.kind, LOWER_KIND_CHAIN);
    assert_int_equal(run_and_compare(&p, k, &d, &r, name), 0);
    (*ran)++;
  }
  lower_program_free(&p);
  free_chain(k, &d);
}

static void test_cases(void **state) {
  (void)state;
  int ran = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check(loom_hw_config_by_name("tiny"), &cases[i], 0, 0, i + 1, &ran);
    check(loom_hw_config_by_name("default"), &cases[i], 0, 0, i + 101, &ran);
  }
}

/* Every tiling that fits the tiny configuration. */
static void test_tilings(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("tiny");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const struct chain_case *k = &cases[i];
    int32_t ec = k->exp_c ? k->exp_c : k->in_c, eb = (ec + cfg->block_in - 1) / cfg->block_in;
    int32_t oh = ref_q_out_size(k->h, k->k, k->s, k->dil, k->pad, k->pad), ran = 0;
    for (int32_t th = 1; th <= oh; th++)
      for (int32_t g = 1; g <= eb; g++) check(cfg, k, th, g, 1000 + i * 64 + (size_t)(th * 8 + g), &ran);
    if (ran == 0) fprintf(stderr, "%s: no tiling fits tiny\n", k->name);
    assert_true(ran > 0);
  }
}

/* A MobileNetV2 block at full size on the default configuration. */
static void test_mobilenet_block(void **state) {
  (void)state;
  static const struct chain_case blk = {"mbv2_28x28", 1, 32, 28, 28, 192, 32, 3, 1, 1, 1, 1};
  int ran = 0;
  check(loom_hw_config_by_name("default"), &blk, 0, 0, 7, &ran);
}

static void test_errors(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("tiny");
  struct ref_q_rng r = {5};
  struct chain_data d;
  memset(&d, 0, sizeof d);
  make_chain(&r, &cases[1], &d);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  d.pw2.l.in_zero_point++; /* the projection does not read the depthwise output's quantization */
  assert_int_equal(lower_chain(cfg, &d.c, "m: n", &p, msg), -1);
  assert_non_null(strstr(msg, "m: n: the chain's layers do not connect"));
  lower_program_free(&p);
  d.pw2.l.in_zero_point--;
  d.pw2.l.residual = &d.pw2.res; /* stride 2 cannot add the chain's input */
  assert_int_equal(lower_chain(cfg, &d.c, "m: n", &p, msg), -1);
  assert_non_null(strstr(msg, "fused Add"));
  lower_program_free(&p);
  d.pw2.l.residual = NULL;
  assert_int_equal(lower_chain_tiled(cfg, &d.c, 99, 1, "m: n", &p, msg), -1);
  lower_program_free(&p);
  free_chain(&cases[1], &d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_tilings),
      cmocka_unit_test(test_mobilenet_block),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
