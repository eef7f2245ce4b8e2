/*
 * test_lower_conv.c - convolutions lowered onto the ISA and run on fsim,
 * bit-exact against the plain C reference (tests/support/ref_qconv.c).
 *
 * Each case lowers a layer for the tiny and the default configuration,
 * packs random int8 data (padded channel lanes get garbage: they must not
 * matter), runs the job on fsim and compares every output value.  It also
 * checks that the job ends without error or deadlock, that fsim's exact
 * counters equal the lowering's prediction, and that GEMM_OPS equals the
 * count computed here from the layer (useful MACs / peak plus the padding
 * waste: partial channel blocks, and the recomputed columns of a shifted
 * last column tile), so the utilization the report claims is backed by
 * counted micro-ops.
 *
 * The shapes cover 1x1, 3x3, 5x5 and 7x7 kernels, strides 1 and 2,
 * asymmetric padding, dilation, channel counts that are not multiples of
 * the block, grouped and depthwise convolutions, the im2col-folded stem,
 * several images, spatial sizes that are not multiples of the tile, and a
 * sweep of forced tilings (both loop orders, both weight modes, reduction
 * chunks, column tiles) on the tiny configuration, and the residual Add
 * fused into the convolution.
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

struct conv_case {
  const char *name;
  int32_t n, in_c, h, w, out_c, k_h, k_w, s_h, s_w, p_t, p_l, p_b, p_r, d_h, d_w, groups;
  uint32_t flags;
  int residual; /* fuse a residual Add */
};

struct conv_data {
  struct lower_qconv l;
  struct lower_qresidual res;
  int8_t *w;
  int32_t *bias, *mult;
};

/* Random weights and parameters whose outputs spread over the int8 range. */
static void make_conv(struct ref_q_rng *r, const struct conv_case *k, struct conv_data *d) {
  struct lower_qconv *l = &d->l;
  memset(d, 0, sizeof *d);
  l->n = k->n, l->in_c = k->in_c, l->in_h = k->h, l->in_w = k->w, l->out_c = k->out_c;
  l->k_h = k->k_h, l->k_w = k->k_w, l->stride_h = k->s_h, l->stride_w = k->s_w;
  l->pad_t = k->p_t, l->pad_l = k->p_l, l->pad_b = k->p_b, l->pad_r = k->p_r;
  l->dil_h = k->d_h, l->dil_w = k->d_w, l->groups = k->groups, l->flags = k->flags;
  size_t per_out = (size_t)(k->in_c / k->groups) * (size_t)(k->k_h * k->k_w);
  d->w = malloc((size_t)k->out_c * per_out);
  d->bias = malloc(sizeof(int32_t) * (size_t)k->out_c);
  d->mult = malloc(sizeof(int32_t) * (size_t)k->out_c);
  ref_q_fill(r, d->w, (size_t)k->out_c * per_out, -128, 127);
  double sigma = 74.0 * 74.0 * sqrt((double)per_out);
  int32_t m_max;
  assert_int_equal(lower_quantize_multiplier(40.0 / sigma * 1.5, &m_max, &l->shift), 0);
  for (int32_t o = 0; o < k->out_c; o++) {
    d->bias[o] = ref_q_range(r, -(int32_t)sigma, (int32_t)sigma);
    double real = 40.0 / sigma * (0.5 + (ref_q_rand(r) % 1000) / 1000.0); /* one shift per layer */
    d->mult[o] = (int32_t)llround(ldexp(real, (int)l->shift));
  }
  l->weights = d->w, l->bias = d->bias, l->multiplier = d->mult;
  l->in_zero_point = ref_q_range(r, -20, 20);
  l->out_zero_point = ref_q_range(r, -10, 10);
  int clamp = (int)(ref_q_rand(r) % 3);
  l->clamp_lo = clamp ? l->out_zero_point : -128;           /* ReLU */
  l->clamp_hi = clamp == 2 ? l->out_zero_point + 60 : 127;  /* ReLU6-like */
  l->round_even = ref_q_rand(r) & 1;
  if (k->residual) {
    struct lower_qadd q;
    assert_int_equal(lower_add_scales(0.3 + (ref_q_rand(r) % 100) / 100.0, 0.4, &q), 0);
    struct lower_qresidual res = {q.a_weight, q.b_weight, ref_q_range(r, -20, 20), q.multiplier,
                                  q.shift, ref_q_range(r, -5, 5), -128, 127, ref_q_rand(r) & 1};
    if (ref_q_rand(r) & 1) res.clamp_lo = res.out_zero_point; /* Add + ReLU */
    d->res = res;
    l->residual = &d->res;
  }
}

static void free_conv(struct conv_data *d) {
  free(d->w), free(d->bias), free(d->mult);
}

/* GEMM_OPS from the layer alone: every (output pixel computed, out block,
 * in block, tap), with shifted column tiles computing tw columns each. */
static uint64_t expected_gemm_ops(const struct loom_hw_config *cfg, const struct lower_program *p,
                                  const struct lower_qconv *l) {
  int32_t B = cfg->block_in, oh = p->act[LOWER_SEG_OUT].h, ow = p->act[LOWER_SEG_OUT].w;
  int32_t tw = p->report.tiling.tw, cols = (ow + tw - 1) / tw * tw;
  uint64_t cob = (uint64_t)((l->out_c + B - 1) / B), kk = (uint64_t)(l->k_h * l->k_w);
  uint64_t pix = (uint64_t)l->n * (uint64_t)oh * (uint64_t)cols;
  uint64_t res = l->residual ? pix * cob : 0; /* the residual's identity GEMM */
  switch (p->report.kind) {
  case LOWER_KIND_DWCONV: { /* a micro-op per pixel and pass of whole window rows (ISA v2) */
    int32_t rows = B / l->k_w < l->k_h ? B / l->k_w : l->k_h;
    return res + pix * cob * (uint64_t)((l->k_h + rows - 1) / rows);
  }
  case LOWER_KIND_CONV_IM2COL: return res + pix * cob * (uint64_t)((l->in_c * (int32_t)kk + B - 1) / B);
  default: return res + pix * cob * (uint64_t)((l->in_c + B - 1) / B) * kk;
  }
}

/* Lowered program -> fsim -> compare with the reference.  Returns the
 * number of mismatching outputs (0 expected). */
static size_t run_and_compare(const struct lower_program *p, const struct lower_qconv *l,
                              struct ref_q_rng *r, const char *name) {
  const struct lower_act *ia = &p->act[LOWER_SEG_IN], *oa = &p->act[LOWER_SEG_OUT];
  size_t nx = (size_t)l->n * l->in_c * l->in_h * l->in_w;
  size_t ny = (size_t)oa->n * oa->c * oa->h * oa->w;
  int8_t *x = malloc(nx), *packed = malloc(ia->bytes), *out = malloc(oa->bytes);
  int8_t *y = malloc(ny), *ref = malloc(ny), *res = NULL, *res_packed = NULL;
  ref_q_fill(r, x, nx, -128, 127);
  if (l->residual) {
    res = malloc(ny), res_packed = malloc(oa->bytes);
    ref_q_fill(r, res, ny, -128, 127);
    ref_to_nchwc(res, oa->n, oa->c, oa->h, oa->w, oa->block, 55, res_packed);
  }
  int8_t garbage = (int8_t)ref_q_range(r, -128, 127);
  if (ia->layout == LOWER_ACT_NCHWC)
    ref_to_nchwc(x, l->n, l->in_c, l->in_h, l->in_w, ia->block, garbage, packed);
  else
    lower_act_pack(ia, x, garbage, packed);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(p, packed, res_packed, out, &fr);
  if (err) fprintf(stderr, "%s: fsim error %u: %s\n", name, err, fr.message);
  assert_int_equal(err, LOOM_ERR_NONE);
  int bad = ref_q_counter_mismatch(p, &fr);
  if (bad >= 0)
    fprintf(stderr, "%s: counter %s: fsim %llu, predicted %llu\n", name, loom_counter_name((uint32_t)bad),
            (unsigned long long)fr.counters[bad], (unsigned long long)p->report.counters[bad]);
  assert_int_equal(bad, -1);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  ref_qconv(l, x, res, ref);
  size_t wrong = 0;
  for (size_t i = 0; i < ny; i++) {
    if (y[i] != ref[i] && wrong++ < 5)
      fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  }
  free(x), free(packed), free(out), free(y), free(ref), free(res), free(res_packed);
  return wrong;
}

static void check_case(const struct loom_hw_config *cfg, const struct conv_case *k, uint64_t seed) {
  struct ref_q_rng r = {seed * 0x9E3779B97F4A7C15u + 1};
  struct conv_data d;
  make_conv(&r, k, &d);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  char name[128];
  snprintf(name, sizeof name, "%s/%s", k->name, cfg->name);
  int rc = lower_conv(cfg, &d.l, name, &p, msg);
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  assert_int_equal(run_and_compare(&p, &d.l, &r, name), 0);
  assert_true(p.report.counters[LOOM_CNT_GEMM_OPS] == expected_gemm_ops(cfg, &p, &d.l));
  assert_true(p.report.macs <= p.report.counters[LOOM_CNT_GEMM_OPS] * loom_hw_peak_macs(cfg));
  lower_program_free(&p);
  free_conv(&d);
}

static const struct conv_case cases[] = {
    /* name        n  ic  h   w  oc kh kw sh sw pt pl pb pr dh dw  g  flags */
    {"1x1",        1, 16, 8,  8, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0},
    {"3x3",        1, 16, 9,  9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"3x3s2",      1, 32, 13, 11, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"odd_ch",     1, 19, 7,  10, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"5x5_asym",   1, 5,  12, 9, 7, 5, 5, 1, 2, 2, 1, 0, 2, 1, 1, 1, 0, 0},
    {"1x1s2",      1, 24, 14, 14, 40, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0},
    {"dil2",       1, 8,  11, 11, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0},
    {"batch2",     2, 12, 6,  5, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"groups2",    1, 12, 8,  8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0},
    {"depthwise",  1, 24, 10, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 0, 0},
    {"dw_s2",      1, 40, 13, 13, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 40, 0, 0},
    {"stem_direct",1, 3,  30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 0},
    {"stem_im2col",1, 3,  30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, LOWER_CONV_ALLOW_IM2COL, 0},
    {"im2col_3x3", 2, 3,  9,  12, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, LOWER_CONV_ALLOW_IM2COL, 0},
    {"wide",       1, 8,  3,  70, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"deep",       1, 96, 5,  5, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    {"1x7",        1, 16, 9,  12, 16, 1, 7, 1, 1, 0, 3, 0, 3, 1, 1, 1, 0, 0},
    {"residual",   1, 16, 9,  9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {"res_odd",    2, 21, 7,  11, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {"res_1x1s2",  1, 24, 14, 14, 40, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 1},
    {"res_deep",   1, 96, 5,  5, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {"res_dw",     1, 24, 10, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 0, 1},
    {"res_wide",   1, 8,  3,  70, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    /* more output blocks than PAR rows on tiny: PAR slots by tile */
    {"par_slots",  1, 16, 4,  4, 300, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0},
    {"par_slots3", 1, 8,  5,  6, 280, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
};

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check_case(loom_hw_config_by_name("tiny"), &cases[i], i);
    check_case(loom_hw_config_by_name("default"), &cases[i], i + 100);
  }
}

/* Random shapes, both configurations. */
static void test_random(void **state) {
  (void)state;
  struct ref_q_rng r = {12345};
  for (int i = 0; i < 40; i++) {
    struct conv_case k = {"random", 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0};
    static const int32_t ks[] = {1, 1, 3, 3, 3, 5};
    k.k_h = ks[ref_q_rand(&r) % 6];
    k.k_w = ref_q_rand(&r) % 4 ? k.k_h : ks[ref_q_rand(&r) % 6];
    k.s_h = k.s_w = 1 + (int32_t)(ref_q_rand(&r) % 2);
    k.p_t = k.p_b = k.k_h / 2, k.p_l = k.p_r = k.k_w / 2;
    if (ref_q_rand(&r) % 4 == 0) k.p_b = 0;
    k.h = ref_q_range(&r, k.k_h, 20), k.w = ref_q_range(&r, k.k_w, 20);
    k.n = ref_q_rand(&r) % 5 == 0 ? 2 : 1;
    k.in_c = ref_q_range(&r, 1, 48), k.out_c = ref_q_range(&r, 1, 48);
    if (ref_q_rand(&r) % 6 == 0) k.groups = k.out_c = k.in_c; /* depthwise */
    if (ref_q_rand(&r) % 5 == 0) k.flags = LOWER_CONV_ALLOW_IM2COL;
    k.residual = ref_q_rand(&r) % 4 == 0;
    const char *cfg = i % 2 ? "default" : "tiny";
    check_case(loom_hw_config_by_name(cfg), &k, 1000 + (uint64_t)i);
  }
}

/* Weights beyond int8 as 2-4 int8 parts, and int32 results as byte lanes
 * (LOWER_CONV_ACC_OUT), with biases over the whole int32 range so the
 * accumulators reach the extremes where the byte extraction could wrap. */
static void test_wide(void **state) {
  (void)state;
  struct ref_q_rng r = {4242};
  for (int i = 0; i < 24; i++) {
    struct conv_case k = {"wide", 1, 0, 0, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    if (i % 3 == 0) k.k_h = k.k_w = 1, k.p_t = k.p_l = k.p_b = k.p_r = 0;
    k.h = ref_q_range(&r, 3, 9), k.w = ref_q_range(&r, 3, 9);
    k.in_c = ref_q_range(&r, 1, 40), k.out_c = ref_q_range(&r, 1, 20);
    if (i % 5 == 4) k.groups = k.out_c = k.in_c; /* depthwise, expanded into a dense layer */
    if (i % 2) k.flags = LOWER_CONV_ACC_OUT;
    const struct loom_hw_config *cfg = loom_hw_config_by_name(i % 4 < 2 ? "tiny" : "default");
    struct conv_data d;
    make_conv(&r, &k, &d);
    uint32_t passes = 1 + (uint32_t)(i % 4);
    size_t nw = (size_t)k.out_c * (size_t)(k.in_c / k.groups) * (size_t)(k.k_h * k.k_w);
    int8_t *w = malloc(nw * passes);
    ref_q_fill(&r, w, nw * passes, -128, 127);
    d.l.weights = w, d.l.in_passes = passes;
    if (k.flags & LOWER_CONV_ACC_OUT)
      for (int32_t o = 0; o < k.out_c; o++) d.bias[o] = (int32_t)ref_q_rand(&r);
    struct lower_program p;
    char msg[LOWER_MSG_MAX], name[64];
    snprintf(name, sizeof name, "wide %d/%s", i, cfg->name);
    int rc = lower_conv(cfg, &d.l, name, &p, msg);
    if (rc) fprintf(stderr, "%s\n", msg);
    assert_int_equal(rc, 0);
    assert_int_equal(run_and_compare(&p, &d.l, &r, name), 0);
    lower_program_free(&p);
    free(w);
    free_conv(&d);
  }
}

/* Every tiling in a sweep must give the same bits. */
static void check_forced(const struct loom_hw_config *cfg, const struct conv_case *k, int *count) {
  struct ref_q_rng r = {777};
  struct conv_data d;
  make_conv(&r, k, &d);
  int32_t ths[] = {1, 2, 3, 5}, tws[] = {3, 7, 100}, tcs[] = {1, 2, 3};
  for (int order = 0; order < TILE_ORDER_COUNT; order++)
    for (int wgt = 0; wgt < TILE_WGT_COUNT; wgt++)
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
          for (int c = 0; c < 3; c++)
            for (int e = 0; e < 3; e++) {
              struct lower_tiling t = {0};
              t.order = (enum tile_order)order, t.wgt = (enum tile_wgt)wgt;
              t.th = ths[a], t.tw = tws[b] > 10 ? 10 : tws[b], t.tco = tcs[c], t.tci = tcs[e];
              struct lower_program p;
              char msg[LOWER_MSG_MAX];
              if (lower_conv_tiled(cfg, &d.l, &t, k->name, &p, msg) != 0) continue;
              char name[160];
              snprintf(name, sizeof name, "%s th%d tw%d co%d ci%d %s %s", k->name, t.th, t.tw, t.tco,
                       t.tci, tile_order_names[order], tile_wgt_names[wgt]);
              assert_int_equal(run_and_compare(&p, &d.l, &r, name), 0);
              assert_true(p.report.counters[LOOM_CNT_GEMM_OPS] == expected_gemm_ops(cfg, &p, &d.l));
              lower_program_free(&p);
              (*count)++;
            }
  free_conv(&d);
}

static void test_forced_tilings(void **state) {
  (void)state;
  const struct loom_hw_config *tiny = loom_hw_config_by_name("tiny");
  static const struct conv_case dense = {"sweep", 1, 20, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  static const struct conv_case dw = {"sweep_dw", 2, 24, 7, 10, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 24, 0, 0};
  int count = 0;
  static const struct conv_case res = {"sweep_res", 1, 20, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1};
  check_forced(tiny, &dense, &count);
  check_forced(tiny, &dw, &count);
  check_forced(tiny, &res, &count);
  assert_true(count > 40);
}

/* A layer that cannot be lowered is a clear error, never a crash. */
static void test_errors(void **state) {
  (void)state;
  const struct loom_hw_config *cfg = loom_hw_config_by_name("default");
  struct ref_q_rng r = {5};
  struct conv_data d;
  static const struct conv_case k = {"err", 1, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  make_conv(&r, &k, &d);
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  d.l.pad_t = 3;
  assert_int_equal(lower_conv(cfg, &d.l, "model.onnx: node c1", &p, msg), -1);
  assert_non_null(strstr(msg, "model.onnx: node c1: padding"));
  lower_program_free(&p);
  d.l.pad_t = 1, d.l.groups = 3;
  assert_int_equal(lower_conv(cfg, &d.l, "c2", &p, msg), -1);
  assert_non_null(strstr(msg, "groups"));
  lower_program_free(&p);
  d.l.groups = 1, d.l.in_zero_point = 200;
  assert_int_equal(lower_conv(cfg, &d.l, "c3", &p, msg), -1);
  lower_program_free(&p);
  free_conv(&d);
}

/* Max pooling 3x3/2 (padding 1) fused into the convolution: the job's
 * output against ref_qconv followed by ref_qpool. */
static void check_fused_pool(const struct loom_hw_config *cfg, const struct conv_case *k, int32_t pad_br,
                             uint64_t seed) {
  struct ref_q_rng r = {seed};
  struct conv_data d;
  make_conv(&r, k, &d);
  int32_t oh = ref_q_out_size(k->h, k->k_h, k->s_h, k->d_h, k->p_t, k->p_b);
  int32_t ow = ref_q_out_size(k->w, k->k_w, k->s_w, k->d_w, k->p_l, k->p_r);
  struct lower_qpool pool = {.kind = LOWER_POOL_MAX, .n = k->n, .c = k->out_c, .in_h = oh, .in_w = ow,
                             .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2, .pad_t = 1, .pad_l = 1,
                             .pad_b = pad_br, .pad_r = pad_br};
  assert_true(lower_conv_pool_fits(cfg, &d.l, &pool));
  d.l.pool = &pool;
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  int rc = lower_conv(cfg, &d.l, k->name, &p, msg);
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN], *oa = &p.act[LOWER_SEG_OUT];
  assert_int_equal(oa->h, oh / 2);
  size_t nx = (size_t)k->n * k->in_c * k->h * k->w, nc = (size_t)k->n * k->out_c * oh * ow;
  size_t ny = (size_t)k->n * k->out_c * oa->h * oa->w;
  int8_t *x = malloc(nx), *packed = malloc(ia->bytes), *out = malloc(oa->bytes);
  int8_t *conv = malloc(nc), *ref = malloc(ny), *y = malloc(ny);
  ref_q_fill(&r, x, nx, -128, 127);
  if (ia->layout == LOWER_ACT_NCHWC) ref_to_nchwc(x, k->n, k->in_c, k->h, k->w, ia->block, 9, packed);
  else lower_act_pack(ia, x, 9, packed);
  struct fsim_result fr;
  assert_int_equal(ref_q_run_fsim(&p, packed, NULL, out, &fr), LOOM_ERR_NONE);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  d.l.pool = NULL;
  ref_qconv(&d.l, x, NULL, conv);
  ref_qpool(&pool, conv, ref);
  for (size_t i = 0; i < ny; i++)
    if (y[i] != ref[i]) fail_msg("%s/%s: pooled output %zu = %d, want %d", k->name, cfg->name, i, y[i], ref[i]);
  free(x), free(packed), free(out), free(conv), free(ref), free(y);
  lower_program_free(&p);
  free_conv(&d);
}

static void test_fused_pool(void **state) {
  (void)state;
  static const struct conv_case pools[] = {
      /* name        n  ic  h   w  oc kh kw sh sw pt pl pb pr dh dw  g  flags */
      {"stem_pool",  1, 3,  28, 28, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, LOWER_CONV_ALLOW_IM2COL, 0},
      {"conv_pool",  2, 12, 12, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
      {"dw_pool",    1, 24, 10, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 0, 0},
  };
  for (size_t i = 0; i < sizeof pools / sizeof *pools; i++)
    for (int32_t pad = 0; pad < 2; pad++) {
      check_fused_pool(loom_hw_config_by_name("tiny"), &pools[i], pad, 11 + i + 7 * (uint64_t)pad);
      check_fused_pool(loom_hw_config_by_name("default"), &pools[i], pad, 21 + i + 7 * (uint64_t)pad);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_random),
      cmocka_unit_test(test_wide),
      cmocka_unit_test(test_forced_tilings),
      cmocka_unit_test(test_fused_pool),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
