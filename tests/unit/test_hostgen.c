/*
 * test_hostgen.c - host code generated through LLVM against the C reference.
 *
 * Host ops: random steps (shapes, layouts NCHWc / NC / plain, dtypes,
 * scales, zero points, axes) are compiled by hostgen into one shared
 * object, loaded through the runtime's hostcode.c, and each native entry
 * runs on random stored bytes next to the portable op (hostops.c):
 * COPY / QUANTIZE / DEQUANTIZE must agree bit for bit, SOFTMAX within
 * 2e-7 absolute + 4 ulp-ish relative (exp is a polynomial), or one
 * quantization step for a quantized output.
 *
 * Cross targets: the same steps for aarch64 and armv7 give images with the
 * right ELF machine, class and float ABI, which this x86-64 runtime does
 * not load (the portable ops run instead).  Running them is
 * tests/llvm/run-cross.sh (qemu-user).
 *
 * Loading: a damaged image for this machine, a missing symbol or a
 * signature mismatch are load errors, never a quiet fallback.
 *
 * Whole graphs (--target cpu): kernels on IR text graphs and the digits
 * and small ONNX models against ir_eval_ref (bit-identical; softmax within
 * 2e-7), and digits_cnn against the int8 accelerator path on fsim (same
 * class on >= 98% of the 360 test digits, mean logit difference <= 2% of
 * the logit range).  Model tests skip with a message when build/models ($MODELS)
 * has not been made (sw_compiler/llvm/module.mk makes it before the test).
 */
#include <elf.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "filebytes.h"
#include "driver/lib/hostcode.h"
#include "driver/core/hostops.h"
#include "driver/core/hostops_nn.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "driver/lib/runtime.h"
#include "sw_compiler/compile.h"
#include "sw_compiler/llvm/hostgen.h"

#define NB LOOM_FILE_NO_BUFFER

/* ---- a small deterministic PRNG (splitmix64) ---- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}
static int rint_in(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }
static float rfloat(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() >> 40) / (float)(1 << 24); }

/* ---- random host-op steps ---- */

struct opcase {
  uint32_t op;
  struct loom_file_tensor x, y;
  int32_t axis;
  int32_t im2col[LOOM_IM2COL_PARAM_COUNT];
};

static void random_shape(struct loom_file_tensor *t, int rank) {
  t->rank = (uint32_t)rank;
  for (int i = 0; i < rank; i++) t->dims[i] = rint_in(1, i == 1 ? 20 : 6);
}

static void random_layout(struct loom_file_tensor *t) {
  static const uint32_t blocks[] = {1, 3, 4, 8, 16};
  if ((t->rank == 4 || t->rank == 2) && rnd() % 2) {
    t->layout = t->rank == 4 ? LOOM_LAYOUT_NCHWC : LOOM_LAYOUT_NC;
    t->layout_block = blocks[rnd() % 5];
  }
}

static void quantized(struct loom_file_tensor *t, uint32_t dtype) {
  t->dtype = t->user_dtype = dtype;
  t->scale = rnd() % 3 ? rfloat(0.003f, 0.5f) : 0.125f; /* a power of two makes exact ties */
  t->zero_point = dtype == LOOM_DT_U8 ? rint_in(0, 255) : dtype == LOOM_DT_I8 ? rint_in(-128, 127) : rint_in(-1000, 1000);
}

static void plain_dtype(struct loom_file_tensor *t, uint32_t dtype) { t->dtype = t->user_dtype = dtype; }

static void random_dtypes(struct opcase *c) {
  static const uint32_t q8[] = {LOOM_DT_I8, LOOM_DT_U8};
  switch (c->op) {
  case LOOM_HOSTOP_COPY: {
    uint32_t dt = (uint32_t)rint_in(LOOM_DT_I8, LOOM_DT_F32);
    if (dt != LOOM_DT_F32 && rnd() % 2) quantized(&c->x, dt), c->y.zero_point = c->x.zero_point;
    plain_dtype(&c->x, dt), plain_dtype(&c->y, dt);
    c->y.scale = c->x.scale;
    break;
  }
  case LOOM_HOSTOP_QUANTIZE:
    if (rnd() % 4) plain_dtype(&c->x, LOOM_DT_F32);
    else quantized(&c->x, LOOM_DT_I8);
    quantized(&c->y, q8[rnd() % 2]);
    break;
  case LOOM_HOSTOP_DEQUANTIZE:
    quantized(&c->x, (uint32_t[]){LOOM_DT_I8, LOOM_DT_U8, LOOM_DT_I32}[rnd() % 3]);
    plain_dtype(&c->y, LOOM_DT_F32);
    break;
  default: /* SOFTMAX */
    if (rnd() % 3) plain_dtype(&c->x, LOOM_DT_F32);
    else quantized(&c->x, q8[rnd() % 2]);
    if (rnd() % 3) plain_dtype(&c->y, LOOM_DT_F32);
    else quantized(&c->y, q8[rnd() % 2]), c->y.scale = 1.0f / 256, c->y.zero_point = c->y.dtype == LOOM_DT_I8 ? -128 : 0;
    break;
  }
}

/* A folded-stem gather: random window, stride, padding and dilation, any
 * input layout, a blocked or plain quantized output. */
static struct opcase im2col_case(void) {
  struct opcase c = {.op = LOOM_HOSTOP_IM2COL};
  int32_t *v = c.im2col;
  int64_t oh, ow;
  do {
    random_shape(&c.x, 4);
    c.x.dims[2] = rint_in(1, 12), c.x.dims[3] = rint_in(1, 12);
    v[LOOM_IM2COL_K_H] = rint_in(1, 7), v[LOOM_IM2COL_K_W] = rint_in(1, 7);
    v[LOOM_IM2COL_STRIDE_H] = rint_in(1, 3), v[LOOM_IM2COL_STRIDE_W] = rint_in(1, 3);
    v[LOOM_IM2COL_PAD_T] = rint_in(0, 3), v[LOOM_IM2COL_PAD_L] = rint_in(0, 3);
    v[LOOM_IM2COL_DIL_H] = rint_in(1, 2), v[LOOM_IM2COL_DIL_W] = rint_in(1, 2);
    oh = (c.x.dims[2] + 2 * v[LOOM_IM2COL_PAD_T] - v[LOOM_IM2COL_DIL_H] * (v[LOOM_IM2COL_K_H] - 1) - 1) /
         v[LOOM_IM2COL_STRIDE_H] + 1;
    ow = (c.x.dims[3] + 2 * v[LOOM_IM2COL_PAD_L] - v[LOOM_IM2COL_DIL_W] * (v[LOOM_IM2COL_K_W] - 1) - 1) /
         v[LOOM_IM2COL_STRIDE_W] + 1;
  } while (oh < 1 || ow < 1);
  v[LOOM_IM2COL_OUT_H] = (int32_t)oh, v[LOOM_IM2COL_OUT_W] = (int32_t)ow;
  v[LOOM_IM2COL_PAD_VALUE] = rint_in(-128, 127);
  c.y.rank = 4;
  c.y.dims[0] = c.x.dims[0], c.y.dims[1] = c.x.dims[1] * v[LOOM_IM2COL_K_H] * v[LOOM_IM2COL_K_W];
  c.y.dims[2] = oh, c.y.dims[3] = ow;
  random_layout(&c.x);
  random_layout(&c.y);
  quantized(&c.x, LOOM_DT_I8);
  quantized(&c.y, LOOM_DT_I8);
  return c;
}

static struct opcase random_case(uint32_t op) {
  if (op == LOOM_HOSTOP_IM2COL) return im2col_case();
  struct opcase c = {.op = op};
  random_shape(&c.x, rint_in(op == LOOM_HOSTOP_SOFTMAX ? 1 : 0, 4));
  c.y.rank = c.x.rank;
  memcpy(c.y.dims, c.x.dims, sizeof c.y.dims);
  random_layout(&c.x);
  random_layout(&c.y);
  random_dtypes(&c);
  c.axis = c.x.rank ? rint_in(-(int)c.x.rank, (int)c.x.rank - 1) : 0;
  return c;
}

/* One step per case; buffers and tensors 2i, 2i+1. */
static uint8_t *cases_file(const struct opcase *c, int n, size_t *size) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_DEFAULT_HASH);
  for (int i = 0; i < n; i++) {
    struct loom_file_tensor x = c[i].x, y = c[i].y;
    char name[32];
    snprintf(name, sizeof name, "x%d", i);
    x.name = loom_fb_string(b, name), x.buffer = (uint32_t)(2 * i), x.bytes = loom_file_tensor_bytes(&x);
    struct loom_file_buffer bx = {.name = x.name, .kind = LOOM_BUFKIND_WORK, .size = x.bytes, .align = 64};
    snprintf(name, sizeof name, "y%d", i);
    y.name = loom_fb_string(b, name), y.buffer = (uint32_t)(2 * i + 1), y.bytes = loom_file_tensor_bytes(&y);
    struct loom_file_buffer by = {.name = y.name, .kind = LOOM_BUFKIND_WORK, .size = y.bytes, .align = 64};
    loom_fb_buffer(b, &bx), loom_fb_buffer(b, &by);
    loom_fb_tensor(b, &x), loom_fb_tensor(b, &y);
    struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = c[i].op, .inputs = {(uint32_t)(2 * i), NB, NB, NB},
                               .outputs = {(uint32_t)(2 * i + 1), NB}};
    if (c[i].op == LOOM_HOSTOP_SOFTMAX) {
      s.param_offset = loom_fb_data(b, &c[i].axis, 4, 4);
      s.param_size = 4;
    }
    if (c[i].op == LOOM_HOSTOP_IM2COL) { /* little-endian int32, as on every target tested */
      s.param_offset = loom_fb_data(b, c[i].im2col, sizeof c[i].im2col, 4);
      s.param_size = sizeof c[i].im2col;
    }
    loom_fb_step(b, &s);
  }
  uint8_t *p = loom_file_builder_finish(b, size);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

static uint8_t *generate(const uint8_t *in, size_t n, const char *triple, size_t *out_n,
                         struct hostgen_summary *sum) {
  struct hostgen_options o = {.triple = triple};
  struct ir_error err = {{0}};
  uint8_t *out = NULL;
  if (hostgen_loom(in, n, "cases.loom", &o, &out, out_n, sum, &err)) fail_msg("hostgen: %s", err.msg);
  return out;
}

/* ---- running a step both ways ---- */

static void fill_input(const struct loom_file_tensor *t, uint8_t *p) {
  if (t->dtype != LOOM_DT_F32) {
    for (uint64_t i = 0; i < t->bytes; i++) p[i] = (uint8_t)rnd();
    return;
  }
  static const float special[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1e30f, -1e30f};
  for (uint64_t i = 0; i < t->bytes / 4; i++) {
    float v = rfloat(-6, 6);
    uint64_t r = rnd() % 64;
    if (r < 9) v = special[r] * (t->scale ? t->scale : 1);
    else if (r < 20) v = (float)rint_in(-300, 300) * 0.0625f; /* ties for scale 0.125 */
    else if (r == 20) v = NAN;
    memcpy(p + 4 * i, &v, 4);
  }
}

static float f32_at(const uint8_t *p, uint64_t i) {
  float v;
  memcpy(&v, p + 4 * i, 4);
  return v;
}

static void compare(const struct opcase *c, const struct loom_file_tensor *y, int index, const uint8_t *got,
                    const uint8_t *want) {
  assert_true(y->bytes > 0);
  if (c->op != LOOM_HOSTOP_SOFTMAX) {
    for (uint64_t i = 0; i < y->bytes; i++)
      if (got[i] != want[i]) fail_msg("case %d (op %s): byte %llu differs: %u, want %u", index,
                                      loom_hostop_name(c->op), (unsigned long long)i, got[i], want[i]);
    return;
  }
  if (y->dtype == LOOM_DT_F32) {
    for (uint64_t i = 0; i < y->bytes / 4; i++) {
      float a = f32_at(got, i), b = f32_at(want, i);
      if ((isnan(a) && isnan(b)) || fabsf(a - b) <= 2e-7f + 4e-7f * fabsf(b)) continue;
      fail_msg("case %d (softmax): element %llu is %.9g, want %.9g", index, (unsigned long long)i, a, b);
    }
    return;
  }
  for (uint64_t i = 0; i < y->bytes; i++) {
    int a = y->dtype == LOOM_DT_I8 ? (int8_t)got[i] : got[i], b = y->dtype == LOOM_DT_I8 ? (int8_t)want[i] : want[i];
    if (abs(a - b) > 1) fail_msg("case %d (softmax, quantized): byte %llu is %d, want %d", index, (unsigned long long)i, a, b);
  }
}

static void run_case(const struct loom_file *f, const struct loom_hostcode *hc, const struct opcase *c, int i) {
  const struct loom_file_tensor *x = &f->tensors[2 * i], *y = &f->tensors[2 * i + 1];
  uint8_t *xb = malloc(x->bytes + 1), *got = malloc(y->bytes + 1), *want = malloc(y->bytes + 1);
  fill_input(x, xb);
  memset(got, 0xA5, y->bytes);
  memset(want, 0x5A, y->bytes);
  struct loom_hostop_args a = {.in = {{x, xb}}, .out = {{y, got}}, .n_in = 1, .n_out = 1};
  a.params = f->data + f->steps[i].param_offset, a.param_size = f->steps[i].param_size;
  char msg[LOOM_MSG_MAX];
  loom_hostcode_fn fn = loom_hostcode_entry(hc, (uint32_t)i);
  assert_non_null(fn);
  assert_int_equal(loom_hostcode_call(fn, &a, msg), LOOM_OK);
  a.out[0].data = want;
  if (loom_hostop_run(c->op, &a, msg) != LOOM_OK) fail_msg("case %d: reference: %s", i, msg);
  compare(c, y, i, got, want);
  free(xb), free(got), free(want);
}

#define N_CASES 160

static void test_ops_random(void **state) {
  static struct opcase c[N_CASES];
  rng_state = 20240601;
  for (int i = 0; i < N_CASES; i++) c[i] = random_case((uint32_t)(i % 5)); /* COPY .. IM2COL */
  size_t n, m;
  uint8_t *p = cases_file(c, N_CASES, &n);
  struct hostgen_summary sum;
  uint8_t *q = generate(p, n, NULL, &m, &sum);
  assert_int_equal(sum.native_steps, N_CASES);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(q, m, "gen.loom", &f, msg)) fail_msg("%s", msg);
  assert_int_equal(f.version_minor, 1);
  struct loom_hostcode *hc;
  if (loom_hostcode_open(&f, "gen.loom", 1, &hc, msg)) fail_msg("%s", msg);
  assert_true(loom_hostcode_loaded(hc));
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N_CASES; i++) run_case(&f, hc, &c[i], i);
  loom_hostcode_close(hc);
  loom_file_free(&f);
  free(p), free(q);
}

/* ---- whole graphs (--target cpu) ---- */

struct loaded {
  loom_device *dev;
  loom_model *m;
};

/* The test made the file, so it consents to its native code. */
static void load_bytes(const uint8_t *p, size_t n, struct loaded *l) {
  char msg[LOOM_MSG_MAX];
  if (loom_device_open("fsim", "config=default,trust_native=1", &l->dev, msg)) fail_msg("%s", msg);
  if (loom_model_load_memory(l->dev, p, n, "model.loom", &l->m, msg)) fail_msg("load: %s", msg);
}

static void unload(struct loaded *l) {
  loom_model_free(l->m);
  loom_device_close(l->dev);
}

static uint8_t *graph_loom(const struct ir_graph *g, const char *triple, size_t *n) {
  struct hostgen_options o = {.triple = triple};
  struct ir_error err = {{0}};
  uint8_t *out;
  if (hostgen_compile_graph(g, &o, loom_hw_config_by_name("default"), &out, n, NULL, &err))
    fail_msg("hostgen_compile_graph: %s", err.msg);
  return out;
}

/* Runs the model on inputs in[k] (plain f32 of graph input k); out[k]
 * gets malloc'd outputs. */
static void run_model(struct loaded *l, const struct ir_graph *g, const float *const *in, float **out) {
  for (int k = 0; k < g->n_inputs; k++) {
    const struct ir_tensor *t = &g->tensors[g->inputs[k]];
    if (loom_model_set_input(l->m, t->name, LOOM_DT_F32, t->rank, t->dims, in[k]))
      fail_msg("set_input: %s", loom_device_error(l->dev));
  }
  if (loom_model_run(l->m, 0)) fail_msg("run: %s", loom_device_error(l->dev));
  for (int k = 0; k < loom_model_output_count(l->m); k++) {
    const struct loom_tensor_info *info = loom_model_output(l->m, k);
    int64_t n = 1;
    for (int d = 0; d < info->rank; d++) n *= info->dims[d];
    out[k] = malloc((size_t)n * 4 + 4);
    if (loom_model_get_output(l->m, info->name, out[k], (size_t)n * 4)) fail_msg("get_output: %s", loom_device_error(l->dev));
  }
}

/* Native against the reference interpreter: equal, or within `tol` for
 * graphs with a softmax.  Returns the largest difference. */
static float compare_graph(const struct ir_graph *g, const float *const *in, float tol) {
  size_t n;
  uint8_t *p = graph_loom(g, NULL, &n);
  struct loaded l;
  load_bytes(p, n, &l);
  float *got[2] = {0}, worst = 0;
  void *want[2] = {0};
  struct ir_error err = {{0}};
  run_model(&l, g, in, got);
  if (ir_eval_ref(g, (const void *const *)in, want, &err)) fail_msg("ir_eval_ref: %s", err.msg);
  for (int k = 0; k < g->n_outputs; k++) {
    const struct ir_tensor *t = &g->tensors[g->outputs[k]];
    for (int64_t i = 0; i < ir_tensor_numel(t); i++) {
      float a = got[k][i], b = ((float *)want[k])[i], d = fabsf(a - b);
      if (d > worst) worst = d;
      if (!(d <= tol) && !(isnan(a) && isnan(b)))
        fail_msg("%s: output %d element %lld is %.9g, the interpreter says %.9g", g->source, k, (long long)i, a, b);
    }
    free(got[k]), free(want[k]);
  }
  unload(&l);
  free(p);
  return worst;
}

static struct ir_graph *parse_graph(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g || ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  return g;
}

static float *random_input(const struct ir_graph *g, int k) {
  int64_t n = ir_tensor_numel(&g->tensors[g->inputs[k]]);
  float *v = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) v[i] = rfloat(-2, 2);
  return v;
}

static void check_text_graph(const char *text, float tol) {
  struct ir_graph *g = parse_graph(text);
  float *in[3] = {0};
  for (int k = 0; k < g->n_inputs; k++) in[k] = random_input(g, k);
  float worst = compare_graph(g, (const float *const *)in, tol);
  print_message("graph with %d nodes: largest difference %g (allowed %g)\n", g->n_nodes, (double)worst, (double)tol);
  for (int k = 0; k < g->n_inputs; k++) free(in[k]);
  ir_graph_free(g);
}

/* Every kernel, with the attributes that change its loops. */
static void test_graph_ops(void **state) {
  rng_state = 7;
  check_text_graph(
      "loom.ir 1\n"
      "input %x : f32[2,4,9,7]\n"
      "const %w : f32[6,2,3,2] = rand(1)\n"
      "const %b : f32[6] = rand(2)\n"
      "%c = Conv(%x, %w, %b) {kernel_shape=[3,2], pads=[1,0,2,1], strides=[2,1], dilations=[1,2], group=2}\n"
      "%r = Relu(%c)\n"
      "%m = MaxPool(%r) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}\n"
      "%a = AveragePool(%r) {kernel_shape=[2,3], pads=[0,1,1,1], strides=[1,2], count_include_pad=0}\n"
      "%ai = AveragePool(%r) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2], count_include_pad=1}\n"
      "%s = Add(%m, %ai)\n"
      "%gp = GlobalAveragePool(%s)\n"
      "%f = Flatten(%gp) {axis=1}\n"
      "const %gw : f32[5,6] = rand(3)\n"
      "const %gc : f32[5] = rand(4)\n"
      "%y = Gemm(%f, %gw, %gc) {transB=1, alpha=0.5, beta=2.0}\n"
      "%z = Softmax(%y) {axis=1}\n"
      "output %z\n"
      "output %a\n",
      2e-7f);
  check_text_graph(
      "loom.ir 1\n"
      "input %x : f32[3,1,4,5]\n"
      "input %u : f32[2,5,6]\n"
      "const %k : f32[4,1] = rand(5)\n"
      "%p = Mul(%x, %k)\n"
      "%q = MatMul(%p, %u)\n"
      "const %lo : f32[] = [-0.5]\n"
      "const %hi : f32[] = [0.75]\n"
      "%cl = Clip(%q, %lo, %hi)\n"
      "%t = Transpose(%cl) {perm=[1,3,0,2]}\n"
      "%cc = Concat(%t, %t) {axis=2}\n"
      "%sm = Softmax(%cc) {axis=0}\n"
      "output %sm\n",
      2e-7f);
  check_text_graph(
      "loom.ir 1\n"
      "input %x : f32[2,3,10]\n"
      "const %w : f32[4,3,3] = rand(6)\n"
      "%c = Conv(%x, %w) {kernel_shape=[3], pads=[2,1], strides=[2]}\n"
      "%m = MaxPool(%c) {kernel_shape=[2], strides=[1]}\n"
      "const %a : f32[4,4] = rand(7)\n"
      "const %bb : f32[4] = rand(8)\n"
      "%g = Gemm(%a, %a, %bb) {transA=1}\n"
      "output %m\n"
      "output %g\n",
      0);
}

/* $MODELS, or build/models, which build/ and build-san/ share. */
static const char *models_dir(void) {
  const char *m = getenv("MODELS");
  return m && *m ? m : "build/models";
}

static struct ir_graph *import_model(const char *file) {
  char path[512];
  struct ir_error err = {{0}};
  snprintf(path, sizeof path, "%s/%s", models_dir(), file);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  struct ir_graph *g = onnx_import_file(path, &err);
  if (!g || ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  return g;
}

static float *read_npy(const char *file, int64_t *count) {
  char path[512], msg[LOOM_MSG_MAX];
  struct loom_npy n;
  snprintf(path, sizeof path, "%s/%s", models_dir(), file);
  if (loom_npy_read(path, &n, msg)) fail_msg("%s", msg);
  assert_int_equal(n.dtype, LOOM_DT_F32);
  *count = 1;
  for (int i = 0; i < n.rank; i++) *count *= n.dims[i];
  return n.data; /* owned by the caller */
}

/* The digits models and the small nets: native == interpreter. */
static void test_graph_models(void **state) {
  static const char *const models[] = {"digits_mlp", "digits_cnn", "small/avgpool", "small/concat",
                                       "small/conv3x3", "small/conv_bn_relu", "small/conv_stride2",
                                       "small/dwconv", "small/gemm", "small/maxpool", "small/residual"};
  char file[128];
  int done = 0;
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    snprintf(file, sizeof file, "%s.onnx", models[i]);
    struct ir_graph *g = import_model(file);
    if (!g) continue;
    int64_t n;
    snprintf(file, sizeof file, strchr(models[i], '/') ? "%s_in.npy" : "%s_in0.npy", models[i]);
    float *x = read_npy(file, &n);
    const float *in[1] = {x};
    assert_int_equal(n, ir_tensor_numel(&g->tensors[g->inputs[0]]));
    compare_graph(g, in, 0);
    print_message("%s: %d nodes, bit-identical to the interpreter\n", models[i], g->n_nodes);
    free(x);
    ir_graph_free(g);
    done++;
  }
  if (!done) {
    print_message("skipped: no models in %s (make %s/digits_manifest.json)\n", models_dir(), models_dir());
    skip();
  }
}

/* ---- cross targets: images for other machines ---- */

static uint8_t *small_cases_file(struct opcase *c, int n, size_t *size) {
  rng_state = 99;
  for (int i = 0; i < n; i++) c[i] = random_case((uint32_t)(i % 4));
  return cases_file(c, n, size);
}

static void check_elf(const uint8_t *img, uint64_t size, int elf_class, uint16_t machine, int hard_float) {
  struct loom_hostcode_machine m;
  char why[128];
  assert_int_equal(loom_hostcode_elf_machine(img, size, &m, why), 0);
  assert_int_equal(m.elf_class, elf_class);
  assert_int_equal(m.machine, machine);
  assert_int_equal(m.big_endian, 0);
  assert_int_equal(m.hard_float, hard_float);
  assert_int_equal(img[EI_DATA], ELFDATA2LSB);
  /* the image passes the loader's checks, whatever machine it is for */
  if (loom_hostcode_elf_check(img, size, why)) fail_msg("%s", why);
}

/* aarch64 and armv7 images are ELF for those machines; this runtime
 * does not load them and runs the portable ops (same results). */
static void test_cross_images(void **state) {
  static const struct {
    const char *triple, *canonical;
    int elf_class, hard_float;
    uint16_t machine;
  } t[] = {{"aarch64-linux-gnu", "aarch64-unknown-linux-gnu", ELFCLASS64, 0, EM_AARCH64},
           {"armv7-linux-gnueabihf", "armv7-unknown-linux-gnueabihf", ELFCLASS32, 1, EM_ARM}};
  struct opcase c[24];
  size_t n, m;
  uint8_t *p = small_cases_file(c, 24, &n);
  for (int i = 0; i < 2; i++) {
    struct hostgen_summary sum;
    uint8_t *q = generate(p, n, t[i].triple, &m, &sum);
    assert_string_equal(sum.triple, t[i].canonical);
    struct loom_file f;
    char msg[LOOM_MSG_MAX];
    if (loom_file_parse(q, m, "x.loom", &f, msg)) fail_msg("%s", msg);
    assert_string_equal(loom_file_string(&f, f.hostcode->triple), t[i].canonical);
    check_elf(f.hostcode_image, f.hostcode->image_size, t[i].elf_class, t[i].machine, t[i].hard_float);
    struct loom_hostcode *hc;
    if (loom_hostcode_open(&f, "x.loom", 1, &hc, msg)) fail_msg("%s", msg);
    assert_false(loom_hostcode_loaded(hc));
    assert_null(loom_hostcode_entry(hc, 0));
    assert_non_null(strstr(loom_hostcode_describe(hc), "does not run on this machine"));
    loom_hostcode_close(hc);
    struct loaded l;
    load_bytes(q, m, &l); /* the portable ops take over */
    unload(&l);
    loom_file_free(&f);
    free(q);
  }
  free(p);
}

/* A NATIVE-only graph for another machine has nothing to fall back to. */
static void test_cross_graph_refused(void **state) {
  struct ir_graph *g = parse_graph("loom.ir 1\ninput %x : f32[1,4]\n%y = Relu(%x)\noutput %y\n");
  size_t n;
  uint8_t *p = graph_loom(g, "aarch64-linux-gnu", &n);
  loom_device *dev;
  loom_model *m;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open("fsim", NULL, &dev, msg), LOOM_OK);
  assert_int_equal(loom_model_load_memory(dev, p, n, "cpu.loom", &m, msg), LOOM_E_UNSUPPORTED);
  assert_non_null(strstr(msg, "cpu.loom: step 0 exists only as native code"));
  assert_non_null(strstr(msg, "aarch64-unknown-linux-gnu"));
  loom_device_close(dev);
  free(p);
  ir_graph_free(g);
}

/* ---- load failures of code for this machine: errors, not fallbacks ---- */

static void expect_load_error(const uint8_t *p, size_t n, loom_status want, const char *needle) {
  loom_device *dev;
  loom_model *m = NULL;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("fsim", "trust_native=1", &dev, msg), LOOM_OK);
  loom_status st = loom_model_load_memory(dev, p, n, "bad.loom", &m, msg);
  if (st == LOOM_OK) loom_model_free(m);
  if (st != want || !strstr(msg, needle))
    fail_msg("load gave %s '%s', expected %s with '%s'", loom_status_name(st), msg, loom_status_name(want), needle);
  loom_device_close(dev);
}

/* Offset in the file of the dynamic entry with tag `tag` (64-bit image). */
static size_t dyn_entry(const struct loom_file *f, int64_t tag) {
  const uint8_t *img = f->hostcode_image;
  Elf64_Ehdr eh;
  memcpy(&eh, img, sizeof eh);
  for (int i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, img + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    for (size_t at = ph.p_offset; at < ph.p_offset + ph.p_filesz; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      memcpy(&d, img + at, sizeof d);
      if (d.d_tag == tag) return (size_t)(img + at - (const uint8_t *)f->storage);
    }
  }
  fail_msg("no dynamic tag %lld", (long long)tag);
  return 0;
}

static void test_load_failures(void **state) {
  struct opcase c[8];
  size_t n, m;
  uint8_t *p = small_cases_file(c, 8, &n), *q = generate(p, n, NULL, &m, NULL), *bad = malloc(m);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(q, m, "x.loom", &f, msg)) fail_msg("%s", msg);
  const uint8_t *base = f.storage;
  /* a tensor the code was not specialized for */
  memcpy(bad, q, m);
  size_t zp = (size_t)((const uint8_t *)&f.tensors[1].zero_point - base);
  bad[zp] ^= 1;
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "was built for other tensors or parameters");
  /* an entry point the image lacks */
  memcpy(bad, q, m);
  size_t sym = (size_t)((const uint8_t *)loom_file_string(&f, f.hostcode_entries[0].symbol) - base);
  bad[sym + 5] = 'X';
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "the image has no symbol 'loom_Xtep_0'");
  /* an image that would run code at load time, or pull in a library */
  memcpy(bad, q, m);
  int64_t init = DT_INIT;
  memcpy(bad + dyn_entry(&f, DT_HASH), &init, 8);
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "has an initializer");
  memcpy(bad, q, m);
  int64_t needed = DT_NEEDED;
  memcpy(bad + dyn_entry(&f, DT_SONAME), &needed, 8);
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "depends on another shared library");
  /* not a shared object */
  memcpy(bad, q, m);
  bad[(size_t)(f.hostcode_image - base) + offsetof(Elf64_Ehdr, e_type)] = ET_EXEC;
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "is not a shared object");
  loom_file_free(&f);
  free(p), free(q), free(bad);
}

/* ---- accelerator models with native host steps, and --target cpu
 * against the accelerator ---- */

static int model_exists(const char *file) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", models_dir(), file);
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* digits_mlp + Softmax, compiled for the accelerator: DEQUANTIZE and
 * SOFTMAX run on the host; native and portable runs agree. */
static void test_accel_model_host_steps(void **state) {
  if (!model_exists("digits_mlp.onnx")) {
    print_message("skipped: no %s/digits_mlp.onnx\n", models_dir());
    skip();
  }
  struct ir_graph *g = import_model("digits_mlp.onnx");
  int y = g->outputs[0], sm = ir_build(g, IR_OP_SOFTMAX, 1, &y);
  ir_attr_set_int(g, g->n_nodes - 1, "axis", 1);
  g->outputs[0] = sm;
  char calib[512];
  snprintf(calib, sizeof calib, "%s/calib_digits_mlp", models_dir());
  struct compile_options o = {.calib = calib};
  struct compile_result r;
  struct ir_error err = {{0}};
  if (compile_graph(g, &o, &r, &err)) fail_msg("compile: %s", err.msg);
  size_t m;
  struct hostgen_summary sum;
  uint8_t *q = generate(r.bytes, r.size, NULL, &m, &sum);
  print_message("digits_mlp+softmax: %u host steps native, %u portable, %llu-byte image\n", sum.native_steps,
                sum.portable_steps, (unsigned long long)sum.image_bytes);
  assert_true(sum.native_steps >= 1);
  int64_t count;
  float *x = read_npy("digits_test_x_flat.npy", &count), out_n[10], out_p[10];
  struct loaded ln, lp;
  load_bytes(q, m, &ln);
  load_bytes(r.bytes, r.size, &lp);
  const struct loom_tensor_info *in = loom_model_input(ln.m, 0);
  for (int64_t s = 0; s < count / 64 && s < 100; s++) {
    float *outs[2];
    struct loaded *both[2] = {&ln, &lp};
    for (int k = 0; k < 2; k++) {
      assert_int_equal(loom_model_set_input(both[k]->m, in->name, LOOM_DT_F32, in->rank, in->dims, x + 64 * s), LOOM_OK);
      assert_int_equal(loom_model_run(both[k]->m, 0), LOOM_OK);
      outs[k] = k ? out_p : out_n;
      assert_int_equal(loom_model_get_output(both[k]->m, loom_model_output(both[k]->m, 0)->name, outs[k], 40), LOOM_OK);
    }
    for (int j = 0; j < 10; j++)
      if (fabsf(out_n[j] - out_p[j]) > 2e-7f + 4e-7f * fabsf(out_p[j]))
        fail_msg("sample %lld class %d: native %.9g, portable %.9g", (long long)s, j, out_n[j], out_p[j]);
  }
  unload(&ln), unload(&lp);
  free(x), free(q);
  compile_result_free(&r);
}

static int argmax(const float *v, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

/* digits_cnn: float on the CPU (--target cpu) against int8 on the
 * accelerator (fsim): the same class on at least 98% of the test set, and
 * logits within 2% of their range on average (measured: 100%, 0.3%). */
static void test_cpu_vs_accel(void **state) {
  if (!model_exists("digits_cnn.onnx")) {
    print_message("skipped: no %s/digits_cnn.onnx\n", models_dir());
    skip();
  }
  char onnx[512], calib[512];
  snprintf(onnx, sizeof onnx, "%s/digits_cnn.onnx", models_dir());
  snprintf(calib, sizeof calib, "%s/calib_digits_cnn", models_dir());
  struct compile_options o = {.calib = calib};
  struct compile_result r;
  struct ir_error err = {{0}};
  struct hostgen_options ho = {0};
  size_t n;
  uint8_t *cpu;
  if (hostgen_compile_onnx(onnx, &ho, NULL, &cpu, &n, NULL, &err)) fail_msg("--target cpu: %s", err.msg);
  if (compile_onnx(onnx, &o, &r, &err)) fail_msg("compile: %s", err.msg);
  struct loaded lc, la;
  load_bytes(cpu, n, &lc);
  load_bytes(r.bytes, r.size, &la);
  int64_t count;
  float *x = read_npy("digits_test_x.npy", &count);
  int samples = (int)(count / 64), agree = 0;
  double diff = 0, range = 0;
  for (int s = 0; s < samples; s++) {
    float yc[10], ya[10];
    struct loaded *both[2] = {&lc, &la};
    for (int k = 0; k < 2; k++) {
      const struct loom_tensor_info *in = loom_model_input(both[k]->m, 0);
      assert_int_equal(loom_model_set_input(both[k]->m, in->name, LOOM_DT_F32, in->rank, in->dims, x + 64 * s), LOOM_OK);
      if (loom_model_run(both[k]->m, 0)) fail_msg("%s", loom_device_error(both[k]->dev));
      assert_int_equal(loom_model_get_output(both[k]->m, loom_model_output(both[k]->m, 0)->name, k ? ya : yc, 40), LOOM_OK);
    }
    agree += argmax(yc, 10) == argmax(ya, 10);
    float lo = yc[0], hi = yc[0];
    for (int j = 0; j < 10; j++) {
      diff += fabsf(yc[j] - ya[j]) / 10;
      lo = fminf(lo, yc[j]), hi = fmaxf(hi, yc[j]);
    }
    range += hi - lo;
  }
  print_message("digits_cnn, %d samples: same class %d (%.1f%%), mean |float - int8| %.4f, mean logit range %.3f\n",
                samples, agree, 100.0 * agree / samples, diff / samples, range / samples);
  assert_true(agree >= samples * 98 / 100);
  assert_true(diff / samples <= 0.02 * range / samples);
  unload(&lc), unload(&la);
  free(x), free(cpu);
  compile_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ops_random),
      cmocka_unit_test(test_graph_ops),
      cmocka_unit_test(test_graph_models),
      cmocka_unit_test(test_cross_images),
      cmocka_unit_test(test_cross_graph_refused),
      cmocka_unit_test(test_load_failures),
      cmocka_unit_test(test_accel_model_host_steps),
      cmocka_unit_test(test_cpu_vs_accel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
