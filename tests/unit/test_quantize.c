/*
 * test_quantize.c - post-training quantization and fusion, on IR text:
 * the quantization arithmetic (parameters, fixed-point multipliers), the
 * fused ops' integer semantics in the reference interpreter (REQUANT
 * rounding, clamps, wrap-around), calibration from .npy files, the QDQ
 * form pass_quantize builds, and the patterns pass_fuse folds (QDQ conv /
 * gemm / add / pools / views, QLinearConv, QLinearMatMul, uint8 data,
 * per-channel activations), each checked against the unfused graph.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver/core/npy.h"
#include "sw_compiler/compiler.h"

static struct ir_graph *parse_ok(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse failed: %s", err.msg);
  if (ir_verify(g, &err)) fail_msg("verify failed: %s", err.msg);
  return g;
}

/* Runs a one-input, one-output graph; returns the malloc'd output. */
static void *run1(const struct ir_graph *g, const void *x) {
  struct ir_error err = {{0}};
  const void *in[1] = {x};
  void *out[1] = {NULL};
  if (ir_eval_ref(g, in, out, &err)) fail_msg("eval failed: %s", err.msg);
  return out[0];
}

static int count_op(const struct ir_graph *g, enum ir_op_kind op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += !g->nodes[i].dead && g->nodes[i].op == op;
  return n;
}

static void fuse_ok_flags(struct ir_graph *g, unsigned flags);
static void fuse_ok(struct ir_graph *g) { fuse_ok_flags(g, 0); }

static const struct ir_node *find_op(const struct ir_graph *g, enum ir_op_kind op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == op) return &g->nodes[i];
  fail_msg("no %s node", ir_op_name(op));
  return NULL;
}

static void fuse_ok_flags(struct ir_graph *g, unsigned flags) {
  struct ir_error err = {{0}};
  if (ir_run_default_passes(g, &err) || ir_pass_fuse(g, flags, &err)) fail_msg("fuse failed: %s", err.msg);
}

/* ---- arithmetic ---- */

static void test_choose_params(void **state) {
  float s;
  int32_t z;
  quant_choose_params(0.0f, 2.55f, &s, &z); /* a ReLU output: zero is code -128 */
  assert_float_equal(s, 0.01f, 1e-7);
  assert_int_equal(z, -128);
  quant_choose_params(-1.0f, 1.0f, &s, &z);
  assert_float_equal(s, 2.0f / 255, 1e-7);
  assert_true(z == 0 || z == -1); /* -128 + 127.5 in float32: either neighbour */
  quant_choose_params(0.5f, 1.0f, &s, &z); /* widened to include 0 */
  assert_float_equal(s, 1.0f / 255, 1e-7);
  assert_int_equal(z, -128);
  quant_choose_params(0.0f, 0.0f, &s, &z); /* a dead ReLU */
  assert_float_equal(s, 1.0f, 0);
  assert_int_equal(z, 0);
  assert_int_equal(quant_value(1000.0, 0.01f, -128), 127);
  assert_int_equal(quant_value(0.015, 0.01f, 0), 2);
}

static void test_multipliers(void **state) {
  int32_t m[3];
  uint32_t s;
  double one[1] = {0.5};
  assert_int_equal(quant_multipliers(one, 1, m, &s), 0);
  assert_int_equal(m[0], 1 << 30);
  assert_int_equal(s, 31);
  /* one shift for all: the largest gets m in [2^30, 2^31) */
  double three[3] = {0.003, 0.0007, 0.0};
  assert_int_equal(quant_multipliers(three, 3, m, &s), 0);
  assert_true(m[0] >= (1 << 30) && m[0] <= INT32_MAX);
  assert_true(fabs(ldexp(m[1], -(int)s) - 0.0007) < 1e-12);
  assert_int_equal(m[2], 0);
  /* 2^31 - 0.1: rounds up to 2^31 and is kept below it */
  double big[1] = {1.0 - 1e-12};
  assert_int_equal(quant_multipliers(big, 1, m, &s), 0);
  assert_int_equal(m[0], INT32_MAX);
  double bad[1] = {-1.0};
  assert_int_equal(quant_multipliers(bad, 1, m, &s), -1);
  double huge[1] = {4e9};
  assert_int_equal(quant_multipliers(huge, 1, m, &s), -1);
  double tiny[1] = {1e-15}; /* shift capped at 63, fewer bits */
  assert_int_equal(quant_multipliers(tiny, 1, m, &s), 0);
  assert_int_equal(s, 63);
  assert_true(m[0] > 0 && m[0] < (1 << 30));
}

/* ---- the fused ops' integer semantics ---- */

/* A 1x1 QConv of weight 1, multiplier 1, shift 1: y = requant(x / 2). */
static void qconv_case(int zp, int lo, int even, const int8_t *want) {
  char text[1024];
  snprintf(text, sizeof text,
           "loom.ir 1\n"
           "input %%x : i8[1,1,1,6]\n"
           "const %%w : i8[1,1,1,1] = [1]\n"
           "const %%b : i32[1] = [0]\n"
           "const %%m : i32[1] = [1]\n"
           "%%y : i8[1,1,1,6] = loom.QConv(%%x, %%w, %%b, %%m) {kernel_shape=[1,1], in_zp=0, out_zp=%d, "
           "lo=%d, hi=127, shift=1, round_even=%d}\n"
           "output %%y\n",
           zp, lo, even);
  struct ir_graph *g = parse_ok(text);
  int8_t x[6] = {1, 3, 5, -1, -3, 127};
  int8_t *y = run1(g, x);
  assert_memory_equal(y, want, 6);
  free(y);
  ir_graph_free(g);
}

static void test_requant_rounding(void **state) {
  /* x * 1 >> 1: halves; ties up (half up: 0.5 -> 1, -0.5 -> 0, -1.5 -> -1) */
  int8_t up[6] = {1, 2, 3, 0, -1, 64};
  qconv_case(0, -128, 0, up);
  /* ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2 */
  int8_t even[6] = {0, 2, 2, 0, -2, 64};
  qconv_case(0, -128, 1, even);
  /* zero point and clamp (a ReLU at code 10) */
  int8_t relu[6] = {11, 12, 13, 10, 10, 74};
  qconv_case(10, 10, 0, relu);
}

static void test_fused_ops_eval(void **state) {
  /* QGemm with an input zero point; QAdd with weights; QPool max and avg */
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : i8[1,3]\n"
      "const %w : i8[2,3] = [1, 2, 3, -1, -1, -1]\n"
      "const %b : i32[2] = [10, -10]\n"
      "const %m : i32[2] = [1073741824, 1073741824]\n"
      "%y : i8[1,2] = loom.QGemm(%x, %w, %b, %m) {in_zp=1, out_zp=0, lo=-128, hi=127, shift=31, round_even=0}\n"
      "output %y\n");
  int8_t x[3] = {2, 3, 4}, *y = run1(g, x);
  /* acc0 = 10 + 1 + 4 + 9 = 24 -> 12; acc1 = -10 - 6 = -16 -> -8 */
  assert_int_equal(y[0], 12);
  assert_int_equal(y[1], -8);
  free(y);
  ir_graph_free(g);

  g = parse_ok(
      "loom.ir 1\n"
      "input %a : i8[1,1,2,2]\n"
      "%y : i8[1,1,1,1] = loom.QPool(%a) {avg=1, kernel_shape=[2,2], strides=[2,2], pads=[0,0,0,0], multiplier=1073741824, shift=32, in_zp=-2, out_zp=3, lo=-128, hi=127, round_even=0}\n"
      "output %y\n");
  int8_t a[4] = {0, 2, 4, 6};
  y = run1(g, a);
  assert_int_equal(y[0], (20 + 2) / 4 + 3); /* sum (x + 2) = 20, / 4 = 5, + 3 */
  free(y);
  ir_graph_free(g);
}

/* ---- calibration and quantization of a float graph ---- */

static const char *const float_convnet =
    "loom.ir 1\n"
    "input %x : f32[1,2,4,4]\n"
    "const %w : f32[4,2,3,3] = rand(3)\n"
    "const %b : f32[4] = [0.1, -0.2, 0.3, 0.0]\n"
    "const %w2 : f32[4,1,3,3] = rand(5)\n"
    "const %fw : f32[3,16] = rand(9)\n"
    "%c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}\n"
    "%r = Relu(%c)\n"
    "%d = Conv(%r, %w2) {kernel_shape=[3,3], pads=[1,1,1,1], group=4}\n"
    "%e = Clip(%d, %lo, %hi)\n"
    "%p = MaxPool(%e) {kernel_shape=[2,2], strides=[2,2]}\n"
    "%s = Add(%p, %p)\n"
    "%f = Flatten(%s)\n"
    "%y = Gemm(%f, %fw) {transB=1}\n"
    "output %y\n";

/* float_convnet with the Clip bounds as constants. */
static struct ir_graph *convnet(void) {
  char text[2048];
  const char *at = strstr(float_convnet, "%d = Conv");
  snprintf(text, sizeof text, "%.*sconst %%lo : f32[] = [0.0]\nconst %%hi : f32[] = [6.0]\n%s",
           (int)(at - float_convnet), float_convnet, at);
  return parse_ok(text);
}

/* Writes n random samples of 32 floats to a .npy batch in a temp dir. */
static char *write_calib(int n, char *dir) {
  char msg[LOOM_MSG_MAX];
  strcpy(dir, "/tmp/loom_calib_XXXXXX");
  assert_non_null(mkdtemp(dir));
  float *x = malloc((size_t)n * 32 * sizeof *x);
  srand(11);
  for (int i = 0; i < n * 32; i++) x[i] = (float)rand() / RAND_MAX * 2.0f - 0.5f;
  int64_t dims[4] = {n, 2, 4, 4};
  char *path = malloc(strlen(dir) + 16);
  sprintf(path, "%s/000.npy", dir);
  assert_int_equal(loom_npy_write(path, LOOM_DT_F32, 4, dims, x, msg), LOOM_OK);
  free(x);
  return path;
}

static void remove_calib(char *path, const char *dir) {
  unlink(path);
  rmdir(dir);
  free(path);
}

static void test_calibrate_and_quantize(void **state) {
  struct ir_graph *g = convnet(), *ref = convnet();
  struct ir_error err = {{0}};
  char dir[64];
  char *path = write_calib(6, dir);
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  assert_int_equal(ir_run_default_passes(ref, &err), 0);
  assert_int_equal(ir_pass_fuse_matmul_bias(g, &err), 0);
  int n = g->n_tensors, samples;
  struct calib_range *r = calloc((size_t)n, sizeof *r);
  if (calib_collect(g, dir, r, &samples, NULL, &err)) fail_msg("%s", err.msg);
  assert_int_equal(samples, 6); /* one batch of 6 split into samples */
  int c = ir_tensor_find(g, "c"), rl = ir_tensor_find(g, "r");
  assert_true(r[c].seen && r[c].lo < 0 && r[c].hi > 0);
  assert_true(r[rl].lo == 0.0f && r[rl].channels == 4);
  if (ir_pass_quantize(g, r, n, 0, &err)) fail_msg("%s", err.msg);
  calib_ranges_free(r, n);
  free(r);
  /* QDQ form: weights int8 per channel, biases int32, activations per tensor */
  assert_true(count_op(g, IR_OP_QUANTIZELINEAR) >= 5);
  if (ir_pass_fuse(g, 0, &err)) fail_msg("%s", err.msg);
  assert_int_equal(count_op(g, IR_OP_QCONV), 2);
  assert_int_equal(count_op(g, IR_OP_QPOOL), 1);
  assert_int_equal(count_op(g, IR_OP_QADD), 1);
  assert_int_equal(count_op(g, IR_OP_QGEMM), 1);
  assert_int_equal(count_op(g, IR_OP_CONV) + count_op(g, IR_OP_RELU) + count_op(g, IR_OP_CLIP), 0);
  /* the ReLU became the clamp: lo is the output zero point */
  const struct ir_node *q1 = find_op(g, IR_OP_QCONV);
  assert_int_equal(ir_attr_int(q1, "lo", 0), ir_attr_int(q1, "out_zp", 1));
  /* the depthwise conv's input has per-channel scales, folded into its weights */
  assert_int_equal(g->tensors[q1->out[0]].quant.n, 4);
  /* int8 model close to the float model on a calibration-like input */
  float x[32];
  for (int i = 0; i < 32; i++) x[i] = (float)((i * 7) % 13) / 12.0f;
  float *yq = run1(g, x), *yf = run1(ref, x);
  for (int i = 0; i < 3; i++) assert_float_equal(yq[i], yf[i], 0.05 * (fabsf(yf[i]) + 1));
  free(yq);
  free(yf);
  remove_calib(path, dir);
  ir_graph_free(g);
  ir_graph_free(ref);
}

static void test_calib_errors(void **state) {
  struct ir_graph *g = convnet();
  struct ir_error err = {{0}};
  struct calib_range r[64];
  int samples;
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  assert_int_equal(calib_collect(g, "/nonexistent/calib", r, &samples, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "/nonexistent/calib: cannot read the calibration data"));
  char dir[] = "/tmp/loom_empty_XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_int_equal(calib_collect(g, dir, r, &samples, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "no .npy files"));
  rmdir(dir);
  ir_graph_free(g);
}

/* ---- fusion of given QDQ and QLinear models ---- */

/* Fuses `text` and compares its evaluation with the unfused graph's. */
static void fused_matches(const char *text, const void *x, size_t out_bytes, int max_diff) {
  struct ir_graph *g = parse_ok(text), *ref = parse_ok(text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(ref, &err), 0);
  fuse_ok(g);
  uint8_t *a = run1(g, x), *b = run1(ref, x);
  const struct ir_tensor *t = &g->tensors[g->outputs[0]];
  for (size_t i = 0; i < out_bytes; i++) {
    int d = t->dtype == IR_DT_U8 ? (int)a[i] - (int)b[i] : (int)(int8_t)a[i] - (int)(int8_t)b[i];
    if (abs(d) > max_diff) fail_msg("byte %zu: fused %d, reference %d", i, a[i], b[i]);
  }
  free(a);
  free(b);
  ir_graph_free(g);
  ir_graph_free(ref);
}

/* --calib-range percentile=P: the (100-P)th and Pth percentiles of the
 * subsample, linear between neighbours, never wider than the observed range;
 * P outside (50, 100] is an error. */
static void test_calib_percentile(void **state) {
  (void)state;
  enum { N = 1001 };
  struct calib_range r[3];
  memset(r, 0, sizeof r);
  float v[N];
  for (int i = 0; i < N; i++) v[i] = (float)((i * 7919) % N) - 500.0f; /* -500..500, shuffled */
  v[3] = 9000.0f;                                                    /* one outlier replaces a value */
  r[0] = (struct calib_range){.lo = -500.0f, .hi = 9000.0f, .seen = 1, .sample = v, .n_sample = N};
  r[1] = (struct calib_range){.lo = 1.0f, .hi = 2.0f, .seen = 0};  /* never computed: unchanged */
  float w[2] = {0.25f, 0.75f};                                      /* narrower than the percentiles? no: clamped */
  r[2] = (struct calib_range){.lo = 0.0f, .hi = 0.5f, .seen = 1, .sample = w, .n_sample = 2};
  struct ir_error err = {{0}};
  assert_int_equal(calib_choose_percentile(r, 3, 99.0, &err), 0);
  /* Sorted: -500..500 without the replaced value, then 9000.  The 99th
   * percentile sits at index 990 of 1001, the 1st at index 10. */
  float sorted[N];
  memcpy(sorted, v, sizeof v);
  for (int i = 1; i < N; i++)
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      float t = sorted[j];
      sorted[j] = sorted[j - 1], sorted[j - 1] = t;
    }
  assert_float_equal(r[0].clip_hi, sorted[990], 1e-3);
  assert_float_equal(r[0].clip_lo, sorted[10], 1e-3);
  assert_true(r[0].clip_hi < 500.0f && r[0].clip_lo > -500.0f);
  assert_true(r[1].clip_lo == 1.0f && r[1].clip_hi == 2.0f);
  assert_float_equal(r[2].clip_lo, 0.255f, 1e-6); /* 1% of the way from 0.25 to 0.75 */
  assert_float_equal(r[2].clip_hi, 0.5f, 0.0);    /* the 99th (0.745) is clamped to the observed hi */
  /* P = 100 keeps the observed range. */
  assert_int_equal(calib_choose_percentile(r, 1, 100.0, &err), 0);
  assert_true(r[0].clip_lo == -500.0f && r[0].clip_hi == 9000.0f);
  assert_int_equal(calib_choose_percentile(r, 1, 50.0, &err), -1);
  assert_non_null(strstr(err.msg, "percentile 50"));
  assert_int_equal(calib_choose_percentile(r, 1, 100.5, &err), -1);
}

static void test_fuse_qlinear(void **state) {
  const char *text =
      "loom.ir 1\n"
      "input %x : u8[1,2,3,3]\n"
      "const %xs : f32[] = [0.05]\n"
      "const %xz : u8[] = [128]\n"
      "const %w : i8[2,2,3,3] = rand(4)\n"
      "const %ws : f32[2] = [0.01, 0.02]\n"
      "const %wz : i8[2] = [0, 0]\n"
      "const %ys : f32[] = [0.01]\n"
      "const %yz : u8[] = [120]\n"
      "const %b : i32[2] = [100, -50]\n"
      "%y = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}\n"
      "output %y\n";
  struct ir_graph *g = parse_ok(text);
  fuse_ok(g);
  /* uint8 in and out: converted around an int8 QConv with zero points - 128 */
  const struct ir_node *n = find_op(g, IR_OP_QCONV);
  assert_int_equal(ir_attr_int(n, "in_zp", 0), 0);
  assert_int_equal(ir_attr_int(n, "out_zp", 0), -8);
  assert_int_equal(ir_attr_int(n, "round_even", 0), 1);
  ir_graph_free(g);
  uint8_t x[18];
  for (int i = 0; i < 18; i++) x[i] = (uint8_t)(i * 29 + 7);
  fused_matches(text, x, 18, 0);
}

static void test_fuse_qdq_patterns(void **state) {
  /* DQ -> Conv -> Relu -> Q, a residual Add, GAP, Flatten, MatMul + Add bias */
  const char *text =
      "loom.ir 1\n"
      "input %x : i8[1,2,4,4]\n"
      "const %s : f32[] = [0.1]\n"
      "const %z : i8[] = [-3]\n"
      "const %s2 : f32[] = [0.05]\n"
      "const %z2 : i8[] = [-128]\n"
      "const %wq : i8[2,2,1,1] = [10, -20, 30, 40]\n"
      "const %ws : f32[2] = [0.01, 0.02]\n"
      "const %wz : i8[2] = [0, 0]\n"
      "const %mq : i8[2,3] = [1, 2, 3, 4, 5, 6]\n"
      "const %ms : f32[] = [0.1]\n"
      "const %mz : i8[] = [0]\n"
      "const %mb : f32[3] = [0.5, 0.0, -0.5]\n"
      "%xf = DequantizeLinear(%x, %s, %z)\n"
      "%wf = DequantizeLinear(%wq, %ws, %wz) {axis=0}\n"
      "%c = Conv(%xf, %wf) {kernel_shape=[1,1]}\n"
      "%r = Relu(%c)\n"
      "%rq = QuantizeLinear(%r, %s2, %z2)\n"
      "%rf = DequantizeLinear(%rq, %s2, %z2)\n"
      "%a = Add(%rf, %xf)\n"
      "%aq = QuantizeLinear(%a, %s, %z)\n"
      "%af = DequantizeLinear(%aq, %s, %z)\n"
      "%g = GlobalAveragePool(%af)\n"
      "%gq = QuantizeLinear(%g, %s2, %z2)\n"
      "%gf = DequantizeLinear(%gq, %s2, %z2)\n"
      "%fl = Flatten(%gf)\n"
      "%mf = DequantizeLinear(%mq, %ms, %mz)\n"
      "%mm = MatMul(%fl, %mf)\n"
      "%mmb = Add(%mm, %mb)\n"
      "%yq = QuantizeLinear(%mmb, %s, %z)\n"
      "%y = DequantizeLinear(%yq, %s, %z)\n"
      "output %y\n";
  struct ir_graph *g = parse_ok(text);
  fuse_ok_flags(g, FUSE_NO_RESIDUAL);
  assert_int_equal(count_op(g, IR_OP_QCONV), 1);
  assert_int_equal(count_op(g, IR_OP_QADD), 1);
  ir_graph_free(g);
  g = parse_ok(text);
  fuse_ok(g); /* the Add joins the convolution as its residual */
  assert_int_equal(count_op(g, IR_OP_QADD), 0);
  assert_int_equal(find_op(g, IR_OP_QCONV)->n_in, 5);
  assert_int_equal(count_op(g, IR_OP_QPOOL), 1);
  assert_int_equal(count_op(g, IR_OP_QGEMM), 1);
  assert_int_equal(count_op(g, IR_OP_FLATTEN), 1); /* on the integers now */
  assert_int_equal(g->tensors[find_op(g, IR_OP_FLATTEN)->out[0]].dtype, IR_DT_I8);
  assert_int_equal(count_op(g, IR_OP_QUANTIZELINEAR), 0);
  assert_int_equal(count_op(g, IR_OP_DEQUANTIZELINEAR), 1); /* the model output */
  ir_graph_free(g);
  int8_t x[32];
  for (int i = 0; i < 32; i++) x[i] = (int8_t)(i * 11 - 100);
  /* the output is float: compare the codes through a tolerance of one step */
  struct ir_graph *f = parse_ok(text), *ref = parse_ok(text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(ref, &err), 0);
  fuse_ok(f);
  float *a = run1(f, x), *b = run1(ref, x);
  for (int i = 0; i < 3; i++) assert_float_equal(a[i], b[i], 0.1001); /* one code of %s */
  free(a);
  free(b);
  ir_graph_free(f);
  ir_graph_free(ref);
}

/* Fused graph and the unfused one on the reference: the same bytes. */
static void same_as_unfused(const char *text, const void *x, size_t out_bytes) {
  struct ir_graph *f = parse_ok(text), *ref = parse_ok(text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(ref, &err), 0);
  fuse_ok(f);
  void *a = run1(f, x), *b = run1(ref, x);
  assert_memory_equal(a, b, out_bytes);
  free(a);
  free(b);
  ir_graph_free(f);
  ir_graph_free(ref);
}

static void test_fuse_wide_and_integer(void **state) {
  /* uint8 weights whose zero point leaves values outside int8: i32 weights */
  static const char qconv[] =
      "loom.ir 1\n"
      "input %x : u8[1,1,1,4]\n"
      "const %xs : f32[] = [0.5]\n"
      "const %xz : u8[] = [3]\n"
      "const %w : u8[2,1,1,1] = [255, 0]\n"
      "const %ws : f32[] = [1.0]\n"
      "const %wz : u8[] = [0]\n"
      "const %ys : f32[] = [200.0]\n"
      "const %yz : u8[] = [17]\n"
      "%y = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz)\n"
      "output %y\n";
  struct ir_graph *g = parse_ok(qconv);
  fuse_ok(g);
  assert_int_equal(g->tensors[find_op(g, IR_OP_QCONV)->in[1]].dtype, IR_DT_I32);
  ir_graph_free(g);
  uint8_t xu[4] = {0, 3, 200, 255};
  same_as_unfused(qconv, xu, 8);
  /* ConvInteger, int8, per-channel weight zero points, two groups */
  static const char cint[] =
      "loom.ir 1\n"
      "input %x : i8[1,2,2,2]\n"
      "const %w : i8[2,1,1,2] = [127, -128, -100, 5]\n"
      "const %xz : i8[] = [-7]\n"
      "const %wz : i8[2] = [-128, 127]\n"
      "%y = ConvInteger(%x, %w, %xz, %wz) {kernel_shape=[1,2], group=2}\n"
      "output %y\n";
  g = parse_ok(cint);
  fuse_ok(g);
  assert_int_equal(g->tensors[find_op(g, IR_OP_QCONV)->out[0]].dtype, IR_DT_I32);
  ir_graph_free(g);
  int8_t xi[8] = {-128, 127, 0, 1, -5, 99, -100, 64};
  same_as_unfused(cint, xi, 4 * 2 * 2);
  /* a batched MatMulInteger by a 2-D matrix: one 2-D job per batch */
  static const char mmi[] =
      "loom.ir 1\n"
      "input %a : u8[2,1,3]\n"
      "const %b : u8[3,2] = [0, 255, 7, 128, 200, 1]\n"
      "const %az : u8[] = [250]\n"
      "%y = MatMulInteger(%a, %b, %az)\n"
      "output %y\n";
  g = parse_ok(mmi);
  fuse_ok(g);
  assert_int_equal(count_op(g, IR_OP_QGEMM), 2);
  ir_graph_free(g);
  same_as_unfused(mmi, (uint8_t[6]){1, 2, 255, 0, 250, 9}, 4 * 4);
  /* what stays refused: a 4-D batch */
  g = parse_ok("loom.ir 1\n"
               "input %a : u8[1,2,1,3]\n"
               "const %b : u8[3,2] = [0, 255, 7, 128, 200, 1]\n"
               "%y = MatMulInteger(%a, %b)\n"
               "output %y\n");
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  assert_int_equal(ir_pass_fuse(g, 0, &err), -1);
  assert_non_null(strstr(err.msg, "t.ir: node 0 '%y' (MatMulInteger): only 2-D operands, or a 3-D batch"));
  ir_graph_free(g);
}

/* uint8 QLinearConv with wide weights: the fused fixed-point requantization
 * (exact: acc * m / 2^shift with m / 2^shift = the float32 factor) against
 * ONNX's float32 rescale (the unfused op on the reference) on random models
 * and data.  They differ only where the float32 product acc * M rounds onto
 * or across a .5 tie (relative error 2^-24), by one code: of these 14,400
 * outputs exactly one (seed 33, output 241: acc * M = 103.4999975 exactly,
 * 103.5 in float32, so ONNX gives 104 and the accelerator 103). */
static void test_qlinear_vs_float_rescale(void **state) {
  int differ = 0;
  for (int seed = 1; seed <= 50; seed++) {
    char text[1024];
    snprintf(text, sizeof text,
             "loom.ir 1\ninput %%x : u8[1,8,6,6]\nconst %%xs : f32[] = [%.9g]\nconst %%xz : u8[] = [%d]\n"
             "const %%w : u8[8,8,3,3] = rand(%d)\nconst %%ws : f32[] = [%.9g]\nconst %%wz : u8[] = [%d]\n"
             "const %%ys : f32[] = [%.9g]\nconst %%yz : u8[] = [%d]\n"
             "%%y = QLinearConv(%%x, %%xs, %%xz, %%w, %%ws, %%wz, %%ys, %%yz) {kernel_shape=[3,3], pads=[1,1,1,1]}\n"
             "output %%y\n",
             0.001 + (seed % 37) * 0.0007, seed * 7 % 256, seed, 0.0005 + (seed % 11) * 0.0003, seed * 13 % 256,
             0.01 + (seed % 13) * 0.004, seed * 3 % 256);
    struct ir_graph *f = parse_ok(text), *ref = parse_ok(text);
    struct ir_error err = {{0}};
    assert_int_equal(ir_run_default_passes(ref, &err), 0);
    fuse_ok(f);
    uint8_t x[288];
    for (int i = 0; i < 288; i++) x[i] = (uint8_t)(i * 97 + seed * 31);
    uint8_t *a = run1(f, x), *b = run1(ref, x);
    for (int i = 0; i < 288; i++) {
      assert_true(abs(a[i] - b[i]) <= 1);
      differ += a[i] != b[i];
    }
    free(a);
    free(b);
    ir_graph_free(f);
    ir_graph_free(ref);
  }
  assert_int_equal(differ, 1);
}

static void test_graph_is_quantized(void **state) {
  struct ir_graph *g = convnet();
  assert_false(ir_graph_is_quantized(g));
  ir_graph_free(g);
  g = parse_ok("loom.ir 1\ninput %x : f32[2]\nconst %s : f32[] = [1.0]\n%q = QuantizeLinear(%x, %s)\noutput %q\n");
  assert_true(ir_graph_is_quantized(g));
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_choose_params),
      cmocka_unit_test(test_multipliers),
      cmocka_unit_test(test_requant_rounding),
      cmocka_unit_test(test_fused_ops_eval),
      cmocka_unit_test(test_calibrate_and_quantize),
      cmocka_unit_test(test_calib_errors),
      cmocka_unit_test(test_calib_percentile),
      cmocka_unit_test(test_fuse_qlinear),
      cmocka_unit_test(test_fuse_qdq_patterns),
      cmocka_unit_test(test_fuse_wide_and_integer),
      cmocka_unit_test(test_qlinear_vs_float_rescale),
      cmocka_unit_test(test_graph_is_quantized),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
