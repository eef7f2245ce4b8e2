/*
 * test_ir_passes.c - the tensor IR's passes and its reference interpreter:
 * shape inference, constant and batch-norm folding, dead code elimination
 * and ir_eval_ref (against hand-computed results and a direct-definition
 * convolution), all driven from IR text; and mutated text through all of
 * them.  The IR itself: test_ir.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "irtext.h"
#include "sw_compiler/compiler.h"

/* ---- shape inference ---- */

static char *type_str(const struct ir_graph *g, const char *name) {
  static char buf[256];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  int t = ir_tensor_find(g, name);
  assert_true(t >= 0);
  ir_print_type(f, &g->tensors[t]);
  fclose(f);
  return buf;
}

static struct ir_graph *infer_ok(const char *text) {
  struct ir_graph *g = parse_ok(text);
  struct ir_error err = {{0}};
  if (ir_verify(g, &err) || ir_pass_shape_infer(g, &err)) fail_msg("%s", err.msg);
  return g;
}

static void test_shape_infer_windows(void **state) {
  struct ir_graph *g = infer_ok(
      "loom.ir 1\n"
      "input %x : f32[1,4,9,9]\n"
      "const %w : f32[8,2,3,3] = zeros\n"
      "const %dw : f32[4,1,3,3] = zeros\n"
      "%a = Conv(%x, %w) {group=2, strides=[2,2], pads=[1,1,1,1]}\n"
      "%b = Conv(%x, %w) {group=2, dilations=[2,2]}\n"
      "%c = Conv(%x, %dw) {group=4, auto_pad=\"SAME_UPPER\", strides=[2,2]}\n"
      "%d = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}\n"
      "%e = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2]}\n"
      "%f = AveragePool(%x) {kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=1}\n"
      "%g = GlobalAveragePool(%x)\n"
      "%h = Flatten(%g)\n"
      "const %wf : f32[10,4] = zeros\n"
      "%i = Gemm(%h, %wf) {transB=1}\n");
  assert_string_equal(type_str(g, "a"), "f32[1,8,5,5]");
  assert_string_equal(type_str(g, "b"), "f32[1,8,5,5]");
  assert_string_equal(type_str(g, "c"), "f32[1,4,5,5]");
  assert_string_equal(type_str(g, "d"), "f32[1,4,5,5]");
  assert_string_equal(type_str(g, "e"), "f32[1,4,4,4]");
  assert_string_equal(type_str(g, "f"), "f32[1,4,9,9]");
  assert_string_equal(type_str(g, "h"), "f32[1,4]");
  assert_string_equal(type_str(g, "i"), "f32[1,10]");
  /* auto_pad became explicit pads and Conv got its kernel_shape */
  const struct ir_node *c = &g->nodes[2];
  assert_null(ir_attr_find(c, "auto_pad"));
  const struct ir_attr *pads = ir_attr_find(c, "pads");
  assert_non_null(pads);
  assert_int_equal(pads->ints[0], 1);
  assert_int_equal(pads->ints[2], 1);
  assert_non_null(ir_attr_find(c, "kernel_shape"));
  ir_graph_free(g);
}

static void test_shape_infer_tensors(void **state) {
  struct ir_graph *g = infer_ok(
      "loom.ir 1\n"
      "input %x : f32[2,3,4]\n"
      "input %m : f32[4,6]\n"
      "const %s : i64[3] = [0, -1, 2]\n"
      "const %ix : i64[2] = [2, 0]\n"
      "%a = Reshape(%x, %s)\n"
      "%b = Transpose(%x) {perm=[2,0,1]}\n"
      "%c = Concat(%x, %x) {axis=-1}\n"
      "%d = Gather(%x, %ix) {axis=1}\n"
      "%e = Unsqueeze(%x) {axes=[0,-1]}\n"
      "%f = Squeeze(%e)\n"
      "%g = MatMul(%x, %m)\n"
      "%i = Shape(%x) {start=1}\n"
      "%j = Softmax(%x) {axis=2, legacy_2d=1}\n"
      "%k = Softmax(%x) {axis=1, legacy_2d=1}\n"
      "%l : f32[2,3,4] = Relu(%x)\n"
      "const %zp : u8[] = [3]\n"
      "const %sc : f32[] = [0.5]\n"
      "%q = QuantizeLinear(%x, %sc, %zp)\n"
      "%dq = DequantizeLinear(%q, %sc, %zp)\n");
  assert_string_equal(type_str(g, "a"), "f32[2,6,2]");
  assert_string_equal(type_str(g, "b"), "f32[4,2,3]");
  assert_string_equal(type_str(g, "c"), "f32[2,3,8]");
  assert_string_equal(type_str(g, "d"), "f32[2,2,4]");
  assert_string_equal(type_str(g, "e"), "f32[1,2,3,4,1]");
  assert_string_equal(type_str(g, "f"), "f32[2,3,4]");
  assert_string_equal(type_str(g, "g"), "f32[2,3,6]");
  assert_string_equal(type_str(g, "i"), "i64[2]");
  assert_string_equal(type_str(g, "q"), "u8[2,3,4]");
  assert_string_equal(type_str(g, "dq"), "f32[2,3,4]");
  assert_null(ir_attr_find(&g->nodes[8], "legacy_2d"));    /* last axis: same either way */
  assert_non_null(ir_attr_find(&g->nodes[9], "legacy_2d")); /* not the last axis: kept */
  ir_graph_free(g);
}

static void assert_infer_error(const char *text, const char *msg) {
  struct ir_graph *g = parse_ok(text);
  struct ir_error err = {{0}};
  if (ir_pass_shape_infer(g, &err) != -1) fail_msg("no error for: %s", text);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
  ir_graph_free(g);
}

static void test_shape_infer_errors(void **state) {
  assert_infer_error("loom.ir 1\ninput %x : f32[2,3]\n%y : f32[2,4] = Relu(%x) \"r\"\n",
                     "t.ir: node 0 'r' (Relu): result %y is f32[2,3], but declared as f32[2,4]");
  assert_infer_error("loom.ir 1\ninput %x : f32[2,3]\ninput %z : f32[2,4]\n%y = Add(%x, %z)\n",
                     "shapes do not broadcast (dim 3 vs 4)");
  assert_infer_error("loom.ir 1\ninput %x : f32[1,3,4,4]\nconst %w : f32[2,2,1,1] = zeros\n%y = Conv(%x, %w)\n",
                     "3 input channels, weight %w with 2 per group, group 1 do not fit");
  assert_infer_error("loom.ir 1\ninput %x : f32[1,1,2,2]\nconst %w : f32[1,1,3,3] = zeros\n%y = Conv(%x, %w)\n",
                     "window 3 is larger than the padded input 2");
  assert_infer_error("loom.ir 1\ninput %x : f32[6]\nconst %s : i64[2] = [4, -1]\n%y = Reshape(%x, %s)\n",
                     "cannot infer the -1 entry");
  assert_infer_error("loom.ir 1\ninput %x : f32[6]\n%y = Concat(%x) {axis=1}\n", "axis 1 is out of range for rank 1");
  assert_infer_error("loom.ir 1\ninput %x : f32[1,1,4,4]\n%y = MaxPool(%x) {kernel_shape=[2]}\n",
                     "attribute 'kernel_shape' needs 2 values");
  assert_infer_error("loom.ir 1\ninput %x : f32[65536,65536]\n%y = Unsqueeze(%x) {axes=[0]}\n%z = Concat(%x, %x) {axis=0}\n"
                     "%w = Concat(%z, %z) {axis=1}\n%v = Concat(%w, %w) {axis=1}\n",
                     "would be too large");
}

/* ---- reference interpreter ---- */

static void test_eval_conv_pool(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[1,1,3,3]\n"
      "const %w : f32[2,1,2,2] = [1, 1, 1, 1, 1, 0, 0, -1]\n"
      "const %b : f32[2] = [0.5, 0.0]\n"
      "%y = Conv(%x, %w, %b) {pads=[0,0,1,1]}\n"
      "output %y\n");
  float x[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  float *y = eval_ok(g, x);
  float want[18] = {8.5, 12.5, 7.5, 20.5, 24.5, 13.5, 13.5, 15.5, 8.5,
                    -4, -4, 2, -4, -4, 5, 6, 7, 8};
  for (int i = 0; i < 18; i++) assert_float_equal(y[i], want[i], 1e-6);
  free(y);
  ir_graph_free(g);

  g = parse_ok("loom.ir 1\ninput %x : f32[1,1,3,3]\n"
               "%a = AveragePool(%x) {kernel_shape=[2,2], pads=[1,1,0,0]}\n"
               "%b = AveragePool(%x) {kernel_shape=[2,2], pads=[1,1,0,0], count_include_pad=1}\n"
               "%c = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}\n"
               "%d = Concat(%a, %b) {axis=1}\n"
               "output %d\noutput %c\n");
  struct ir_error err = {{0}};
  assert_int_equal(ir_pass_shape_infer(g, &err), 0);
  void *outs[2];
  const void *ins[1] = {x};
  assert_int_equal(ir_eval_ref(g, ins, outs, &err), 0);
  float wa[18] = {0, 0.5, 1.5, 1.5, 2, 3, 4.5, 5, 6, 0, 0.25, 0.75, 0.75, 2, 3, 2.25, 5, 6};
  for (int i = 0; i < 18; i++) assert_float_equal(((float *)outs[0])[i], wa[i], 1e-6);
  float wc[4] = {4, 5, 7, 8};
  for (int i = 0; i < 4; i++) assert_float_equal(((float *)outs[1])[i], wc[i], 1e-6);
  free(outs[0]);
  free(outs[1]);
  ir_graph_free(g);
}

static void test_eval_gemm_softmax(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[2,3]\n"
      "const %w : f32[2,3] = [1, 0, -1, 2, 2, 2]\n"
      "const %c : f32[2] = [1.0, -1.0]\n"
      "%y = Gemm(%x, %w, %c) {transB=1, alpha=2.0, beta=0.5}\n"
      "%s = Softmax(%y)\n"
      "output %s\n");
  float x[6] = {1, 2, 3, 0, 0, 1};
  float *s = eval_ok(g, x);
  /* y = [[2*(-2)+0.5, 2*12-0.5], [2*(-1)+0.5, 2*2-0.5]] */
  float y0[2] = {-3.5f, 23.5f}, y1[2] = {-1.5f, 3.5f};
  float e = expf(y1[0] - y1[1]);
  assert_float_equal(s[0], expf(y0[0] - y0[1]) / (1 + expf(y0[0] - y0[1])), 1e-6);
  assert_float_equal(s[2], e / (1 + e), 1e-6);
  assert_float_equal(s[2] + s[3], 1.0, 1e-6);
  free(s);
  ir_graph_free(g);
}

static void test_eval_quant(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[8]\n"
      "const %s : f32[] = [1.0]\n"
      "const %z : i8[] = [0]\n"
      "%q = QuantizeLinear(%x, %s, %z)\n"
      "output %q\n");
  float x[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, 2.4f};
  int8_t *q = eval_ok(g, x);
  int8_t want[8] = {0, 2, 2, 0, -2, 127, -128, 2};
  assert_memory_equal(q, want, 8);
  free(q);
  ir_graph_free(g);

  /* QLinearConv: 1x1 conv, per-channel weight scales, ties round to even */
  g = parse_ok(
      "loom.ir 1\n"
      "input %x : u8[1,1,1,2]\n"
      "const %xs : f32[] = [0.5]\n"
      "const %xz : u8[] = [10]\n"
      "const %w : i8[2,1,1,1] = [1, -3]\n"
      "const %ws : f32[2] = [1.0, 0.5]\n"
      "const %wz : i8[2] = [0, 0]\n"
      "const %ys : f32[] = [1.0]\n"
      "const %yz : u8[] = [100]\n"
      "const %b : i32[2] = [1, 0]\n"
      "%y = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b)\n"
      "output %y\n");
  uint8_t xq[2] = {13, 255};
  uint8_t *y = eval_ok(g, xq);
  /* ch0: (3*1+1)*0.5 = 2 -> 102; (245+1)*0.5 = 123 -> 223
   * ch1: 3*-3*0.25 = -2.25 -> 98; 245*-3*0.25 = -183.75 -> -184+100 -> 0 (saturated) */
  uint8_t wy[4] = {102, 223, 98, 0};
  assert_memory_equal(y, wy, 4);
  free(y);
  ir_graph_free(g);

  g = parse_ok(
      "loom.ir 1\n"
      "input %a : u8[2,2]\n"
      "const %b : i8[2,2] = [1, 2, 3, 4]\n"
      "const %az : u8[] = [1]\n"
      "const %bz : i8[2] = [0, 1]\n"
      "%y = MatMulInteger(%a, %b, %az, %bz)\n"
      "output %y\n");
  uint8_t a[4] = {1, 2, 3, 4};
  int32_t *mi = eval_ok(g, a);
  /* a-1 = [[0,1],[2,3]], b-bz = [[1,1],[3,3]] */
  int32_t wm[4] = {3, 3, 11, 11};
  assert_memory_equal(mi, wm, sizeof wm);
  free(mi);
  ir_graph_free(g);
}

/* ---- passes ---- */

static char *run_passes(struct ir_graph *g) {
  struct ir_error err = {{0}};
  if (ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  return ir_print_str(g, 0);
}

static void test_const_fold_shape_chain(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[2,3,4,4]\n"
      "const %zero : i64[] = [0]\n"
      "const %minus1 : i64[1] = [-1]\n"
      "%s = Shape(%x)\n"
      "%n = Gather(%s, %zero) {axis=0}\n"
      "%n1 = Unsqueeze(%n) {axes=[0]}\n"
      "%shape = Concat(%n1, %minus1) {axis=0}\n"
      "%y = Reshape(%x, %shape)\n"
      "%z = Identity(%y)\n"
      "%dead = Relu(%x)\n"
      "output %z\n");
  char *out = run_passes(g);
  assert_string_equal(out,
                      "loom.ir 1\n"
                      "input  %x : f32[2,3,4,4]\n"
                      "const  %shape : i64[2] = [2, -1]\n"
                      "%y : f32[2,48] = Reshape(%x, %shape)\n"
                      "%z : f32[2,48] = Identity(%y)\n"
                      "output %z\n");
  free(out);
  ir_graph_free(g);
}

static void test_const_fold_arith(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[2]\n"
      "const %a : f32[2] = [1.0, 2.0]\n"
      "const %b : f32[] = [3.0]\n"
      "%c = Mul(%a, %b)\n"
      "%d = Add(%c, %a)\n"
      "%e = Transpose(%d)\n"
      "%y = Add(%x, %e)\n"
      "output %y\n");
  char *out = run_passes(g);
  assert_string_equal(out,
                      "loom.ir 1\n"
                      "input  %x : f32[2]\n"
                      "const  %e : f32[2] = [4.0, 8.0]\n"
                      "%y : f32[2] = Add(%x, %e)\n"
                      "output %y\n");
  free(out);
  ir_graph_free(g);
}

static const char *const bn_text =
    "loom.ir 1\n"
    "input %x : f32[2,3,5,5]\n"
    "const %w : f32[4,3,3,3] = rand(1)\n"
    "const %cb : f32[4] = rand(2)\n"
    "const %gamma : f32[4] = [0.5, 1.5, -2.0, 1.0]\n"
    "const %beta : f32[4] = rand(3)\n"
    "const %mean : f32[4] = rand(4)\n"
    "const %var : f32[4] = [0.25, 1.0, 2.0, 0.01]\n"
    "const %w2 : f32[4,2,1,1] = rand(5)\n"
    "%c = Conv(%x, %w, %cb) {pads=[1,1,1,1]}\n"
    "%bn = BatchNormalization(%c, %gamma, %beta, %mean, %var) {epsilon=0.001}\n"
    "%c2 = Conv(%bn, %w2) {group=2}\n"
    "%bn2 = BatchNormalization(%c2, %gamma, %beta, %mean, %var)\n"
    "%r = Relu(%bn)\n"
    "%bn3 = BatchNormalization(%r, %gamma, %beta, %mean, %var)\n"
    "%y = Concat(%bn2, %bn3) {axis=1}\n"
    "output %y\n";

static void test_bn_fold_numerics(void **state) {
  struct ir_graph *ref = parse_ok(bn_text), *g = parse_ok(bn_text);
  float x[150];
  for (int i = 0; i < 150; i++) x[i] = sinf((float)i);
  float *want = eval_ok(ref, x);
  char *out = run_passes(g);
  int n_bn = 0, n_conv = 0, n_mul = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    n_bn += g->nodes[i].op == IR_OP_BATCHNORM;
    n_conv += g->nodes[i].op == IR_OP_CONV;
    n_mul += g->nodes[i].op == IR_OP_MUL;
  }
  assert_int_equal(n_bn, 0);
  assert_int_equal(n_conv, 2);
  assert_int_equal(n_mul, 1); /* the BN after the Relu */
  assert_null(strstr(out, "%w :"));  /* originals dropped by DCE */
  float *got = eval_ok(g, x);
  for (int i = 0; i < 2 * 8 * 25; i++)
    if (fabsf(got[i] - want[i]) > 1e-5f * fmaxf(1.0f, fabsf(want[i])))
      fail_msg("element %d: %g vs %g", i, got[i], want[i]);
  free(out);
  free(want);
  free(got);
  ir_graph_free(ref);
  ir_graph_free(g);
}

static void test_dce(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[2]\n"
      "input %unused : f32[2]\n"
      "const %k : f32[2] = [1.0, 2.0]\n"
      "%a = Add(%x, %k)\n"
      "%b = Relu(%a)\n"
      "%c = Relu(%x)\n"
      "output %c\n");
  ir_pass_dce(g);
  char *out = ir_print_str(g, 0);
  assert_string_equal(out,
                      "loom.ir 1\n"
                      "input  %x : f32[2]\n"
                      "input  %unused : f32[2]\n"
                      "%c = Relu(%x)\n"
                      "output %c\n");
  free(out);
  ir_graph_free(g);
}

/* Direct-definition convolution, to check the interpreter's range-split
 * kernel on strides, dilations, pads and groups. */
static void naive_conv(const int64_t *xd, const float *x, const int64_t *wd, const float *w, const float *b,
                       const int64_t *p, int64_t s, int64_t d, int64_t grp, const int64_t *yd, float *y) {
  int64_t cg = wd[1], mg = wd[0] / grp;
  for (int64_t n = 0; n < yd[0]; n++)
    for (int64_t m = 0; m < yd[1]; m++)
      for (int64_t oh = 0; oh < yd[2]; oh++)
        for (int64_t ow = 0; ow < yd[3]; ow++) {
          float acc = b[m];
          for (int64_t c = 0; c < cg; c++)
            for (int64_t kh = 0; kh < wd[2]; kh++)
              for (int64_t kw = 0; kw < wd[3]; kw++) {
                int64_t ih = oh * s - p[0] + kh * d, iw = ow * s - p[1] + kw * d;
                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3]) continue;
                int64_t ci = (m / mg) * cg + c;
                acc += w[((m * cg + c) * wd[2] + kh) * wd[3] + kw] * x[((n * xd[1] + ci) * xd[2] + ih) * xd[3] + iw];
              }
          y[((n * yd[1] + m) * yd[2] + oh) * yd[3] + ow] = acc;
        }
}

static void check_conv_case(int c, int m, int h, int w, int k, int s, int d, int grp, int pt, int pl, int pb, int pr) {
  char text[1024];
  snprintf(text, sizeof text,
           "loom.ir 1\ninput %%x : f32[2,%d,%d,%d]\nconst %%w : f32[%d,%d,%d,%d] = rand(3)\n"
           "const %%b : f32[%d] = rand(4)\n"
           "%%y = Conv(%%x, %%w, %%b) {strides=[%d,%d], dilations=[%d,%d], group=%d, pads=[%d,%d,%d,%d]}\n"
           "output %%y\n",
           c, h, w, m, c / grp, k, k, m, s, s, d, d, grp, pt, pl, pb, pr);
  struct ir_graph *g = parse_ok(text);
  int64_t n = 2 * c * h * w;
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = cosf((float)i * 0.7f);
  float *y = eval_ok(g, x);
  const struct ir_tensor *yt = &g->tensors[ir_tensor_find(g, "y")], *wt = &g->tensors[ir_tensor_find(g, "w")];
  int64_t xd[4] = {2, c, h, w}, p[2] = {pt, pl}, ny = ir_tensor_numel(yt);
  float *want = malloc((size_t)ny * sizeof *want);
  naive_conv(xd, x, wt->dims, wt->data, g->tensors[ir_tensor_find(g, "b")].data, p, s, d, grp, yt->dims, want);
  for (int64_t i = 0; i < ny; i++)
    if (fabsf(y[i] - want[i]) > 1e-4f) fail_msg("%s: element %lld: %g vs %g", text, (long long)i, y[i], want[i]);
  free(x), free(y), free(want);
  ir_graph_free(g);
}

static void test_eval_conv_variants(void **state) {
  check_conv_case(3, 4, 7, 9, 3, 1, 1, 1, 1, 1, 1, 1);
  check_conv_case(3, 4, 7, 9, 3, 2, 1, 1, 1, 0, 2, 1);
  check_conv_case(4, 6, 8, 8, 3, 1, 2, 2, 2, 2, 2, 2);
  check_conv_case(6, 6, 9, 7, 3, 2, 1, 6, 1, 1, 1, 1);  /* depthwise */
  check_conv_case(4, 8, 5, 5, 1, 2, 1, 1, 0, 0, 0, 0);  /* 1x1 stride 2 */
  check_conv_case(2, 2, 11, 11, 5, 3, 2, 1, 4, 0, 1, 3);
}

static void test_eval_data_movement(void **state) {
  struct ir_error err = {{0}};
  float x[6] = {1, 2, 3, 4, 5, 6};
  void *outs[2];
  const void *ins[1] = {x};
  struct ir_graph *g = parse_ok(
      "loom.ir 1\n"
      "input %x : f32[2,3]\n"
      "const %ix : i32[2] = [-1, 0]\n"
      "const %m : f32[3,2] = [1, 2, 3, 4, 5, 6]\n"
      "%t = Transpose(%x)\n"
      "%g = Gather(%t, %ix)\n"
      "%c = Concat(%g, %g) {axis=1}\n"
      "%f = Flatten(%c) {axis=0}\n"
      "%u = Unsqueeze(%x) {axes=[0]}\n"
      "%bm = MatMul(%u, %m)\n"
      "output %f\noutput %bm\n");
  assert_int_equal(ir_pass_shape_infer(g, &err), 0);
  assert_string_equal(type_str(g, "f"), "f32[1,8]");
  assert_string_equal(type_str(g, "bm"), "f32[1,2,2]");
  assert_int_equal(ir_eval_ref(g, ins, outs, &err), 0);
  /* t = [[1,4],[2,5],[3,6]]; g = rows 2, 0 = [[3,6],[1,4]] */
  float wf[8] = {3, 6, 3, 6, 1, 4, 1, 4};
  for (int i = 0; i < 8; i++) assert_float_equal(((float *)outs[0])[i], wf[i], 0);
  float wb[4] = {22, 28, 49, 64};
  for (int i = 0; i < 4; i++) assert_float_equal(((float *)outs[1])[i], wb[i], 0);
  free(outs[0]);
  free(outs[1]);
  ir_graph_free(g);
}

/* Byte mutations of canonical text: parse, verify, passes, eval; nothing
 * may crash or leak (the SAN build checks). */
static void test_parse_mutations(void **state) {
  const char *base = bn_text;
  size_t len = strlen(base);
  char *buf = malloc(len + 1);
  uint64_t s = 99;
  static const char alphabet[] = "%[](){},=:_\"0123456789-.e xfi8[]?*#\n";
  for (int iter = 0; iter < 4000; iter++) {
    memcpy(buf, base, len + 1);
    for (int k = 0; k < 1 + iter % 3; k++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      buf[(s >> 33) % len] = alphabet[(s >> 20) % (sizeof alphabet - 1)];
    }
    struct ir_error err = {{0}};
    struct ir_graph *g = ir_parse(buf, "m.ir", &err);
    if (!g) continue;
    if (!ir_run_default_passes(g, &err) && g->n_inputs == 1 && g->n_outputs >= 1 &&
        ir_tensor_bytes(&g->tensors[g->inputs[0]]) >= 0 && ir_tensor_bytes(&g->tensors[g->inputs[0]]) < 1 << 20) {
      void *x = calloc(1, (size_t)ir_tensor_bytes(&g->tensors[g->inputs[0]]) + 1);
      void *outs[8] = {0};
      const void *ins[1] = {x};
      if (g->n_outputs <= 8) ir_eval_ref(g, ins, outs, &err);
      for (int i = 0; i < 8; i++) free(outs[i]);
      free(x);
    }
    ir_graph_free(g);
  }
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_infer_windows),
      cmocka_unit_test(test_shape_infer_tensors),
      cmocka_unit_test(test_shape_infer_errors),
      cmocka_unit_test(test_eval_conv_pool),
      cmocka_unit_test(test_eval_gemm_softmax),
      cmocka_unit_test(test_eval_quant),
      cmocka_unit_test(test_const_fold_shape_chain),
      cmocka_unit_test(test_const_fold_arith),
      cmocka_unit_test(test_bn_fold_numerics),
      cmocka_unit_test(test_dce),
      cmocka_unit_test(test_eval_conv_variants),
      cmocka_unit_test(test_eval_data_movement),
      cmocka_unit_test(test_parse_mutations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
