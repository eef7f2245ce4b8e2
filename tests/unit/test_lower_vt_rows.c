/*
 * test_lower_vt_rows.c - V's WGT rows for attention's P x V computed as
 * V^T = W_v X^T by a job of their own (tokens on the output lanes), run
 * on fsim: the pieces of docs/lowering.md's "V's WGT rows as V^T".
 *
 * X [S, D] (the projection's input) is the job's runtime weights: its WGT
 * rows are the NCHWc of [ceil(S/B), D, B, 1] (token y's channel c at byte
 * ((y/B) * cb * B + (c/B) * B + y%B) * B + c%B), exactly what a
 * producer's STORE writes with lower_program_wgt_rows (K's rows,
 * test_lower_wgt_rows.c); here the test writes them, the padding tokens'
 * rows zero as the runtime fills its buffers.  W_v [Dv, D] (constant) is
 * the job's input, so its output rows are V's channels and its lanes the
 * tokens, with no per-lane bias (V's bias is per row: it moves after
 * P x V, docs/lowering.md) and zero point 0.  Its STOREs rewritten by
 * lower_program_wgt_rows (rows = V's channels, columns = the tokens) put
 * channel m's token y at byte ((m/B) * nb * B + (y/B) * B + m%B) * B + y%B:
 * the NCHWc of [ceil(Dv/B), S, B, 1], V's WGT rows for P x V.  Checked
 * element by element against the plain C reference (the padding tokens'
 * lanes 0, so P's padded lanes meet zeros), the exact counters against
 * fsim's; then per head h (channels [h*d, (h+1)*d), d whole blocks) a job
 * P_h V_h with runtime weights reads its rows in place (one contiguous
 * range: lower_program_rebase by h * (d/B) * nb * B * B, no repitch),
 * bit-exact against the reference P_h V_h.  Without the STOREs' rewrite
 * the heads' products are wrong.  Shapes: the zoo's BERT (32 tokens, 2
 * heads of 32), ViT's 65 tokens (padding), odd and random ones.
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

struct vcase {
  const char *name;
  int32_t s, din, heads, d; /* X [s, din], V [s, heads * d] */
};

static void fill_mult(int32_t n, int32_t k, int32_t *bias, int32_t *mult, uint32_t *shift) {
  int32_t m0;
  assert_int_equal(lower_quantize_multiplier(40.0 / (74.0 * 74.0 * sqrt((double)k)), &m0, shift), 0);
  for (int32_t o = 0; o < n; o++) bias[o] = 0, mult[o] = m0;
}

/* Head h's P_h V_h, its weights read in place from the V^T job's rows;
 * vt is the reference V^T [Dv, S]. */
static void check_head(const struct loom_hw_config *cfg, const struct vcase *t, struct ref_q_rng *r, const int8_t *vseg,
                       uint64_t vbytes, const int8_t *vt, int32_t h) {
  int32_t S = t->s, d = t->d, B = cfg->block_out, nb = (S + B - 1) / B;
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)d), *mult = malloc(sizeof(int32_t) * (size_t)d);
  int8_t *pr = malloc((size_t)S * (size_t)S), *y = malloc((size_t)S * (size_t)d), *ref = malloc((size_t)S * (size_t)d);
  uint32_t shift;
  ref_q_fill(r, pr, (size_t)S * (size_t)S, 0, 127); /* int8 softmax rows */
  fill_mult(d, S, bias, mult, &shift);
  for (int32_t o = 0; o < d; o++) bias[o] = ref_q_range(r, -2000, 2000);
  struct lower_qfc f = {.n = S, .in_features = S, .out_features = d, .bias = bias, .multiplier = mult, .shift = shift,
                        .clamp_lo = -128, .clamp_hi = 127, .flags = LOWER_CONV_RUNTIME_WGT};
  struct lower_program p;
  char msg[LOWER_MSG_MAX], name[128];
  snprintf(name, sizeof name, "%s/%s/head%d", t->name, cfg->name, h);
  if (lower_fc(cfg, &f, name, &p, msg)) fail_msg("%s", msg);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN], *oa = &p.act[LOWER_SEG_OUT];
  uint64_t head = (uint64_t)(d / B) * (uint64_t)nb * (uint64_t)B * (uint64_t)B;
  assert_int_equal(p.act[LOWER_SEG_IN2].bytes, head);
  assert_int_equal(lower_program_rebase(&p, LOWER_SEG_IN2, (uint64_t)h * head), 0);
  assert_true(p.seg_bytes[LOWER_SEG_IN2] <= vbytes);
  int8_t *in = malloc(ia->bytes), *out = malloc(p.seg_bytes[LOWER_SEG_OUT]);
  ref_to_nchwc(pr, ia->n, ia->c, ia->h, ia->w, ia->block, 0, in);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(&p, in, vseg, out, &fr);
  if (err) fail_msg("%s: fsim error %u: %s", name, err, fr.message);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  struct lower_qfc rf = f;
  rf.weights = vt + (size_t)h * (size_t)d * (size_t)S, rf.flags = 0; /* V_h^T [d, S]: the weights [out, in] */
  ref_qfc(&rf, pr, ref);
  size_t wrong = 0;
  for (size_t i = 0; i < (size_t)S * (size_t)d; i++)
    if (y[i] != ref[i] && wrong++ < 5) fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  assert_int_equal(wrong, 0);
  lower_program_free(&p);
  free(bias), free(mult), free(pr), free(y), free(ref), free(in), free(out);
}

/* V^T [Dv, S] = W_v X^T, X's WGT rows the runtime weights, stored as V's
 * WGT rows; then every head's P x V reading them. */
static void check_case(const struct loom_hw_config *cfg, const struct vcase *t, uint64_t seed) {
  struct ref_q_rng r = {seed * 0x9E3779B97F4A7C15u + 17};
  int32_t S = t->s, D = t->din, Dv = t->heads * t->d, B = cfg->block_out;
  int32_t nb = (S + B - 1) / B, cb = (D + B - 1) / B, vb = (Dv + B - 1) / B;
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)S), *mult = malloc(sizeof(int32_t) * (size_t)S);
  int8_t *x = malloc((size_t)S * (size_t)D), *wv = malloc((size_t)Dv * (size_t)D), *vt = malloc((size_t)Dv * (size_t)S);
  size_t xbytes = (size_t)nb * (size_t)cb * (size_t)B * (size_t)B;
  int8_t *xrows = calloc(xbytes, 1);
  uint32_t shift;
  ref_q_fill(&r, x, (size_t)S * (size_t)D, -128, 127);
  ref_q_fill(&r, wv, (size_t)Dv * (size_t)D, -128, 127);
  fill_mult(S, D, bias, mult, &shift);
  for (int32_t y = 0; y < S; y++) /* X's WGT rows, as its producer's STOREs write them */
    for (int32_t c = 0; c < D; c++)
      xrows[((size_t)(y / B) * (size_t)cb * (size_t)B + (size_t)(c / B) * (size_t)B + (size_t)(y % B)) * (size_t)B +
            (size_t)(c % B)] = x[(size_t)y * (size_t)D + (size_t)c];
  struct lower_qfc f = {.n = Dv, .in_features = D, .out_features = S, .bias = bias, .multiplier = mult, .shift = shift,
                        .out_zero_point = 0, .clamp_lo = -128, .clamp_hi = 127, .flags = LOWER_CONV_RUNTIME_WGT};
  struct lower_program p;
  char msg[LOWER_MSG_MAX], name[128];
  snprintf(name, sizeof name, "%s/%s", t->name, cfg->name);
  if (lower_fc(cfg, &f, name, &p, msg)) fail_msg("%s", msg);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN];
  assert_int_equal(p.act[LOWER_SEG_IN2].bytes, xbytes);
  uint64_t cols = (uint64_t)nb * (uint64_t)B, vbytes = (uint64_t)vb * (uint64_t)nb * (uint64_t)B * (uint64_t)B;
  assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)Dv, 0, cols, 0), 0);
  assert_true(p.seg_bytes[LOWER_SEG_OUT] == vbytes);
  int8_t *in = malloc(ia->bytes), *vseg = malloc(vbytes);
  ref_to_nchwc(wv, ia->n, ia->c, ia->h, ia->w, ia->block, (int8_t)ref_q_range(&r, -128, 127), in);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(&p, in, xrows, vseg, &fr);
  if (err) fail_msg("%s: fsim error %u: %s", name, err, fr.message);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  struct lower_qfc rf = f;
  rf.weights = x, rf.flags = 0; /* V^T = W_v X^T: X [S, D] is the weights [out, in] */
  ref_qfc(&rf, wv, vt);
  size_t wrong = 0;
  for (int32_t m = 0; m < vb * B; m++)
    for (int32_t y = 0; y < nb * B; y++) {
      size_t at = ((size_t)(m / B) * (size_t)nb * (size_t)B + (size_t)(y / B) * (size_t)B + (size_t)(m % B)) * (size_t)B + (size_t)(y % B);
      if (m >= Dv) { /* the padding channels' rows are not stored: zero in the runtime's buffers */
        if ((uint8_t)vseg[at] != 0x5A && wrong++ < 5) fprintf(stderr, "%s: padding channel %d token %d written\n", name, m, y);
        vseg[at] = 0;
        continue;
      }
      int want = y < S ? vt[(size_t)m * (size_t)S + (size_t)y] : 0; /* the padding tokens: requant(0) = 0 */
      if (vseg[at] != want && wrong++ < 5) fprintf(stderr, "%s: channel %d token %d: got %d, expected %d\n", name, m, y, vseg[at], want);
    }
  assert_int_equal(wrong, 0);
  for (int32_t h = 0; h < t->heads && t->d % B == 0; h++) check_head(cfg, t, &r, vseg, vbytes, vt, h);
  lower_program_free(&p);
  free(bias), free(mult), free(x), free(wv), free(vt), free(xrows), free(in), free(vseg);
}

static const struct vcase cases[] = {
    /* name       s   din heads d */
    {"bert_v",   32, 64,  2,  32}, /* the zoo's BERT: 32 tokens, 2 heads of 32 */
    {"vit_v",    65, 128, 4,  32}, /* ViT's 65 tokens: a padded block of tokens */
    {"odd",       7, 19,  3,  16},
    {"one_head", 40, 24,  1,  48},
    {"narrow",   21, 16,  2,  8},  /* heads of half a block on default: the rows only */
};

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check_case(loom_hw_config_by_name("tiny"), &cases[i], i);
    check_case(loom_hw_config_by_name("default"), &cases[i], i + 100);
  }
}

/* Random token counts and widths (many tiles of rows, not on a block). */
static void test_random(void **state) {
  (void)state;
  struct ref_q_rng r = {4242};
  for (int i = 0; i < 16; i++) {
    struct vcase t = {"random", ref_q_range(&r, 1, 150), ref_q_range(&r, 1, 200), ref_q_range(&r, 1, 4), 8 * ref_q_range(&r, 1, 6)};
    check_case(loom_hw_config_by_name(i % 2 ? "default" : "tiny"), &t, 900 + (uint64_t)i);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
