/*
 * bench_hostgen.c - host-code time, LLVM-generated against the C reference.
 *
 *   bench_hostgen [--json OUT.json] [--models DIR] [NET ...]
 *
 * Three tables (a benchmark prints and saves figures; it asserts nothing):
 *
 *   host ops   the runtime's host ops on typical shapes (quantize an
 *              activation into NCHWc16, dequantize it back, repack, softmax
 *              over 1000 classes): native entry vs loom_hostop_run
 *   networks   per NET (an ONNX model in DIR, default build/models): the
 *              HOST steps of its accelerator build (compile_model, calibrated
 *              from DIR/calib_NET or calib_imagenet), native vs portable,
 *              summed per inference; and the whole float network built with
 *              --target cpu vs the reference interpreter (ir_eval_ref)
 *
 * Times are the median of repeated runs on this machine.  Default NETs:
 * digits_mlp digits_cnn (add resnet18 mobilenetv2 for the ImageNet nets).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/outfile.h"
#include "driver/lib/hostcode.h"
#include "driver/core/hostops.h"
#include "driver/core/hostops_nn.h"
#include "driver/core/loomfile.h"
#include "sw_compiler/compile.h"
#include "sw_compiler/llvm/hostgen.h"

#define NB LOOM_FILE_NO_BUFFER

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- a file's buffers in host memory, and its host steps ---- */

struct mem {
  struct loom_file f;
  uint8_t **buf;
  struct loom_hostcode *hc;
};

static uint32_t rng = 1;
static void fill(const struct loom_file_tensor *t, uint8_t *p) {
  for (uint64_t i = 0; i < t->bytes; i++) p[i] = (uint8_t)((rng = rng * 1103515245u + 12345u) >> 16);
  if (t->dtype == LOOM_DT_F32)
    for (uint64_t i = 0; i < t->bytes / 4; i++) ((float *)p)[i] = (float)(int)((rng = rng * 1103515245u + 12345u) >> 20) / 512.0f - 4.0f;
}

static int mem_open(struct mem *m, const uint8_t *bytes, size_t n) {
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(bytes, n, "bench", &m->f, msg) || loom_hostcode_open(&m->f, "bench", 1, &m->hc, msg))
    return fprintf(stderr, "%s\n", msg), -1;
  m->buf = calloc(m->f.buffer_count + 1, sizeof *m->buf);
  for (uint32_t i = 0; i < m->f.buffer_count; i++) m->buf[i] = aligned_alloc(64, (m->f.buffers[i].size + 63) & ~63ull);
  for (uint32_t i = 0; i < m->f.tensor_count; i++) fill(&m->f.tensors[i], m->buf[m->f.tensors[i].buffer] + m->f.tensors[i].offset);
  return 0;
}

static void mem_close(struct mem *m) {
  for (uint32_t i = 0; i < m->f.buffer_count; i++) free(m->buf[i]);
  free(m->buf);
  loom_hostcode_close(m->hc);
  loom_file_free(&m->f);
}

static void args_of(struct mem *m, uint32_t step, struct loom_hostop_args *a) {
  const struct loom_file_step *s = &m->f.steps[step];
  memset(a, 0, sizeof *a);
  for (int k = 0; k < 6; k++) {
    uint32_t t = k < 4 ? s->inputs[k] : s->outputs[k - 4];
    if (t == NB) continue;
    struct loom_hostop_tensor x = {&m->f.tensors[t], m->buf[m->f.tensors[t].buffer] + m->f.tensors[t].offset};
    if (k < 4) a->in[a->n_in++] = x;
    else a->out[a->n_out++] = x;
  }
  a->params = s->param_size ? m->f.data + s->param_offset : NULL;
  a->param_size = s->param_size;
}

/* Median seconds of one run of step `step`, native or portable. */
static double time_step(struct mem *m, uint32_t step, int native) {
  struct loom_hostop_args a;
  char msg[LOOM_MSG_MAX];
  double t[15];
  args_of(m, step, &a);
  loom_hostcode_fn fn = loom_hostcode_entry(m->hc, step);
  for (int r = 0; r < 15; r++) {
    double t0 = now();
    loom_status st = native && fn ? loom_hostcode_call(fn, &a, msg) : loom_hostop_run(m->f.steps[step].index, &a, msg);
    t[r] = now() - t0;
    if (st) fprintf(stderr, "step %u: %s\n", step, msg);
  }
  qsort(t, 15, sizeof t[0], cmp_d);
  return t[7];
}

/* ---- table 1: host ops on typical shapes ---- */

static uint32_t tensor(struct loom_file_builder *b, const char *name, struct loom_file_tensor t) {
  t.name = loom_fb_string(b, name), t.user_dtype = t.dtype, t.bytes = loom_file_tensor_bytes(&t);
  struct loom_file_buffer buf = {.name = t.name, .kind = LOOM_BUFKIND_WORK, .size = t.bytes, .align = 64};
  t.buffer = loom_fb_buffer(b, &buf);
  return loom_fb_tensor(b, &t);
}

static void step(struct loom_file_builder *b, uint32_t op, uint32_t x, uint32_t y) {
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = op, .inputs = {x, NB, NB, NB}, .outputs = {y, NB}};
  loom_fb_step(b, &s);
}

static const char *const op_rows[] = {
    "QUANTIZE   f32 1x64x56x56 -> i8 NCHWc16", "DEQUANTIZE i8 NCHWc16 1x64x56x56 -> f32",
    "COPY       i8 NCHWc16 -> plain 1x64x56x56", "SOFTMAX    f32 8x1000 (last axis)",
    "SOFTMAX    i8 8x1000 -> u8 (quantized)", "IM2COL     i8 1x3x224x224 7x7/2 -> NCHWc16"};

static uint8_t *ops_file(size_t *n) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_DEFAULT_HASH);
  struct loom_file_tensor act = {.dtype = LOOM_DT_F32, .rank = 4, .dims = {1, 64, 56, 56}}, q = act, p8 = act;
  q.dtype = LOOM_DT_I8, q.layout = LOOM_LAYOUT_NCHWC, q.layout_block = 16, q.scale = 0.02f, q.zero_point = -5;
  p8.dtype = LOOM_DT_I8, p8.scale = q.scale, p8.zero_point = q.zero_point;
  uint32_t x = tensor(b, "x", act), xq = tensor(b, "xq", q), xd = tensor(b, "xd", act), xp = tensor(b, "xp", p8);
  step(b, LOOM_HOSTOP_QUANTIZE, x, xq);
  step(b, LOOM_HOSTOP_DEQUANTIZE, xq, xd);
  step(b, LOOM_HOSTOP_COPY, xq, xp);
  struct loom_file_tensor lg = {.dtype = LOOM_DT_F32, .rank = 2, .dims = {8, 1000}}, lq = lg, pr = lg;
  lq.dtype = LOOM_DT_I8, lq.scale = 0.1f, lq.zero_point = 3;
  pr.dtype = LOOM_DT_U8, pr.scale = 1.0f / 256;
  step(b, LOOM_HOSTOP_SOFTMAX, tensor(b, "l", lg), tensor(b, "p", lg));
  step(b, LOOM_HOSTOP_SOFTMAX, tensor(b, "lq", lq), tensor(b, "pq", pr));
  /* ResNet-18's folded stem: 3 channels, 7x7 window, stride 2, pad 3 */
  struct loom_file_tensor img = {.dtype = LOOM_DT_I8, .rank = 4, .dims = {1, 3, 224, 224}, .scale = 0.02f, .zero_point = -5};
  struct loom_file_tensor col = img;
  col.dims[1] = 147, col.dims[2] = col.dims[3] = 112, col.layout = LOOM_LAYOUT_NCHWC, col.layout_block = 16;
  int32_t v[LOOM_IM2COL_PARAM_COUNT] = {[LOOM_IM2COL_K_H] = 7, [LOOM_IM2COL_K_W] = 7, [LOOM_IM2COL_STRIDE_H] = 2,
                                        [LOOM_IM2COL_STRIDE_W] = 2, [LOOM_IM2COL_PAD_T] = 3, [LOOM_IM2COL_PAD_L] = 3,
                                        [LOOM_IM2COL_DIL_H] = 1, [LOOM_IM2COL_DIL_W] = 1, [LOOM_IM2COL_OUT_H] = 112,
                                        [LOOM_IM2COL_OUT_W] = 112, [LOOM_IM2COL_PAD_VALUE] = -5};
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = LOOM_HOSTOP_IM2COL,
                             .inputs = {tensor(b, "img", img), NB, NB, NB}, .outputs = {tensor(b, "col", col), NB}};
  s.param_offset = loom_fb_data(b, v, sizeof v, 4), s.param_size = sizeof v;
  loom_fb_step(b, &s);
  uint8_t *out = loom_file_builder_finish(b, n);
  loom_file_builder_free(b);
  return out;
}

static int bench_ops(FILE *json) {
  size_t n, m;
  uint8_t *p = ops_file(&n), *q;
  struct ir_error err = {{0}};
  struct hostgen_options o = {0};
  if (hostgen_loom(p, n, "ops", &o, &q, &m, NULL, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
  struct mem mm;
  if (mem_open(&mm, q, m)) return -1;
  printf("\nhost ops (median of 15 runs)\n%-42s %12s %12s %8s\n", "op", "LLVM (us)", "C ref (us)", "speedup");
  fprintf(json, "  \"host_ops\": [\n");
  for (uint32_t s = 0; s < mm.f.step_count; s++) {
    double tn = time_step(&mm, s, 1), tc = time_step(&mm, s, 0);
    printf("%-42s %12.1f %12.1f %7.1fx\n", op_rows[s], 1e6 * tn, 1e6 * tc, tc / tn);
    fprintf(json, "    {\"op\": \"%s\", \"llvm_s\": %.9f, \"c_s\": %.9f}%s\n", op_rows[s], tn, tc,
            s + 1 < mm.f.step_count ? "," : "");
  }
  fprintf(json, "  ],\n");
  mem_close(&mm);
  free(p), free(q);
  return 0;
}

/* ---- table 2: networks ---- */

struct net_row {
  int host_steps, native_steps;
  double host_llvm, host_c, graph_llvm, graph_ref;
};

/* The accelerator build's host steps, native vs portable. */
static int bench_host_steps(const char *dir, const char *net, struct net_row *row) {
  char onnx[512], calib[512];
  snprintf(onnx, sizeof onnx, "%s/%s.onnx", dir, net);
  snprintf(calib, sizeof calib, "%s/calib_%s", dir, net);
  FILE *f = fopen(calib, "r");
  if (!f) snprintf(calib, sizeof calib, "%s/calib_imagenet", dir);
  else fclose(f);
  struct compile_options o = {.calib = calib, .flags = COMPILE_IM2COL}; /* as `loom compile` */
  struct compile_result r;
  struct ir_error err = {{0}};
  if (compile_model(onnx, &o, &r, &err)) return compile_result_free(&r), fprintf(stderr, "%s: %s\n", net, err.msg), -1;
  uint8_t *q = r.bytes;
  size_t m = r.size;
  r.bytes = NULL;
  struct mem mm;
  int rc = mem_open(&mm, q, m);
  for (uint32_t s = 0; !rc && s < mm.f.step_count; s++) {
    if (mm.f.steps[s].kind != LOOM_STEP_HOST) continue;
    row->host_steps++;
    row->native_steps += loom_hostcode_entry(mm.hc, s) != NULL;
    row->host_llvm += time_step(&mm, s, 1);
    row->host_c += time_step(&mm, s, 0);
  }
  if (!rc) mem_close(&mm);
  compile_result_free(&r);
  free(q);
  return rc;
}

/* --target cpu vs the reference interpreter, one inference each (median of 3). */
static int bench_graph(const char *dir, const char *net, struct net_row *row) {
  char onnx[512], msg[LOOM_MSG_MAX];
  struct ir_error err = {{0}};
  snprintf(onnx, sizeof onnx, "%s/%s.onnx", dir, net);
  struct ir_graph *g = onnx_import_file(onnx, &err);
  uint8_t *q;
  size_t m;
  struct hostgen_options ho = {0};
  if (!g || ir_run_default_passes(g, &err) || hostgen_compile_graph(g, &ho, loom_hw_config_by_name("default"), &q, &m, NULL, &err))
    return ir_graph_free(g), fprintf(stderr, "%s: %s\n", net, err.msg), -1;
  struct mem mm;
  if (mem_open(&mm, q, m)) return -1;
  row->graph_llvm = time_step(&mm, 0, 1);
  const struct loom_file_tensor *x = &mm.f.tensors[mm.f.steps[0].inputs[0]];
  const void *in[1] = {mm.buf[x->buffer] + x->offset};
  void *out[2] = {0};
  double t[3];
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    if (ir_eval_ref(g, in, out, &err)) fprintf(stderr, "%s\n", err.msg);
    t[r] = now() - t0;
    free(out[0]), free(out[1]);
  }
  qsort(t, 3, sizeof t[0], cmp_d);
  row->graph_ref = t[1];
  (void)msg;
  mem_close(&mm);
  free(q);
  ir_graph_free(g);
  return 0;
}

static void bench_nets(FILE *json, const char *dir, char **nets, int n) {
  printf("\nnetworks: host steps of the accelerator build, and the whole float network (--target cpu)\n");
  printf("%-12s %6s %14s %14s %16s %16s %8s\n", "net", "steps", "host LLVM (us)", "host C (us)", "cpu LLVM (ms)",
         "interpreter (ms)", "speedup");
  fprintf(json, "  \"networks\": [\n");
  for (int i = 0; i < n; i++) {
    struct net_row r = {0};
    if (bench_host_steps(dir, nets[i], &r) || bench_graph(dir, nets[i], &r)) continue;
    printf("%-12s %3d/%-2d %14.1f %14.1f %16.2f %16.2f %7.1fx\n", nets[i], r.native_steps, r.host_steps, 1e6 * r.host_llvm,
           1e6 * r.host_c, 1e3 * r.graph_llvm, 1e3 * r.graph_ref, r.graph_ref / r.graph_llvm);
    fprintf(json, "    {\"net\": \"%s\", \"host_steps\": %d, \"native_steps\": %d, \"host_llvm_s\": %.9f, \"host_c_s\": %.9f, "
            "\"cpu_llvm_s\": %.9f, \"interpreter_s\": %.9f}%s\n", nets[i], r.host_steps, r.native_steps, r.host_llvm,
            r.host_c, r.graph_llvm, r.graph_ref, i + 1 < n ? "," : "");
  }
  fprintf(json, "  ]\n");
}

int main(int argc, char **argv) {
  const char *json_path = NULL, *dir = "build/models";
  char *dflt[] = {"digits_mlp", "digits_cnn"}, **nets = dflt;
  int n = 2, i = 1;
  for (; i < argc && argv[i][0] == '-'; i += 2) {
    if (i + 1 >= argc) return fprintf(stderr, "usage: bench_hostgen [--json OUT] [--models DIR] [NET ...]\n"), 2;
    if (!strcmp(argv[i], "--json")) json_path = argv[i + 1];
    else if (!strcmp(argv[i], "--models")) dir = argv[i + 1];
  }
  if (i < argc) nets = argv + i, n = argc - i;
  char msg[LOOM_MSG_MAX];
  struct loom_outfile *o;
  if (loom_outfile_open(json_path ? json_path : "/dev/null", &o, msg) != LOOM_OK)
    return fprintf(stderr, "bench_hostgen: %s\n", msg), 1;
  FILE *json = loom_outfile_stream(o);
  fprintf(json, "{\n");
  int rc = bench_ops(json);
  bench_nets(json, dir, nets, n);
  fprintf(json, "}\n");
  if (loom_outfile_commit(o, msg) != LOOM_OK) return fprintf(stderr, "bench_hostgen: %s\n", msg), 1;
  if (json_path) printf("\nwrote %s\n", json_path);
  return rc ? 1 : 0;
}
