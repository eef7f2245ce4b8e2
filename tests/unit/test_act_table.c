/*
 * test_act_table.c - activation tables (sw_compiler/act_table.c,
 * pass_fuse_act.c): the table of a float function between two int8
 * quantizations at its edges (saturation, zero points, the codes -128 and
 * 127, the bit-pattern indexing the hardware uses, monotonic functions
 * staying monotonic), the regions the exporters' compositions form (SiLU,
 * GELU, HardSwish as x * HardSigmoid(x)) and the ones that are no function
 * of one tensor (an SE block's gate times its feature map), and the fused
 * graphs: a table after a convolution goes into its epilogue (also
 * through views), a table elsewhere is an identity depthwise job, and both
 * give the unfused QDQ graph's bytes on the reference interpreter.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_compiler/act_table.h"
#include "sw_compiler/compiler.h"

static struct ir_graph *parse_ok(const char *text) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse failed: %s", err.msg);
  if (ir_verify(g, &err)) fail_msg("verify failed: %s", err.msg);
  return g;
}

/* Parsed and typed (a region's tensors must be float). */
static struct ir_graph *typed(const char *text) {
  struct ir_graph *g = parse_ok(text);
  struct ir_error err = {{0}};
  if (ir_run_default_passes(g, &err)) fail_msg("passes failed: %s", err.msg);
  return g;
}

static int node_of(const struct ir_graph *g, const char *type) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && !strcmp(ir_node_op(&g->nodes[i]), type)) return i;
  fail_msg("no %s node", type);
  return -1;
}

/* The table of `fn` (one op on %x) for the given parameters. */
static void table_of(const char *fn, float si, int zi, float so, int zo, int8_t lut[256]) {
  char text[512];
  snprintf(text, sizeof text, "loom.ir 1\ninput %%x : f32[1,4,2,2]\n%%y = %s@14(%%x)\noutput %%y\n", fn);
  struct ir_graph *g = typed(text);
  struct act_region r;
  assert_int_equal(act_region_grow(g, node_of(g, fn), &r), 0);
  assert_int_equal(r.n, 1);
  act_table_build(g, &r, si, zi, so, zo, lut);
  ir_graph_free(g);
}

static int q(double v, float s, int z) {
  double c = nearbyint(v / s) + z;
  return c < -128 ? -128 : c > 127 ? 127 : (int)c;
}

/* lut is indexed by the code's bit pattern: code c at lut[(uint8_t)c]. */
#define AT(lut, c) ((lut)[(uint8_t)(int8_t)(c)])

static void test_table_edges(void **state) {
  int8_t t[256];
  /* Sigmoid over [-8, 8) into [0, 1]: zero points both sides */
  table_of("Sigmoid", 1.0f / 16, 0, 1.0f / 255, -128, t);
  assert_int_equal(AT(t, 0), q(0.5, 1.0f / 255, -128)); /* sigmoid(0) = 0.5: code 0 (127.5 rounds to even) */
  assert_int_equal(AT(t, -128), q(1 / (1 + exp(8.0)), 1.0f / 255, -128));
  assert_int_equal(AT(t, 127), q(1 / (1 + exp(-127.0 / 16)), 1.0f / 255, -128));
  assert_int_equal(t[128], AT(t, -128)); /* index 128 is code -128, not code 0 */
  assert_int_equal(t[0], AT(t, 0));
  /* an input zero point: the code zp is the real 0 */
  table_of("Tanh", 0.05f, 20, 1.0f / 127, 0, t);
  assert_int_equal(AT(t, 20), 0);
  assert_int_equal(AT(t, 19), q(tanh(-0.05), 1.0f / 127, 0));
  /* saturation: Exp grows past the output range at the top, never wraps */
  table_of("Exp", 0.1f, 0, 0.05f, -128, t);
  assert_int_equal(AT(t, 127), 127);
  assert_int_equal(AT(t, 0), q(1.0, 0.05f, -128));
  assert_int_equal(AT(t, -128), -128); /* exp(-12.8) / 0.05 rounds to 0: the zero point */
  /* HardSigmoid's attributes' defaults (alpha 0.2, beta 0.5): 0 below -2.5, 1 above 2.5 */
  table_of("HardSigmoid", 0.1f, 0, 1.0f / 255, -128, t);
  assert_int_equal(AT(t, -128), -128);
  assert_int_equal(AT(t, 127), 127);
  assert_int_equal(AT(t, 0), q(0.5, 1.0f / 255, -128));
  /* monotonic functions stay monotonic over the codes -128..127 */
  static const char *const mono[] = {"Sigmoid", "Tanh", "HardSigmoid", "Exp", "Elu", "LeakyRelu", "Softplus",
                                     "Erf", "Softsign", "Selu", "Celu"};
  for (size_t k = 0; k < sizeof mono / sizeof mono[0]; k++) {
    table_of(mono[k], 0.03f, -5, 0.02f, 3, t);
    for (int c = -127; c <= 127; c++)
      if (AT(t, c) < AT(t, c - 1)) fail_msg("%s: code %d -> %d below code %d -> %d", mono[k], c, AT(t, c), c - 1, AT(t, c - 1));
  }
  /* HardSwish: not monotonic, its minimum -0.375 at -1.5 */
  table_of("HardSwish", 0.05f, 0, 0.01f, -40, t);
  assert_int_equal(AT(t, -30), q(-1.5 * 0.25, 0.01f, -40));
  assert_int_equal(AT(t, -128), q(0.0, 0.01f, -40));
}

/* The exporters' compositions are one region of one leaf. */
static void test_regions(void **state) {
  struct act_region r;
  struct ir_graph *g = typed("loom.ir 1\ninput %x : f32[1,4,2,2]\n"
                                "%s = Sigmoid@13(%x)\n%y = Mul(%x, %s)\noutput %y\n");
  assert_int_equal(act_region_grow(g, node_of(g, "Sigmoid"), &r), 0); /* SiLU */
  assert_int_equal(r.n, 2);
  assert_int_equal(r.x, g->inputs[0]);
  assert_int_equal(r.y, g->outputs[0]);
  int8_t t[256];
  act_table_build(g, &r, 0.05f, 0, 0.05f, 0, t);
  for (int c = -128; c <= 127; c++) assert_int_equal(AT(t, c), q(c * 0.05 / (1 + exp(-c * 0.05)), 0.05f, 0));
  ir_graph_free(g);
  /* GELU as torch 1.13 exports it: Div, Erf, Add, Mul, Mul */
  g = typed("loom.ir 1\ninput %x : f32[1,4,2,2]\nconst %r2 : f32[] = [1.4142135]\n"
               "const %one : f32[] = [1.0]\nconst %half : f32[] = [0.5]\n"
               "%d = Div@13(%x, %r2)\n%e = Erf@13(%d)\n%a = Add(%e, %one)\n%m = Mul(%x, %a)\n%y = Mul(%m, %half)\n"
               "output %y\n");
  assert_int_equal(act_region_grow(g, node_of(g, "Erf"), &r), 0);
  assert_int_equal(r.n, 5);
  assert_int_equal(r.x, g->inputs[0]);
  assert_int_equal(r.y, g->outputs[0]);
  act_table_build(g, &r, 0.04f, 10, 0.03f, -20, t);
  for (int c = -128; c <= 127; c++) {
    double v = (c - 10) * (double)0.04f;
    int want = q(0.5 * v * (1 + erf(v / 1.4142135)), 0.03f, -20), got = AT(t, c);
    if (abs(got - want) > 1) fail_msg("GELU code %d: %d, want %d", c, got, want);
  }
  ir_graph_free(g);
  /* an SE block's gate times another tensor: no function of one tensor */
  g = typed("loom.ir 1\ninput %x : f32[1,4,2,2]\ninput %z : f32[1,4,1,1]\n"
               "%s = HardSigmoid@13(%z)\n%y = Mul(%x, %s)\noutput %y\n");
  assert_int_equal(act_region_grow(g, node_of(g, "HardSigmoid"), &r), 0);
  assert_int_equal(r.n, 1); /* the gate alone */
  assert_int_equal(r.x, g->inputs[1]);
  ir_graph_free(g);
  /* a ReLU below any seed belongs to the convolution before it, not to the region */
  g = typed("loom.ir 1\ninput %x : f32[1,4,2,2]\n%r = Relu(%x)\n%y = Sigmoid@13(%r)\noutput %y\n");
  assert_int_equal(act_region_grow(g, node_of(g, "Sigmoid"), &r), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.x, g->nodes[node_of(g, "Relu")].out[0]);
  ir_graph_free(g);
  /* no seed: no region */
  g = typed("loom.ir 1\ninput %x : f32[1,4,2,2]\n%y = Relu(%x)\noutput %y\n");
  assert_int_equal(act_region_grow(g, node_of(g, "Relu"), &r), -1);
  ir_graph_free(g);
}

/* ---- fused graphs ---- */

/* Output 0 of g on input x (the graph may have more outputs: freed). */
static void *run1(const struct ir_graph *g, const void *x) {
  struct ir_error err = {{0}};
  const void *in[1] = {x};
  void *out[8] = {NULL};
  assert_true(g->n_inputs == 1 && g->n_outputs >= 1 && g->n_outputs <= 8);
  if (ir_eval_ref(g, in, out, &err)) fail_msg("eval failed: %s", err.msg);
  for (int i = 1; i < g->n_outputs; i++) free(out[i]);
  return out[0];
}

static int count_qconv(const struct ir_graph *g, int act_only) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *m = &g->nodes[i];
    n += !m->dead && m->op == IR_OP_QCONV && ir_attr_find(m, "lut") && ir_attr_int(m, "act_only", 0) == act_only;
  }
  return n;
}

static int count_type(const struct ir_graph *g, const char *type) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += !g->nodes[i].dead && !strcmp(ir_node_op(&g->nodes[i]), type);
  return n;
}

/* Fuses `text`; the int8 result must be that of the graph fused without
 * tables, whose activations run in float between the same int8 tensors
 * (the host kernels compute the function in float32, the table in double:
 * one code apart at most, at a rounding tie). */
static struct ir_graph *fused_matches(const char *text, unsigned flags, const int8_t *x, size_t n) {
  struct ir_graph *g = parse_ok(text), *ref = parse_ok(text);
  struct ir_error err = {{0}};
  if (ir_run_default_passes(g, &err) || ir_pass_fuse(g, flags, &err)) fail_msg("fuse failed: %s", err.msg);
  if (ir_run_default_passes(ref, &err) || ir_pass_fuse(ref, flags | FUSE_NO_ACT, &err)) fail_msg("%s", err.msg);
  int8_t *a = run1(g, x), *b = run1(ref, x);
  int same = 0;
  for (size_t i = 0; i < n; i++) {
    if (abs(a[i] - b[i]) > 1) fail_msg("byte %zu: fused %d, reference %d", i, a[i], b[i]);
    same += a[i] == b[i];
  }
  assert_true(same >= (int)n - 2);
  free(a);
  free(b);
  ir_graph_free(ref);
  return g;
}

#define QDQ_HEAD                                                                                       \
  "loom.ir 1\n"                                                                                        \
  "input %x : i8[1,2,4,4]\n"                                                                           \
  "const %s : f32[] = [0.05]\n"                                                                        \
  "const %z : i8[] = [-3]\n"                                                                           \
  "const %s2 : f32[] = [0.04]\n"                                                                       \
  "const %z2 : i8[] = [5]\n"                                                                           \
  "const %s3 : f32[] = [0.004]\n"                                                                      \
  "const %z3 : i8[] = [-128]\n"                                                                        \
  "const %wq : i8[2,2,1,1] = [40, -20, 30, 50]\n"                                                      \
  "const %ws : f32[2] = [0.01, 0.02]\n"                                                                \
  "const %wz : i8[2] = [0, 0]\n"                                                                       \
  "%xf = DequantizeLinear(%x, %s, %z)\n"

static void test_fuse_into_conv(void **state) {
  /* conv -> Sigmoid: the table goes into the convolution's epilogue */
  const char *conv_sigmoid = QDQ_HEAD
      "%wf = DequantizeLinear(%wq, %ws, %wz) {axis=0}\n"
      "%c = Conv(%xf, %wf) {kernel_shape=[1,1]}\n"
      "%cq = QuantizeLinear(%c, %s2, %z2)\n"
      "%cf = DequantizeLinear(%cq, %s2, %z2)\n"
      "%g = Sigmoid@13(%cf)\n"
      "%y = QuantizeLinear(%g, %s3, %z3)\n"
      "output %y\n";
  int8_t x[32];
  for (int i = 0; i < 32; i++) x[i] = (int8_t)(i * 37 - 120);
  struct ir_graph *g = fused_matches(conv_sigmoid, 0, x, 32);
  assert_int_equal(count_qconv(g, 0), 1);
  assert_int_equal(count_qconv(g, 1), 0);
  assert_int_equal(count_type(g, "Sigmoid"), 0);
  ir_graph_free(g);
  /* FUSE_NO_ACT: the Sigmoid stays float */
  struct ir_error err = {{0}};
  g = parse_ok(conv_sigmoid);
  assert_int_equal(ir_run_default_passes(g, &err) || ir_pass_fuse(g, FUSE_NO_ACT, &err), 0);
  assert_int_equal(count_type(g, "Sigmoid"), 1);
  ir_graph_free(g);
}

static void test_fuse_standalone(void **state) {
  /* SiLU of a model input: x * Sigmoid(x) is one table, an identity job */
  const char *silu = QDQ_HEAD
      "%g = Sigmoid@13(%xf)\n"
      "%m = Mul(%xf, %g)\n"
      "%y = QuantizeLinear(%m, %s2, %z2)\n"
      "output %y\n";
  int8_t x[32];
  for (int i = 0; i < 32; i++) x[i] = (int8_t)(i * 8 - 128);
  struct ir_graph *g = fused_matches(silu, 0, x, 32);
  assert_int_equal(count_qconv(g, 1), 1);
  assert_int_equal(count_type(g, "Sigmoid") + count_type(g, "Mul"), 0);
  ir_graph_free(g);
  /* the convolution's result read twice (by the table and by the output): no merge */
  const char *shared = QDQ_HEAD
      "%wf = DequantizeLinear(%wq, %ws, %wz) {axis=0}\n"
      "%c = Conv(%xf, %wf) {kernel_shape=[1,1]}\n"
      "%cq = QuantizeLinear(%c, %s2, %z2)\n"
      "%cf = DequantizeLinear(%cq, %s2, %z2)\n"
      "%g = Tanh@13(%cf)\n"
      "%y = QuantizeLinear(%g, %s3, %z3)\n"
      "output %y\n"
      "output %cq\n";
  g = fused_matches(shared, 0, x, 32);
  assert_int_equal(count_qconv(g, 1), 1);
  assert_int_equal(count_qconv(g, 0), 0);
  ir_graph_free(g);
  /* an SE gate times a feature map stays float (two tensors) */
  const char *se = QDQ_HEAD
      "%p = GlobalAveragePool(%xf)\n"
      "%h = HardSigmoid@13(%p)\n"
      "%m = Mul(%xf, %h)\n"
      "%y = QuantizeLinear(%m, %s2, %z2)\n"
      "output %y\n";
  g = parse_ok(se);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(g, &err) || ir_pass_fuse(g, 0, &err), 0);
  assert_int_equal(count_qconv(g, 1), 0);
  assert_int_equal(count_type(g, "HardSigmoid"), 1);
  ir_graph_free(g);
}

/* Views between a convolution and its table, on either side: the table
 * still goes into the convolution (a table is element-wise).  Its result
 * viewed back to the convolution's shape is what the convolution writes;
 * viewed to another shape (and a graph output) it is a Reshape of the
 * convolution's result. */
static void test_fuse_through_views(void **state) {
  const char *back = QDQ_HEAD
      "const %flat : i64[2] = [1, 32]\n"
      "const %four : i64[4] = [1, 2, 4, 4]\n"
      "%wf = DequantizeLinear(%wq, %ws, %wz) {axis=0}\n"
      "%c = Conv(%xf, %wf) {kernel_shape=[1,1]}\n"
      "%cq = QuantizeLinear(%c, %s2, %z2)\n"
      "%cf = DequantizeLinear(%cq, %s2, %z2)\n"
      "%v = Reshape(%cf, %flat)\n"
      "%g = Tanh@13(%v)\n"
      "%gq = QuantizeLinear(%g, %s3, %z3)\n"
      "%gf = DequantizeLinear(%gq, %s3, %z3)\n"
      "%y4 = Reshape(%gf, %four)\n"
      "%y = QuantizeLinear(%y4, %s3, %z3)\n"
      "output %y\n";
  int8_t x[32];
  for (int i = 0; i < 32; i++) x[i] = (int8_t)(i * 37 - 120);
  struct ir_graph *g = fused_matches(back, 0, x, 32);
  assert_int_equal(count_qconv(g, 0), 1);
  assert_int_equal(count_qconv(g, 1), 0);
  assert_int_equal(count_type(g, "Reshape"), 0); /* the convolution writes y */
  ir_graph_free(g);
  const char *flat = QDQ_HEAD
      "const %flat : i64[2] = [1, 32]\n"
      "%wf = DequantizeLinear(%wq, %ws, %wz) {axis=0}\n"
      "%c = Conv(%xf, %wf) {kernel_shape=[1,1]}\n"
      "%cq = QuantizeLinear(%c, %s2, %z2)\n"
      "%cf = DequantizeLinear(%cq, %s2, %z2)\n"
      "%v = Reshape(%cf, %flat)\n"
      "%g = Tanh@13(%v)\n"
      "%y = QuantizeLinear(%g, %s3, %z3)\n"
      "output %y\n";
  g = fused_matches(flat, 0, x, 32);
  assert_int_equal(count_qconv(g, 0), 1);
  assert_int_equal(count_qconv(g, 1), 0);
  assert_true(count_type(g, "Reshape") >= 1); /* [1, 2, 4, 4] -> the [1, 32] output */
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_edges),
      cmocka_unit_test(test_regions),
      cmocka_unit_test(test_fuse_into_conv),
      cmocka_unit_test(test_fuse_standalone),
      cmocka_unit_test(test_fuse_through_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
