/*
 * bench_kernels.c - throughput of the host kernels on the hot paths of
 * real networks (ResNet, MobileNet, U-Net, BERT-like shapes), single
 * thread.
 *
 *   bench_kernels [JSON]      (make bench-kernels: build/bench/kernels.json)
 *
 * Each workload runs through loom_kernel_run, repeated until it has used
 * 0.2 s of CPU; the best of three such batches is reported as time per
 * call (process CPU time, so other load on a shared machine does not count
 * against it), with GFLOP/s for the arithmetic kernels and GB/s (bytes read
 * plus written) for the data movers.  A table goes to stdout and the same
 * figures to JSON.  Nothing here asserts a speed.  A second table times
 * the int8 row loops of the host ops QSOFTMAX and QLAYERNORM
 * (intapprox.h's loom_isoftmax_rows, loom_ilayernorm_rows) on ViT- and
 * BERT-shaped rows of seeded codes, the same way ("int8_rows" in JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/intapprox.h"
#include "driver/core/kernel.h"

#define MAXT 4

struct work {
  const char *name, *op;
  int opset;
  int n_in, n_out;
  struct loom_kt in[MAXT], out[MAXT];
  struct loom_kattr attrs[6];
  int n_attrs;
  double flops, bytes; /* per call */
};

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct loom_kt tensor(loom_dtype dt, int rank, const int64_t *dims) {
  struct loom_kt t = {dt, rank, {0}, NULL};
  memcpy(t.dims, dims, (size_t)rank * sizeof dims[0]);
  int64_t n = loom_kt_numel(&t);
  t.data = malloc((size_t)n * loom_dtype_size(dt) + 1);
  for (int64_t i = 0; i < n; i++) loom_kt_set_f64(&t, i, dt == LOOM_DT_I64 ? (double)(i % 7) : (double)(i % 17) / 17 - 0.4);
  return t;
}

#define T(dt, ...) tensor((dt), (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__})
#define F(...) T(LOOM_DT_F32, __VA_ARGS__)

static double bytes_of(const struct work *w) {
  if (w->bytes) return w->bytes;
  double b = 0;
  for (int i = 0; i < w->n_in; i++) b += (double)loom_kt_numel(&w->in[i]) * (double)loom_dtype_size(w->in[i].dtype);
  for (int i = 0; i < w->n_out; i++) b += (double)loom_kt_numel(&w->out[i]) * (double)loom_dtype_size(w->out[i].dtype);
  return b;
}

/* Seconds per call, best of three batches of >= 0.2 s. */
static double measure(struct work *w, char *msg) {
  struct loom_kcall c = {w->op, w->opset, w->in, w->n_in, w->out, w->n_out, w->attrs, w->n_attrs, msg};
  if (loom_kernel_run(&c) != LOOM_OK) return -1;
  double best = 1e30;
  for (int batch = 0; batch < 3; batch++) {
    double t0 = cpu_now(), t;
    long reps = 0;
    do {
      loom_kernel_run(&c);
      reps++;
    } while ((t = cpu_now() - t0) < 0.2);
    if (t / (double)reps < best) best = t / (double)reps;
  }
  return best;
}

/* An int8 row workload: softmax (ln 0) or LayerNorm (ln 1) over rows of
 * len codes, each code the sum of two uniform draws in [-spread, spread]
 * (a bell, as scores and residual sums are).  A softmax with masked > 0
 * is the masked form as BERT's QSOFTMAX runs it: one mask row of len for
 * all rows (a [1, 1, 1, S] mask, group = rows), 0 on the first len -
 * masked keys and -10000 (padding) on the last masked. */
struct introw {
  const char *name;
  int ln;
  int64_t rows, len;
  int spread, masked;
};

static double measure_rows(const struct introw *w) {
  int64_t n = w->rows * w->len;
  int8_t *x = malloc((size_t)n), *y = malloc((size_t)n);
  float *gamma = malloc((size_t)w->len * sizeof *gamma), beta = 0.1f;
  int32_t *g = malloc((size_t)w->len * sizeof *g), *b = malloc((size_t)w->len * sizeof *b);
  uint32_t r = 12345;
  for (int64_t i = 0; i < n; i++) {
    int v = 0;
    for (int k = 0; k < 2; k++) r = r * 1664525u + 1013904223u, v += (int)((r >> 8) % (uint32_t)(2 * w->spread + 1)) - w->spread;
    x[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
  }
  for (int64_t i = 0; i < w->len; i++) gamma[i] = 0.8f + 0.4f * (float)(i % 7) / 7;
  struct loom_isoftmax s;
  struct loom_ilayernorm l;
  int bad = w->ln ? loom_ilayernorm_init(0.05, 3, 0.03, -2, 1e-5, w->len, gamma, w->len, &beta, 1, g, b, &l)
                  : loom_isoftmax_init(0.1, 1.0 / 255, -128, &s) || (w->masked && loom_isoftmax_mask_init(0.1, &s));
  int32_t *off = malloc((size_t)w->len * sizeof *off);
  for (int64_t i = 0; !bad && w->masked && i < w->len; i++)
    off[i] = loom_isoftmax_offset(&s, i < w->len - w->masked ? 0.0f : -10000.0f);
  double best = bad ? -1 : 1e30;
  for (int batch = 0; batch < 3 && !bad; batch++) {
    double t0 = cpu_now(), t;
    long reps = 0;
    do {
      if (w->ln) loom_ilayernorm_rows(&l, x, w->len, y, w->len, w->rows);
      else if (w->masked) loom_isoftmax_masked_rows(&s, x, w->len, y, w->len, w->rows, w->len, off, 1, w->rows);
      else loom_isoftmax_rows(&s, x, w->len, y, w->len, w->rows, w->len);
      reps++;
    } while ((t = cpu_now() - t0) < 0.2);
    if (t / (double)reps < best) best = t / (double)reps;
  }
  free(x), free(y), free(gamma), free(g), free(b), free(off);
  return best;
}

static struct loom_kattr ai(const char *n, int64_t v) { return (struct loom_kattr){.name = n, .kind = LOOM_KATTR_INT, .i = v}; }
static struct loom_kattr as(const char *n, const char *v) { return (struct loom_kattr){.name = n, .kind = LOOM_KATTR_STRING, .s = v}; }
static struct loom_kattr av(const char *n, const int64_t *v, int k) {
  return (struct loom_kattr){.name = n, .kind = LOOM_KATTR_INTS, .n = k, .ints = v};
}

int main(int argc, char **argv) {
  static const int64_t p11[4] = {1, 1, 1, 1}, s2[2] = {2, 2}, k3[2] = {3, 3};
  static const int64_t perm[4] = {0, 2, 1, 3}, nhwc[4] = {0, 2, 3, 1}, ax1[1] = {-1};
  static const float scales[4] = {1, 1, 2, 2};
  struct work w[] = {
      {"MatMul 128x768 . 768x768", "MatMul", 13, 2, 1, {F(1, 128, 768), F(768, 768)}, {F(1, 128, 768)}, {{0}}, 0, 2.0 * 128 * 768 * 768, 0},
      {"MatMul 1024^3", "MatMul", 13, 2, 1, {F(1024, 1024), F(1024, 1024)}, {F(1024, 1024)}, {{0}}, 0, 2.0 * 1024 * 1024 * 1024, 0},
      {"MatMul batched 12x128x64 . 12x64x128", "MatMul", 13, 2, 1, {F(12, 128, 64), F(12, 64, 128)}, {F(12, 128, 128)}, {{0}}, 0, 2.0 * 12 * 128 * 64 * 128, 0},
      {"Gemm 1x2048 . 2048x1000 (transB)", "Gemm", 13, 3, 1, {F(1, 2048), F(1000, 2048), F(1000)}, {F(1, 1000)}, {ai("transB", 1)}, 1, 2.0 * 2048 * 1000, 0},
      {"Conv 3x3 64->64 56x56", "Conv", 11, 3, 1, {F(1, 64, 56, 56), F(64, 64, 3, 3), F(64)}, {F(1, 64, 56, 56)}, {av("pads", p11, 4)}, 1, 2.0 * 64 * 64 * 9 * 56 * 56, 0},
      {"Conv 1x1 256->64 56x56", "Conv", 11, 2, 1, {F(1, 256, 56, 56), F(64, 256, 1, 1)}, {F(1, 64, 56, 56)}, {{0}}, 0, 2.0 * 256 * 64 * 56 * 56, 0},
      {"Conv 7x7/2 3->64 224x224", "Conv", 11, 2, 1, {F(1, 3, 224, 224), F(64, 3, 7, 7)}, {F(1, 64, 112, 112)}, {av("pads", (const int64_t[]){3, 3, 3, 3}, 4), av("strides", s2, 2)}, 2, 2.0 * 3 * 49 * 64 * 112 * 112, 0},
      {"Conv depthwise 3x3 144ch 56x56", "Conv", 11, 2, 1, {F(1, 144, 56, 56), F(144, 1, 3, 3)}, {F(1, 144, 56, 56)}, {av("pads", p11, 4), ai("group", 144)}, 2, 2.0 * 144 * 9 * 56 * 56, 0},
      {"ConvTranspose 4x4/2 64->32 28->56", "ConvTranspose", 11, 2, 1, {F(1, 64, 28, 28), F(64, 32, 4, 4)}, {F(1, 32, 56, 56)}, {av("pads", p11, 4), av("strides", s2, 2)}, 2, 2.0 * 64 * 32 * 16 * 28 * 28, 0},
      {"MaxPool 3x3/2 64x112x112", "MaxPool", 12, 1, 1, {F(1, 64, 112, 112)}, {F(1, 64, 56, 56)}, {av("kernel_shape", k3, 2), av("strides", s2, 2), av("pads", p11, 4)}, 3, 0, 0},
      {"AveragePool 3x3/1 256x28x28", "AveragePool", 11, 1, 1, {F(1, 256, 28, 28)}, {F(1, 256, 28, 28)}, {av("kernel_shape", k3, 2), av("pads", p11, 4)}, 2, 0, 0},
      {"GlobalAveragePool 2048x7x7", "GlobalAveragePool", 1, 1, 1, {F(1, 2048, 7, 7)}, {F(1, 2048, 1, 1)}, {{0}}, 0, 0, 0},
      {"Add 1x64x56x56 + 1x64x1x1", "Add", 14, 2, 1, {F(1, 64, 56, 56), F(1, 64, 1, 1)}, {F(1, 64, 56, 56)}, {{0}}, 0, 0, 0},
      {"Mul 1x96x56x56 * same", "Mul", 14, 2, 1, {F(1, 96, 56, 56), F(1, 96, 56, 56)}, {F(1, 96, 56, 56)}, {{0}}, 0, 0, 0},
      {"Relu 1M", "Relu", 14, 1, 1, {F(1 << 20)}, {F(1 << 20)}, {{0}}, 0, 0, 0},
      {"Sigmoid 1M", "Sigmoid", 13, 1, 1, {F(1 << 20)}, {F(1 << 20)}, {{0}}, 0, 0, 0},
      {"Erf 1M (GELU)", "Erf", 13, 1, 1, {F(1 << 20)}, {F(1 << 20)}, {{0}}, 0, 0, 0},
      {"Softmax 12x128x128 last axis", "Softmax", 13, 1, 1, {F(12, 128, 128)}, {F(12, 128, 128)}, {{0}}, 0, 0, 0},
      {"LayerNormalization 128x768", "LayerNormalization", 17, 3, 1, {F(128, 768), F(768), F(768)}, {F(128, 768)}, {{0}}, 0, 0, 0},
      {"ReduceMean 128x768 last axis", "ReduceMean", 13, 1, 1, {F(128, 768)}, {F(128, 1)}, {av("axes", ax1, 1)}, 1, 0, 0},
      {"ReduceMax 128x768 last axis", "ReduceMax", 13, 1, 1, {F(128, 768)}, {F(128, 1)}, {av("axes", ax1, 1)}, 1, 0, 0},
      {"Transpose 1x128x12x64 (0,2,1,3)", "Transpose", 13, 1, 1, {F(1, 128, 12, 64)}, {F(1, 12, 128, 64)}, {av("perm", perm, 4)}, 1, 0, 0},
      {"Transpose NCHW->NHWC 1x64x56x56", "Transpose", 13, 1, 1, {F(1, 64, 56, 56)}, {F(1, 56, 56, 64)}, {av("perm", nhwc, 4)}, 1, 0, 0},
      {"Concat 2x 1x64x56x56 axis 1", "Concat", 13, 2, 1, {F(1, 64, 56, 56), F(1, 64, 56, 56)}, {F(1, 128, 56, 56)}, {ai("axis", 1)}, 1, 0, 0},
      {"Gather embeddings 30522x768, 128 ids", "Gather", 13, 2, 1, {F(30522, 768), T(LOOM_DT_I64, 1, 128)}, {F(1, 128, 768)}, {{0}}, 0, 0, 2.0 * 128 * 768 * 4},
      {"Resize linear 2x 1x64x56x56", "Resize", 13, 3, 1, {F(1, 64, 56, 56), {0}, {LOOM_DT_F32, 1, {4}, (void *)scales}}, {F(1, 64, 112, 112)}, {as("mode", "linear")}, 1, 0, 0},
      {"Resize nearest 2x 1x64x56x56", "Resize", 13, 3, 1, {F(1, 64, 56, 56), {0}, {LOOM_DT_F32, 1, {4}, (void *)scales}}, {F(1, 64, 112, 112)}, {{0}}, 0, 0, 0},
      {"LSTM 1 layer, 32 steps, batch 1, 256->256", "LSTM", 14, 3, 1, {F(32, 1, 256), F(1, 1024, 256), F(1, 1024, 256)}, {F(32, 1, 1, 256)}, {ai("hidden_size", 256)}, 1, 2.0 * 32 * 2 * 1024 * 256, 0},
  };
  int n = (int)(sizeof w / sizeof w[0]);
  FILE *js = argc > 1 ? fopen(argv[1], "w") : NULL;
  if (argc > 1 && !js) return fprintf(stderr, "bench_kernels: cannot write %s\n", argv[1]), 1;
  if (js) fprintf(js, "{\"unit\": \"seconds of process CPU time per call\", \"kernels\": [\n");
  printf("%-44s %12s %10s %10s\n", "workload", "us/call", "GFLOP/s", "GB/s");
  for (int i = 0; i < n; i++) {
    char msg[LOOM_MSG_MAX] = "";
    double t = measure(&w[i], msg), bytes = bytes_of(&w[i]);
    if (t < 0) {
      printf("%-44s refused: %s\n", w[i].name, msg);
      continue;
    }
    double gf = w[i].flops ? w[i].flops / t / 1e9 : 0, gb = bytes / t / 1e9;
    char gfs[32] = "-";
    if (gf) snprintf(gfs, sizeof gfs, "%.2f", gf);
    printf("%-44s %12.1f %10s %10.2f\n", w[i].name, t * 1e6, gfs, gb);
    if (js)
      fprintf(js, "  {\"workload\": \"%s\", \"op\": \"%s\", \"seconds\": %.9f, \"gflops\": %.3f, \"gbytes_per_s\": %.3f}%s\n",
              w[i].name, w[i].op, t, gf, gb, i + 1 < n ? "," : "");
  }
  static const struct introw rw[] = {
      {"QSOFTMAX 4x65x65 (ViT heads)", 0, 4 * 65, 65, 40, 0},
      {"QSOFTMAX 4x128x128", 0, 4 * 128, 128, 40, 0},
      {"QSOFTMAX 4x32x32 (transformer heads)", 0, 4 * 32, 32, 40, 0},
      {"QSOFTMAX 4x32x32 masked, 8 keys (BERT heads)", 0, 4 * 32, 32, 40, 8},
      {"QLAYERNORM 65x128 (ViT)", 1, 65, 128, 40, 0},
      {"QLAYERNORM 128x768 (BERT-base)", 1, 128, 768, 40, 0},
  };
  int nr = (int)(sizeof rw / sizeof rw[0]);
  if (js) fprintf(js, "], \"int8_rows\": [\n");
  printf("\n%-44s %12s %10s\n", "int8 rows", "us/call", "ns/value");
  for (int i = 0; i < nr; i++) {
    double t = measure_rows(&rw[i]), per = t * 1e9 / (double)(rw[i].rows * rw[i].len);
    if (t < 0) {
      printf("%-44s refused by init\n", rw[i].name);
      continue;
    }
    printf("%-44s %12.1f %10.2f\n", rw[i].name, t * 1e6, per);
    if (js)
      fprintf(js, "  {\"workload\": \"%s\", \"seconds\": %.9f, \"ns_per_value\": %.3f}%s\n", rw[i].name, t, per,
              i + 1 < nr ? "," : "");
  }
  if (js) fprintf(js, "]}\n"), fclose(js);
  return 0;
}
