/*
 * bench_gemm.c - the GEMM size sweep of `make bench` on tsim.
 *
 *   bench_gemm --lib PATH [--config NAME] [--json FILE]
 *
 * It reuses tests/bench/bench_rtl.c as it stands (included below with its
 * main renamed): the same hand-written, double-buffered GEMM stream
 * (inputs resident, weights streamed in tiles into alternating halves of
 * WGT, outputs streamed out; tokens between load, compute and store) and
 * the same roofline (min(1, DRAM bytes per cycle x ops / DRAM bytes) GEMM
 * ops per cycle), over a sweep of shapes instead of bench_rtl's two:
 *
 *   rows   M = 8 .. 128 at K = 256, N = 1024: arithmetic intensity grows
 *          with M, from memory-bound to compute-bound
 *   depth  K = 64 .. 512 at M = 64, N = 1024
 *
 * plus the resident GEMM (operands on chip: the core's utilization when
 * it is fed).  Shapes stay within the default configuration's buffers
 * (INP M x K/16 <= 2048 rows, WGT 2 x K/16 x 8 <= 1024, ACC 2 x M x 8 <=
 * 2048).  One JSON object per shape, as bench_rtl writes them.
 */
#define main bench_rtl_main
#include "tests/bench/bench_rtl.c"
#undef main

static const struct shape sweep[] = {
    {8, 16, 64, 8},  {16, 16, 64, 8},  {32, 16, 64, 8},  {64, 16, 64, 8}, {128, 16, 64, 8},
    {64, 4, 64, 8},  {64, 8, 64, 8},   {64, 32, 64, 8},
};
#define N_SWEEP (sizeof sweep / sizeof sweep[0])

int main(int argc, char **argv) {
  const char *config = "default", *lib = NULL, *json = "bench/gemm.json";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--config")) config = argv[i + 1];
    else if (!strcmp(argv[i], "--lib")) lib = argv[i + 1];
    else if (!strcmp(argv[i], "--json")) json = argv[i + 1];
    else return fprintf(stderr, "usage: bench_gemm [--config N] [--lib P] [--json F]\n"), 2;
  }
  loom_device *dev = open_dev(config, lib);
  if (!dev) return 1;
  const struct loom_hw_config *cfg = loom_device_config(dev);
  uint32_t peak = loom_hw_peak_macs(cfg);
  char msg[LOOM_MSG_MAX];
  struct loom_outfile *o;
  if (loom_outfile_open(json, &o, msg) != LOOM_OK) return fprintf(stderr, "bench_gemm: %s\n", msg), 1;
  FILE *j = loom_outfile_stream(o);
  struct shape resident = {64, 16, 32, 32};
  struct run r;
  bench_resident(dev, &resident, &r);
  printf("GEMM sweep on tsim, config %s (peak %u MACs/cycle)\n", config, peak);
  printf("%-26s %9llu ops %9llu cycles  %.1f%% of peak\n", "resident 64x256x512", (unsigned long long)r.ops,
         (unsigned long long)r.cycles, 100.0 * (double)r.ops / (double)r.cycles);
  fprintf(j, "{\n  \"resident_gemm\": {\"gemm_ops\": %llu, \"cycles\": %llu, \"utilization\": %.4f},\n",
          (unsigned long long)r.ops, (unsigned long long)r.cycles, (double)r.ops / (double)r.cycles);
  for (size_t i = 0; i < N_SWEEP; i++) {
    char name[64];
    const struct shape *sh = &sweep[i];
    snprintf(name, sizeof name, "gemm_%ux%ux%u", sh->m, cfg->block_in * sh->kb, cfg->block_out * sh->nb);
    bench_streamed(dev, sh, &r);
    print_streamed(j, name, sh, &r, peak, i + 1 == N_SWEEP);
    fflush(stdout);
  }
  fprintf(j, "}\n");
  loom_device_close(dev);
  if (loom_outfile_commit(o, msg) != LOOM_OK) return fprintf(stderr, "bench_gemm: %s\n", msg), 1;
  return 0;
}
