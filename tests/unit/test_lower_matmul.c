/*
 * test_lower_matmul.c - matmuls of two activations (attention's Q x K^T
 * and P x V) lowered with runtime weights (LOWER_CONV_RUNTIME_WGT) and run
 * on fsim, bit-exact against the plain C reference (ref_qconv.c with the
 * second operand as its weights).
 *
 * The second operand is never packed by the compiler: the test writes it
 * into segment IN2 the way a producer job writes its NCHWc result (the
 * [N, K] matrix B^T as ceil(N/B) images of B rows and K channels, padded
 * rows garbage), so a pass here means the weight loads read the
 * activation in place (its padded channel lanes, k >= K, are zero as the
 * runtime's blocked layout has them: they meet the input's garbage lanes).
 * Per head, one job: C_h = A_h B_h^T with A_h
 * [M, K] as the 1x1 convolution's input (fully connected over M 1x1
 * images, walked as M rows of one image, so a tile holds many of them;
 * or one [1, K, M, 1] image), the shapes of the
 * zoo's attention heads (ViT: 65 tokens, head width 32; BERT and the
 * nn.TransformerEncoder: 32 tokens) and odd ones, alone and as one head's
 * slices of stacked operands and result (lower_program_rebase: how the
 * compiler reads and writes a head in place).  Also: the lowering
 * refuses runtime weights with an input zero point, a window, groups or
 * constant weights, naming the layer.
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

struct mm_case {
  const char *name;
  int32_t m, k, n; /* C [m, n] = A [m, k] x B [k, n] */
  int fc;          /* as fully connected over m 1x1 images, else one [1, k, m, 1] image */
};

/* B^T [n][k] -> segment IN2: NCHWc of [ceil(n / blk), k, blk, 1]. */
static int8_t *pack_runtime_weights(const struct lower_act *a, const int8_t *bt, int32_t n, int32_t k,
                                    int8_t garbage) {
  int32_t blk = a->h;
  size_t plain_n = (size_t)a->n * (size_t)k * (size_t)blk;
  int8_t *plain = malloc(plain_n), *packed = malloc(a->bytes);
  assert_non_null(plain), assert_non_null(packed);
  memset(plain, garbage, plain_n);
  for (int32_t o = 0; o < n; o++)
    for (int32_t c = 0; c < k; c++)
      plain[((size_t)(o / blk) * (size_t)k + (size_t)c) * (size_t)blk + (size_t)(o % blk)] = bt[(size_t)o * (size_t)k + (size_t)c];
  ref_to_nchwc(plain, a->n, k, blk, 1, a->block, 0, packed); /* padded channels 0, as the runtime packs */
  free(plain);
  return packed;
}

/* With `head` > 0 the job works on a slice of stacked tensors, as the
 * compiler lays out an attention's heads (compile_loom.c): its A is rows
 * `head` of [3 * M, K], its weights the WGT rows of head `head - 1` of the
 * stacked ones, its result rows `head + 1` of [4 * M, N], every segment
 * moved by lower_program_rebase(); bytes before a slice hold garbage and
 * the result's rows before it must stay untouched.  Fully connected ones
 * write their result as the right half of the columns of [M, 2 * N] too
 * (lower_program_repitch), the left half untouched. */
static void check_case(const struct loom_hw_config *cfg, const struct mm_case *t, uint64_t seed, int head) {
  struct ref_q_rng r = {seed * 0x9E3779B97F4A7C15u + 7};
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)t->n), *mult = malloc(sizeof(int32_t) * (size_t)t->n);
  int8_t *a = malloc((size_t)t->m * (size_t)t->k), *bt = malloc((size_t)t->n * (size_t)t->k);
  size_t ny = (size_t)t->m * (size_t)t->n;
  int8_t *y = malloc(ny), *ref = malloc(ny);
  ref_q_fill(&r, a, (size_t)t->m * (size_t)t->k, -128, 127);
  ref_q_fill(&r, bt, (size_t)t->n * (size_t)t->k, -128, 127);
  double sigma = 74.0 * 74.0 * sqrt((double)t->k);
  int32_t m0;
  uint32_t shift;
  assert_int_equal(lower_quantize_multiplier(40.0 / sigma, &m0, &shift), 0);
  for (int32_t o = 0; o < t->n; o++) bias[o] = ref_q_range(&r, -(int32_t)sigma, (int32_t)sigma), mult[o] = m0;
  struct lower_qconv l = {
      .n = t->fc ? t->m : 1, .in_c = t->k, .in_h = t->fc ? 1 : t->m, .in_w = 1, .out_c = t->n,
      .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1,
      .weights = NULL, .bias = bias, .multiplier = mult, .shift = shift, .in_zero_point = 0,
      .out_zero_point = ref_q_range(&r, -10, 10), .clamp_lo = -128, .clamp_hi = 127,
      .round_even = ref_q_rand(&r) & 1, .flags = LOWER_CONV_RUNTIME_WGT,
  };
  char name[128], msg[LOWER_MSG_MAX];
  snprintf(name, sizeof name, "%s/%s", t->name, cfg->name);
  struct lower_program p;
  int rc;
  if (t->fc) {
    struct lower_qfc f = {.n = t->m, .in_features = t->k, .out_features = t->n, .weights = NULL, .bias = bias,
                          .multiplier = mult, .shift = shift, .in_zero_point = 0,
                          .out_zero_point = l.out_zero_point, .clamp_lo = -128, .clamp_hi = 127,
                          .round_even = l.round_even, .flags = LOWER_CONV_RUNTIME_WGT};
    rc = lower_fc(cfg, &f, name, &p, msg);
  } else {
    rc = lower_conv(cfg, &l, name, &p, msg);
  }
  if (rc) fprintf(stderr, "%s\n", msg);
  assert_int_equal(rc, 0);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN], *wa = &p.act[LOWER_SEG_IN2], *oa = &p.act[LOWER_SEG_OUT];
  assert_int_equal(wa->layout, LOWER_ACT_NCHWC);
  assert_int_equal(wa->n, (t->n + cfg->block_out - 1) / cfg->block_out);
  int8_t garbage = (int8_t)ref_q_range(&r, -128, 127);
  uint64_t in_off = 0, w_off = 0, out_off = 0;
  if (head) {
    in_off = (uint64_t)head * ia->bytes, w_off = (uint64_t)(head - 1) * wa->bytes, out_off = (uint64_t)(head + 1) * oa->bytes;
    assert_int_equal(lower_program_rebase(&p, LOWER_SEG_IN, in_off + 1), -1); /* not on a row: refused */
    assert_int_equal(p.seg_bytes[LOWER_SEG_IN], ia->bytes);
    assert_int_equal(lower_program_rebase(&p, LOWER_SEG_IN, in_off), 0);
    assert_int_equal(lower_program_rebase(&p, LOWER_SEG_IN2, w_off), 0);
    if (t->fc) { /* the result as the right half of [M, 2 * N'] (N' = N in whole blocks): columns */
      uint64_t row = oa->bytes / (uint64_t)t->m;
      assert_int_equal(lower_program_repitch(&p, LOWER_SEG_OUT, row, 2 * row), 0);
      assert_true(p.seg_bytes[LOWER_SEG_OUT] == (uint64_t)(t->m - 1) * 2 * row + row);
      out_off = row;
    }
    assert_int_equal(lower_program_rebase(&p, LOWER_SEG_OUT, out_off), 0);
  }
  int8_t *in_seg = malloc(in_off + ia->bytes), *out_seg = malloc(p.seg_bytes[LOWER_SEG_OUT]), *w_seg = malloc(w_off + wa->bytes);
  int8_t *in = in_seg + in_off, *out = head && t->fc ? malloc(oa->bytes) : out_seg + out_off;
  memset(in_seg, garbage, in_off + ia->bytes), memset(w_seg, garbage, w_off);
  int8_t *w = pack_runtime_weights(wa, bt, t->n, t->k, garbage);
  memcpy(w_seg + w_off, w, wa->bytes);
  /* A as NCHW: fc [m][k][1][1]; conv [1][k][m][1] */
  int8_t *an = malloc((size_t)t->m * (size_t)t->k);
  for (int32_t i = 0; i < t->m; i++)
    for (int32_t c = 0; c < t->k; c++)
      an[t->fc ? (size_t)i * (size_t)t->k + (size_t)c : (size_t)c * (size_t)t->m + (size_t)i] = a[(size_t)i * (size_t)t->k + (size_t)c];
  ref_to_nchwc(an, ia->n, ia->c, ia->h, ia->w, ia->block, garbage, in);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(&p, in_seg, w_seg, out_seg, &fr);
  uint64_t row = oa->bytes / (uint64_t)t->m, cols = head && t->fc;
  for (uint64_t i = 0; i < (cols ? (uint64_t)t->m * 2 * row - row : out_off); i++) /* nothing stored outside the slice */
    if ((cols ? i / row % 2 == 0 : 1) && (uint8_t)out_seg[i] != 0x5A) /* (ref_q_run_fsim's fill) */
      fail_msg("%s: byte %llu outside the result's slice written", name, (unsigned long long)i);
  for (int32_t i = 0; cols && i < t->m; i++) memcpy(out + (uint64_t)i * row, out_seg + (2 * (uint64_t)i + 1) * row, row);
  if (err) fprintf(stderr, "%s: fsim error %u: %s\n", name, err, fr.message);
  assert_int_equal(err, LOOM_ERR_NONE);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  int8_t *yn = malloc(ny);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, yn);
  for (int32_t i = 0; i < t->m; i++) /* back to [m][n] */
    for (int32_t o = 0; o < t->n; o++)
      y[(size_t)i * (size_t)t->n + (size_t)o] = yn[t->fc ? (size_t)i * (size_t)t->n + (size_t)o : (size_t)o * (size_t)t->m + (size_t)i];
  struct lower_qfc rf = {.n = t->m, .in_features = t->k, .out_features = t->n, .weights = bt, .bias = bias,
                         .multiplier = mult, .shift = shift, .in_zero_point = 0, .out_zero_point = l.out_zero_point,
                         .clamp_lo = -128, .clamp_hi = 127, .round_even = l.round_even};
  ref_qfc(&rf, a, ref);
  size_t wrong = 0;
  for (size_t i = 0; i < ny; i++)
    if (y[i] != ref[i] && wrong++ < 5) fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  assert_int_equal(wrong, 0);
  assert_true(p.report.macs == (uint64_t)t->m * (uint64_t)t->n * (uint64_t)t->k);
  if (t->fc && t->m >= 16) assert_true(p.report.tiling.th > 1); /* tokens as rows: tiles of many */
  lower_program_free(&p);
  free(bias), free(mult), free(a), free(bt), free(y), free(ref), free(in_seg), free(out_seg), free(w), free(w_seg), free(an), free(yn);
  if (head && t->fc) free(out);
}

static const struct mm_case cases[] = {
    /* name            m    k    n   fc */
    {"vit_qk",        65,  32,  65,  0}, /* ViT head: Q [65,32] x K^T */
    {"vit_pv",        65,  65,  32,  0}, /* P [65,65] x V [65,32] */
    {"bert_qk",       32,  32,  32,  0},
    {"bert_pv",       32,  32,  32,  1},
    {"odd",           7,   19,  21,  0},
    {"odd_fc",        5,   33,  17,  1},
    {"wide_k",        16,  200, 40,  0}, /* reduction split into chunks on tiny */
    {"many_out",      9,   16,  300, 0}, /* more output blocks than PAR rows */
};

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check_case(loom_hw_config_by_name("tiny"), &cases[i], i, 0);
    check_case(loom_hw_config_by_name("default"), &cases[i], i + 100, 0);
    check_case(loom_hw_config_by_name(i % 2 ? "tiny" : "default"), &cases[i], i + 200, 1 + (int)(i % 3));
  }
}

/* Random shapes on both configurations. */
static void test_random(void **state) {
  (void)state;
  struct ref_q_rng r = {4242};
  for (int i = 0; i < 24; i++) {
    struct mm_case t = {"random", ref_q_range(&r, 1, 80), ref_q_range(&r, 1, 80), ref_q_range(&r, 1, 80),
                        (int)(ref_q_rand(&r) % 3 == 0)};
    check_case(loom_hw_config_by_name(i % 2 ? "default" : "tiny"), &t, 500 + (uint64_t)i, i % 3);
  }
}

static void expect_refusal(struct lower_qconv l, const char *text) {
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  assert_int_equal(lower_conv(loom_hw_config_by_name("default"), &l, "m.onnx: node 3 'qk'", &p, msg), -1);
  if (!strstr(msg, text) || !strstr(msg, "'qk'")) fprintf(stderr, "message: %s\n", msg);
  assert_non_null(strstr(msg, text));
  assert_non_null(strstr(msg, "'qk'"));
  lower_program_free(&p);
}

static void test_refusals(void **state) {
  (void)state;
  int32_t mult[16] = {1 << 30}, bias[16] = {0};
  int8_t w[16 * 16] = {0};
  struct lower_qconv l = {.n = 1, .in_c = 16, .in_h = 4, .in_w = 1, .out_c = 16, .k_h = 1, .k_w = 1,
                          .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1, .bias = bias,
                          .multiplier = mult, .shift = 31, .clamp_lo = -128, .clamp_hi = 127,
                          .flags = LOWER_CONV_RUNTIME_WGT};
  struct lower_qconv bad = l;
  bad.in_zero_point = 3;
  expect_refusal(bad, "input zero point 0 (it is 3)");
  bad = l, bad.k_h = 3, bad.pad_t = bad.pad_b = 1;
  expect_refusal(bad, "plain 1x1 GEMM");
  bad = l, bad.groups = 2;
  expect_refusal(bad, "plain 1x1 GEMM");
  bad = l, bad.weights = w;
  expect_refusal(bad, "constant weights given for runtime ones");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_random),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
