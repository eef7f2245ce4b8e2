/*
 * bench_vrows.c - what computing V's WGT rows as V^T = W_v X^T would cost
 * the accelerator (docs/lowering.md, "V's WGT rows as V^T").
 *
 *   build/bench/bench_vrows [OUT.json]      (make bench-vrows)
 *
 * For attention shapes (S tokens, D input channels, Dv of V) on the
 * default and tiny configurations, fsim's timing model's cycles of:
 *   proj  V = X W_v^T, the projection job compiled today (constant
 *         weights, tokens on the rows);
 *   vt    V^T = W_v X^T with X's WGT rows as runtime weights (tokens on
 *         the lanes), stored as V's WGT rows (lower_program_wgt_rows);
 *   plain the same job storing its plain NC result (what the rows'
 *         STOREs cost on their own).
 * Zero data: the cycles do not depend on it.  Prints a table and writes
 * the figures as JSON.  test_lower_vt_rows.c checks the jobs' results.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref_qconv.h"

/* Cycles of one fc job of n rows, k inputs and o outputs (runtime weights
 * when rt; its STOREs as WGT rows when rows); 0 when it does not lower. */
static uint64_t cycles(const struct loom_hw_config *cfg, int32_t n, int32_t k, int32_t o, int rt, int rows) {
  int32_t *bias = calloc((size_t)o, sizeof *bias), *mult = malloc(sizeof *mult * (size_t)o), m0;
  int8_t *w = calloc((size_t)o * (size_t)k, 1);
  uint32_t shift;
  uint64_t c = 0;
  if (lower_quantize_multiplier(1e-4, &m0, &shift)) abort();
  for (int32_t i = 0; i < o; i++) mult[i] = m0;
  struct lower_qfc f = {.n = n, .in_features = k, .out_features = o, .weights = rt ? NULL : w, .bias = bias,
                        .multiplier = mult, .shift = shift, .clamp_lo = -128, .clamp_hi = 127,
                        .flags = rt ? LOWER_CONV_RUNTIME_WGT : 0};
  struct lower_program p;
  char msg[LOWER_MSG_MAX];
  uint64_t B = (uint64_t)cfg->block_out;
  if (lower_fc(cfg, &f, "bench", &p, msg)) {
    fprintf(stderr, "bench_vrows: %s\n", msg);
  } else if (rows && lower_program_wgt_rows(&p, LOWER_SEG_OUT, (uint64_t)n, 0, ((uint64_t)o + B - 1) / B * B, 0)) {
    fprintf(stderr, "bench_vrows: %dx%dx%d: the job cannot store WGT rows\n", n, k, o);
    lower_program_free(&p);
  } else {
    int8_t *in = calloc(p.seg_bytes[LOWER_SEG_IN] + 1, 1), *in2 = calloc(p.seg_bytes[LOWER_SEG_IN2] + 1, 1);
    int8_t *out = malloc(p.seg_bytes[LOWER_SEG_OUT] + 1);
    struct fsim_result fr;
    uint32_t err = ref_q_run_fsim_timed(&p, in, rt ? in2 : NULL, out, &fr);
    if (err) fprintf(stderr, "bench_vrows: %dx%dx%d: fsim error %u: %s\n", n, k, o, err, fr.message);
    else c = fr.counters[LOOM_CNT_CYCLES];
    free(in), free(in2), free(out);
    lower_program_free(&p);
  }
  free(bias), free(mult), free(w);
  return c;
}

int main(int argc, char **argv) {
  static const char *const cfgs[] = {"default", "tiny"};
  static const int32_t shapes[][3] = {
      {32, 128, 128}, /* the zoo's BERT */
      {65, 192, 192}, /* ViT's 65 tokens */
      {32, 64, 64},   {65, 128, 128}, {20, 32, 32},
  };
  FILE *js = argc > 1 ? fopen(argv[1], "w") : NULL;
  if (argc > 1 && !js) return fprintf(stderr, "bench_vrows: %s: cannot write\n", argv[1]), 1;
  int fail = 0, first = 1;
  if (js) fprintf(js, "[\n");
  printf("%-8s %4s %4s %4s %10s %10s %10s %8s\n", "config", "S", "D", "Dv", "proj", "vt", "plain", "vt/proj");
  for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
      const struct loom_hw_config *cfg = loom_hw_config_by_name(cfgs[c]);
      int32_t S = shapes[s][0], D = shapes[s][1], Dv = shapes[s][2];
      uint64_t proj = cycles(cfg, S, D, Dv, 0, 0), vt = cycles(cfg, Dv, D, S, 1, 1), plain = cycles(cfg, Dv, D, S, 1, 0);
      fail |= !proj || !vt || !plain;
      printf("%-8s %4d %4d %4d %10llu %10llu %10llu %8.3f\n", cfgs[c], S, D, Dv, (unsigned long long)proj,
             (unsigned long long)vt, (unsigned long long)plain, proj ? (double)vt / (double)proj : 0.0);
      if (js)
        fprintf(js, "%s  {\"config\": \"%s\", \"S\": %d, \"D\": %d, \"Dv\": %d, \"proj\": %llu, \"vt\": %llu, \"plain\": %llu}",
                first ? "" : ",\n", cfgs[c], S, D, Dv, (unsigned long long)proj, (unsigned long long)vt,
                (unsigned long long)plain);
      first = 0;
    }
  if (js) fprintf(js, "\n]\n"), fail |= fclose(js) != 0;
  return fail;
}
