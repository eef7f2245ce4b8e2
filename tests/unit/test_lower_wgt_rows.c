/*
 * test_lower_wgt_rows.c - a projection job that stores its result as the
 * WGT rows of its transpose (lower_program_wgt_rows: attention's K for
 * Q x K^T, and V for P x V, read transposed), run on fsim.
 *
 * A fully connected job K = X W^T + b ([S, D], constant weights) is
 * lowered, its STOREs rewritten, and run: every element of K must be at
 * its place in the NCHWc of [ceil(S/B), D, B, 1] (token y's channel c at
 * byte ((y/B) * cb * B + (c/B) * B + y%B) * B + c%B), bit-exact against the
 * plain C reference, the padding tokens' rows untouched, and the
 * recomputed report's exact counters equal to fsim's.  Then, per head h
 * (channels [h*d, (h+1)*d), d whole blocks), a scores job Q_h K_h^T with
 * runtime weights reads that very segment in place, moved to the head's
 * channels as the compiler does (lower_program_repitch to images of
 * D * B bytes, lower_program_rebase by h * d * B): bit-exact against the
 * reference too, which checks the heads' address arithmetic within the
 * blocked layout.  And per head a job P_h V_h reads the same rows as V's
 * (LOWER_CONV_RUNTIME_WGT_T: LOADs with wgt_transpose, token blocks D/B
 * rows apart), P's padded token lanes a nonzero value that must meet the
 * padding tokens' zero rows; without the transposed load its products are
 * wrong.  As an in_proj [S, 3D] the job stores K's rows after its result
 * and V's after K's (a second call; over K's rows it is refused), the
 * scores reading K's, P x V V's.  Shapes: the zoo's BERT (32 tokens, 2
 * heads of 32), ViT's token count (65: padding), odd ones; tile rows that do not start
 * on a block of tokens.  Also the refusals: a segment that is loaded, a
 * token count that is not the segment's.
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

struct kcase {
  const char *name;
  int32_t s, din, heads, d; /* X [s, din], K [s, heads * d] */
};

static void fill_requant(struct ref_q_rng *r, int32_t n, int32_t k, int32_t *bias, int32_t *mult, uint32_t *shift) {
  double sigma = 74.0 * 74.0 * sqrt((double)k);
  int32_t m0;
  assert_int_equal(lower_quantize_multiplier(40.0 / sigma, &m0, shift), 0);
  for (int32_t o = 0; o < n; o++) bias[o] = ref_q_range(r, -(int32_t)sigma, (int32_t)sigma), mult[o] = m0;
}

/* Head h's scores Q_h K_h^T (pv 0), or its weighted values P_h V_h (pv 1,
 * the rows V's: read transposed, LOWER_CONV_RUNTIME_WGT_T, P's padded
 * token lanes meeting the padding tokens' zero rows), its weights read
 * from the projection job's segment. */
static void check_head(const struct loom_hw_config *cfg, const struct kcase *t, struct ref_q_rng *r, const int8_t *kseg,
                       uint64_t kbytes, uint64_t base, const int8_t *k, int32_t h, int pv) {
  int32_t S = t->s, d = t->d, D = t->heads * t->d, B = cfg->block_out, K = pv ? S : d, N = pv ? d : S;
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)N), *mult = malloc(sizeof(int32_t) * (size_t)N);
  int8_t *q = malloc((size_t)S * (size_t)K), *kh = malloc((size_t)S * (size_t)d), *wt = malloc((size_t)S * (size_t)d);
  int8_t *y = malloc((size_t)S * (size_t)N), *ref = malloc((size_t)S * (size_t)N);
  uint32_t shift;
  ref_q_fill(r, q, (size_t)S * (size_t)K, -128, 127);
  fill_requant(r, N, K, bias, mult, &shift);
  for (int32_t i = 0; i < S; i++) memcpy(kh + (size_t)i * (size_t)d, k + (size_t)i * (size_t)D + (size_t)h * (size_t)d, (size_t)d);
  for (int32_t i = 0; i < S * d; i++) wt[i] = pv ? kh[(size_t)(i % S) * (size_t)d + (size_t)(i / S)] : kh[i]; /* [N][K] */
  struct lower_qfc f = {.n = S, .in_features = K, .out_features = N, .bias = bias, .multiplier = mult, .shift = shift,
                        .clamp_lo = -128, .clamp_hi = 127,
                        .flags = LOWER_CONV_RUNTIME_WGT | (pv ? LOWER_CONV_RUNTIME_WGT_T : 0)};
  struct lower_program p;
  char msg[LOWER_MSG_MAX], name[128];
  snprintf(name, sizeof name, "%s/%s/head%d%s", t->name, cfg->name, h, pv ? "/pv" : "");
  if (lower_fc(cfg, &f, name, &p, msg)) fail_msg("%s", msg);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN], *oa = &p.act[LOWER_SEG_OUT];
  uint64_t width = (uint64_t)d * (uint64_t)B, pitch = (uint64_t)D * (uint64_t)B;
  assert_int_equal(p.act[LOWER_SEG_IN2].bytes, (uint64_t)((S + B - 1) / B) * width);
  assert_int_equal(lower_program_repitch(&p, LOWER_SEG_IN2, width, pitch), 0);
  assert_int_equal(lower_program_rebase(&p, LOWER_SEG_IN2, base + (uint64_t)h * width), 0);
  assert_true(p.seg_bytes[LOWER_SEG_IN2] <= kbytes);
  int8_t *in = malloc(ia->bytes), *out = malloc(p.seg_bytes[LOWER_SEG_OUT]);
  ref_to_nchwc(q, ia->n, ia->c, ia->h, ia->w, ia->block, pv ? (int8_t)ref_q_range(r, 1, 127) : 0, in);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(&p, in, kseg, out, &fr);
  if (err) fail_msg("%s: fsim error %u: %s", name, err, fr.message);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  ref_from_nchwc(out, oa->n, oa->c, oa->h, oa->w, oa->block, y);
  struct lower_qfc rf = f;
  rf.weights = wt, rf.flags = 0;
  ref_qfc(&rf, q, ref);
  size_t wrong = 0;
  for (size_t i = 0; i < (size_t)S * (size_t)N; i++)
    if (y[i] != ref[i] && wrong++ < 5) fprintf(stderr, "%s: output %zu: got %d, expected %d\n", name, i, y[i], ref[i]);
  assert_int_equal(wrong, 0);
  lower_program_free(&p);
  free(bias), free(mult), free(q), free(kh), free(wt), free(y), free(ref), free(in), free(out);
}

/* K (or V) [S, D] = X W^T + b, alone (qkv 0) or K and V as columns
 * [D, 2D) and [2D, 3D) of an in_proj result [S, 3D] (qkv 1: K's WGT rows
 * after the result's bytes, V's after K's, Q's columns stored as before,
 * K's and V's there untouched). */
static void check_case(const struct loom_hw_config *cfg, const struct kcase *t, uint64_t seed, int qkv) {
  struct ref_q_rng r = {seed * 0x9E3779B97F4A7C15u + 11};
  int32_t S = t->s, D = t->heads * t->d, B = cfg->block_out, nb = (S + B - 1) / B, cb = (D + B - 1) / B;
  int32_t C = qkv ? 3 * D : D, ccb = (C + B - 1) / B, c0 = qkv ? D : 0;
  if (qkv && D % B) return; /* K's columns: whole blocks */
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)C), *mult = malloc(sizeof(int32_t) * (size_t)C);
  int8_t *x = malloc((size_t)S * (size_t)t->din), *w = malloc((size_t)C * (size_t)t->din);
  int8_t *k = malloc((size_t)S * (size_t)D);
  uint32_t shift;
  ref_q_fill(&r, x, (size_t)S * (size_t)t->din, -128, 127);
  ref_q_fill(&r, w, (size_t)C * (size_t)t->din, -128, 127);
  fill_requant(&r, C, t->din, bias, mult, &shift);
  struct lower_qfc f = {.n = S, .in_features = t->din, .out_features = C, .weights = w, .bias = bias,
                        .multiplier = mult, .shift = shift, .out_zero_point = 0, .clamp_lo = -128, .clamp_hi = 127};
  struct lower_program p;
  char msg[LOWER_MSG_MAX], name[128];
  snprintf(name, sizeof name, "%s%s/%s", t->name, qkv ? "/in_proj" : "", cfg->name);
  if (lower_fc(cfg, &f, name, &p, msg)) fail_msg("%s", msg);
  const struct lower_act *ia = &p.act[LOWER_SEG_IN];
  uint64_t nc = (uint64_t)S * (uint64_t)ccb * (uint64_t)B, wrow = (uint64_t)B * (uint64_t)B, cols = (uint64_t)cb * (uint64_t)B;
  uint64_t rbytes = (uint64_t)nb * (uint64_t)cb * wrow, base[2] = {qkv ? (nc + wrow - 1) / wrow * wrow : 0};
  base[1] = base[0] + rbytes; /* qkv: V's rows after K's */
  int32_t ranges = qkv ? 2 : 1, col[2] = {c0, 2 * D};
  uint32_t stores = (uint32_t)p.report.counters[LOOM_CNT_INSN_STORE];
  assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_IN, (uint64_t)S, (uint64_t)c0, cols, base[0]), -1);     /* loaded */
  assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)S + 1, (uint64_t)c0, cols, base[0]), -1); /* not its tokens */
  assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)S, (uint64_t)c0 + 1, cols, base[0]), -1); /* not on a block */
  assert_int_equal(p.report.counters[LOOM_CNT_INSN_STORE], stores);
  assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)S, (uint64_t)c0, cols, base[0]), 0);
  if (qkv) { /* V's over K's rows: refused; after them: stored */
    assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)S, (uint64_t)col[1], cols, base[0]), -1);
    assert_int_equal(lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)S, (uint64_t)col[1], cols, base[1]), 0);
  }
  uint64_t kbytes = base[ranges - 1] + rbytes;
  assert_true(p.seg_bytes[LOWER_SEG_OUT] == kbytes);
  assert_true(p.report.counters[LOOM_CNT_BYTES_WR_OUT] == (uint64_t)S * (uint64_t)ccb * (uint64_t)B);
  int8_t *in = malloc(ia->bytes), *kseg = malloc(kbytes), *ref = malloc((size_t)S * (size_t)C);
  ref_to_nchwc(x, ia->n, ia->c, ia->h, ia->w, ia->block, (int8_t)ref_q_range(&r, -128, 127), in);
  struct fsim_result fr;
  uint32_t err = ref_q_run_fsim(&p, in, NULL, kseg, &fr);
  if (err) fail_msg("%s: fsim error %u: %s", name, err, fr.message);
  assert_int_equal(ref_q_counter_mismatch(&p, &fr), -1);
  ref_qfc(&f, x, ref);
  size_t wrong = 0;
  for (int32_t y = 0; y < S && qkv; y++) /* Q's columns in place, K's and V's not written there */
    for (int32_t c = 0; c < C; c++) {
      int8_t got = kseg[(size_t)y * (size_t)ccb * (size_t)B + (size_t)c];
      int want = c >= c0 ? (int8_t)0x5A : ref[(size_t)y * (size_t)C + (size_t)c];
      if (got != want && wrong++ < 5) fprintf(stderr, "%s: NC token %d channel %d: got %d, expected %d\n", name, y, c, got, want);
    }
  for (int32_t k2 = 0; k2 < ranges; k2++)
    for (int32_t y = 0; y < nb * B; y++)
      for (int32_t c = 0; c < cb * B; c++) {
        size_t at = base[k2] + ((size_t)(y / B) * (size_t)cb * (size_t)B + (size_t)(c / B) * (size_t)B + (size_t)(y % B)) * (size_t)B + (size_t)(c % B);
        int want = y >= S ? 0x5A : c >= D ? kseg[at] : ref[(size_t)y * (size_t)C + (size_t)(col[k2] + c)]; /* padding tokens: untouched */
        if ((y >= S ? (uint8_t)kseg[at] : kseg[at]) != want && wrong++ < 5)
          fprintf(stderr, "%s: rows %d token %d channel %d: got %d, expected %d\n", name, k2, y, c, kseg[at], want);
        if (y >= S) kseg[at] = 0; /* the runtime's buffers start zero-filled: so do these rows */
      }
  assert_int_equal(wrong, 0);
  for (int pv = 0; pv < 2; pv++) { /* K's rows for the scores, V's (the same alone) for P x V */
    int32_t k2 = qkv ? pv : 0;
    for (int32_t y = 0; y < S; y++) memcpy(k + (size_t)y * (size_t)D, ref + (size_t)y * (size_t)C + (size_t)col[k2], (size_t)D);
    for (int32_t h = 0; h < t->heads && t->d % B == 0; h++) check_head(cfg, t, &r, kseg, kbytes, base[k2], k, h, pv);
  }
  lower_program_free(&p);
  free(bias), free(mult), free(x), free(w), free(k), free(in), free(kseg), free(ref);
}

static const struct kcase cases[] = {
    /* name       s   din heads d */
    {"bert_k",   32, 64,  2,  32}, /* the zoo's BERT: 32 tokens, 2 heads of 32 */
    {"vit_k",    65, 128, 4,  32}, /* ViT's 65 tokens: a padded block of tokens */
    {"odd",       7, 19,  3,  16},
    {"one_head", 40, 24,  1,  48},
    {"narrow",   21, 16,  2,  8},  /* heads of half a block on default: the rows only */
};

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check_case(loom_hw_config_by_name("tiny"), &cases[i], i, 0);
    check_case(loom_hw_config_by_name("default"), &cases[i], i + 100, 0);
    check_case(loom_hw_config_by_name(i % 2 ? "default" : "tiny"), &cases[i], i + 200, 1);
  }
}

/* Random token counts and widths (many tiles of rows, not on a block). */
static void test_random(void **state) {
  (void)state;
  struct ref_q_rng r = {777};
  for (int i = 0; i < 16; i++) {
    struct kcase t = {"random", ref_q_range(&r, 1, 150), ref_q_range(&r, 1, 200), ref_q_range(&r, 1, 4), 8 * ref_q_range(&r, 1, 6)};
    check_case(loom_hw_config_by_name(i % 2 ? "default" : "tiny"), &t, 900 + (uint64_t)i, i % 3 == 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
