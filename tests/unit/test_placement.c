/*
 * test_placement.c - per-node placement with Q/DQ insertion at the
 * accelerator's boundaries, the export-habit rewrites, the accelerator
 * forms of float ops, the placement summary, --input-shape, and what the
 * compiler says about bad input.
 *
 * Each case is an IR text graph compiled for the accelerator with random
 * calibration data; the test looks at where each node of the compiled graph
 * runs and at the graph itself (a Relu then Clip is one fused convolution,
 * a host op reads dequantized data), and runs the result on fsim against
 * the compiled graph on the reference interpreter where the host part has
 * no kernel to wait for.
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

#include <unistd.h>

#include "driver/core/npy.h"
#include "sw_compiler/compile.h"
#include "compilerun.h"
#include "testcalib.h"

/* Compiles text for the accelerator, calibrated on random samples of the
 * input of shape dims. */
static void compile_ok(const char *text, int rank, const int64_t *dims, struct compile_result *r) {
  struct calib_file cf;
  struct ir_error err = {{0}};
  assert_int_equal(write_calib(&cf, rank, dims, 4, 7), 0);
  struct compile_options o = {.calib = cf.path};
  if (compile_graph(parse_ok(text), &o, r, &err)) fail_msg("%s", err.msg);
  remove_calib(&cf);
}

/* Nodes of the compiled graph of op type `op` (ir_node_op) placed at t. */
static int count(const struct compile_result *r, const char *op, enum part_target t) {
  int n = 0;
  for (int i = 0; i < r->graph->n_nodes; i++)
    n += r->targets[i] == t && !strcmp(ir_node_op(&r->graph->nodes[i]), op);
  return n;
}

static void expect_in(const char *text, const char *needle) {
  if (!strstr(text, needle)) fail_msg("'%s' not in:\n%s", needle, text);
}

/* A float op without an int8 form (a Transpose: the reference interpreter
 * evaluates it for calibration, so the test needs no host kernel) between
 * two convolutions: the host runs
 * it in float, with a DequantizeLinear before and a QuantizeLinear after
 * (the boundaries), and the summary says so. */
static void test_host_op_between_convs(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,4,6,6]\nconst %w : f32[8,4,3,3] = rand(1)\n"
                             "const %w2 : f32[4,8,1,1] = rand(2)\n%a = Conv(%x, %w) {pads=[1,1,1,1]}\n"
                             "%s = Transpose(%a) {perm=[0,1,3,2]}\n%y = Conv(%s, %w2)\noutput %y\n";
  struct compile_result r;
  compile_ok(text, 4, (int64_t[]){1, 4, 6, 6}, &r);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 2);
  assert_int_equal(count(&r, "Transpose", PART_KERNEL), 1);
  int s = -1;
  for (int i = 0; i < r.graph->n_nodes; i++)
    if (!strcmp(ir_node_op(&r.graph->nodes[i]), "Transpose")) s = i;
  const struct ir_node *n = &r.graph->nodes[s];
  assert_int_equal(r.graph->nodes[s - 1].op, IR_OP_DEQUANTIZELINEAR); /* the boundary in */
  assert_int_equal(r.graph->nodes[s + 1].op, IR_OP_QUANTIZELINEAR);   /* and out */
  assert_int_equal(r.graph->tensors[n->in[0]].dtype, IR_DT_F32);
  char *s1 = placement_summary(&r);
  expect_in(s1, "Conv                            2      0");
  expect_in(s1, "DequantizeLinear                0      2  int8 boundary: (de)quantizes for the accelerator");
  expect_in(s1, "Transpose                       0      1  no int8 lowering: on the host kernels in its own type");
  expect_in(s1, "\nplacement: 2 nodes on the accelerator, 5 on the host; 100.0% of MACs on the accelerator\n");
  free(s1);
  compile_result_free(&r);
}

/* F.relu6 as PyTorch 1.13 exports it (Relu then Clip), spatial ReduceMean
 * (x.mean([2,3])), a zero Pad before a Conv: all fold into the
 * accelerator's ops; nothing is left for the host but the interface. */
static void test_export_habits(void **state) {
  static const char text[] =
      "loom.ir 1\ninput %x : f32[1,4,6,6]\nconst %w : f32[8,4,3,3] = rand(1)\nconst %lo : f32[] = [0.0]\n"
      "const %hi : f32[] = [6.0]\nconst %p : i64[8] = [0, 0, 1, 1, 0, 0, 1, 1]\n%xp = Pad@13(%x, %p)\n"
      "%a = Conv(%xp, %w)\n%r = Relu(%a)\n%c = Clip(%r, %lo, %hi)\n%m = ReduceMean@13(%c) {axes=[2,3], keepdims=0}\n"
      "const %fw : f32[8,3] = rand(3)\n%y = MatMul(%m, %fw)\noutput %y\n";
  struct compile_result r;
  compile_ok(text, 4, (int64_t[]){1, 4, 6, 6}, &r);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 1);
  assert_int_equal(count(&r, "loom.QPool", PART_ACCEL), 1);
  assert_int_equal(count(&r, "loom.QGemm", PART_ACCEL), 1);
  for (int i = 0; i < r.graph->n_nodes; i++) {
    const struct ir_node *n = &r.graph->nodes[i];
    for (const char *const *op = (const char *const[]){"Relu", "Clip", "Pad", "ReduceMean", NULL}; *op; op++)
      if (!strcmp(ir_node_op(n), *op)) fail_msg("a %s is left", *op);
    if (n->op == IR_OP_QCONV) assert_int_equal(ir_attr_find(n, "pads")->ints[0], 1); /* the Pad moved in */
  }
  char *s = placement_summary(&r); /* the mean over H, W is reported as the global pool it became */
  expect_in(s, "GlobalAveragePool               1      0");
  free(s);
  compile_result_free(&r);
}

/* Mul by a per-channel constant and Div by a scalar after a Conv fold into
 * it; an Add of a constant on its own becomes a depthwise convolution: all
 * on the accelerator. */
static void test_constant_arithmetic(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,4,5,5]\nconst %w : f32[4,4,1,1] = rand(1)\n"
                             "const %s : f32[1,4,1,1] = [0.5, 1.0, 2.0, -1.0]\nconst %d : f32[] = [4.0]\n"
                             "const %b : f32[4,1,1] = [0.1, 0.2, 0.3, 0.4]\n%a = Conv(%x, %w)\n%m = Mul(%a, %s)\n"
                             "%q = Div@14(%m, %d)\n%r = Relu(%q)\n%y = Add(%r, %b)\noutput %y\n";
  struct compile_result r;
  compile_ok(text, 4, (int64_t[]){1, 4, 5, 5}, &r);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 2);
  assert_int_equal(count(&r, "Mul", PART_KERNEL) + count(&r, "Div", PART_KERNEL) + count(&r, "Add", PART_KERNEL), 0);
  compile_result_free(&r);
}

/* A transformer's Linear: MatMul of [1,S,D] activations by a constant
 * [D,E] plus its bias is one fully connected layer on the accelerator. */
static void test_batched_matmul(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,6,8]\nconst %w : f32[8,5] = rand(1)\nconst %b : f32[5] = rand(2)\n"
                             "%m = MatMul(%x, %w)\n%y = Add(%m, %b)\noutput %y\n";
  struct compile_result r;
  compile_ok(text, 3, (int64_t[]){1, 6, 8}, &r);
  assert_int_equal(count(&r, "loom.QGemm", PART_ACCEL), 1);
  assert_int_equal(r.graph->tensors[r.graph->outputs[0]].rank, 3);
  compile_result_free(&r);
}

/* Ops whose accelerator form would change the numbers stay on the host:
 * a ceil_mode average pool with a partial last window, a dilated max pool,
 * an Add of rank-3 tensors. */
static void test_stays_on_host(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,4,5,5]\nconst %w : f32[4,4,1,1] = rand(1)\n"
                             "%a = Conv(%x, %w)\n%p = AveragePool(%a) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}\n"
                             "%m = MaxPool(%a) {kernel_shape=[2,2], dilations=[2,2]}\n%y = Conv(%p, %w)\n%z = Conv(%m, %w)\n"
                             "output %y\noutput %z\n";
  struct compile_result r;
  compile_ok(text, 4, (int64_t[]){1, 4, 5, 5}, &r);
  assert_int_equal(count(&r, "AveragePool", PART_KERNEL), 1);
  assert_int_equal(count(&r, "MaxPool", PART_KERNEL), 1);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 3);
  compile_result_free(&r);
  /* ceil_mode max pooling runs on the accelerator (a padded window) */
  static const char ceil[] = "loom.ir 1\ninput %x : f32[1,4,5,5]\nconst %w : f32[4,4,1,1] = rand(1)\n"
                             "%a = Conv(%x, %w)\n%y = MaxPool(%a) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}\n"
                             "output %y\n";
  compile_ok(ceil, 4, (int64_t[]){1, 4, 5, 5}, &r);
  assert_int_equal(count(&r, "loom.QPool", PART_ACCEL), 1);
  assert_int_equal(r.graph->tensors[r.graph->outputs[0]].dims[2], 3);
  compile_result_free(&r);
}

/* --target cpu: every node on the host; views stay views. */
static void test_cpu_target(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,4,5,5]\nconst %w : f32[4,4,1,1] = rand(1)\n"
                             "%a = Conv(%x, %w)\n%f = Flatten(%a)\n%y = Erf@13(%f)\noutput %y\n";
  struct compile_result r;
  struct ir_error err = {{0}};
  struct compile_options o = {.target = COMPILE_TARGET_CPU};
  if (compile_graph(parse_ok(text), &o, &r, &err)) fail_msg("%s", err.msg);
  assert_int_equal(count(&r, "Conv", PART_KERNEL), 1);
  assert_int_equal(count(&r, "Erf", PART_KERNEL), 1);
  assert_int_equal(count(&r, "Flatten", PART_ALIAS), 1);
  char *s = placement_summary(&r);
  expect_in(s, "--target cpu: every node on the host");
  expect_in(s, "placement: 0 nodes on the accelerator, 2 on the host; 0.0% of MACs on the accelerator");
  free(s);
  compile_result_free(&r);
}

static void expect_input_error(const char *text, const struct compile_input_shape *s, int n, const char *msg) {
  struct compile_result r;
  struct ir_error err = {{0}};
  struct compile_options o = {.target = COMPILE_TARGET_CPU, .input_shapes = s, .n_input_shapes = n};
  assert_int_equal(compile_graph(parse_ok(text), &o, &r, &err), -1);
  compile_result_free(&r);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
}

/* Dynamic dimensions: fixed by --input-shape, refused without it, naming
 * the input, the dimension and the flag. */
static void test_input_shapes(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[?,3,?]\n%y = Relu(%x)\noutput %y\n";
  struct ir_error err = {{0}};
  struct ir_graph *g = parse_ok(text);
  ir_dim_name_add(g, 0, 0, "batch");
  assert_int_equal(compile_fix_inputs(g, NULL, 0, &err), -1);
  assert_string_equal(err.msg, "t.ir: input 'x': dimension 0 ('batch') is not fixed; give every dimension with "
                               "--input-shape x=1,3,1");
  struct compile_input_shape s = {.name = "x", .rank = 3, .dims = {2, 3, 5}};
  assert_int_equal(compile_fix_inputs(g, &s, 1, &err), 0);
  assert_int_equal(g->tensors[0].dims[2], 5);
  ir_graph_free(g);
  s.dims[1] = 4;
  expect_input_error(text, &s, 1, "--input-shape x: dimension 1 is 3 in the model, not 4");
  s.rank = 2;
  expect_input_error(text, &s, 1, "--input-shape x: 2 dimensions given, the input has 3");
  s.name = "ids";
  expect_input_error(text, &s, 1, "--input-shape ids: the model has no input 'ids' (its inputs: x)");
}

/* A model with two inputs calibrates from DIR/NAME.npy per input (sample k
 * of each makes sample k); a missing input or unequal counts are refused. */
static void test_two_inputs(void **state) {
  static const char text[] = "loom.ir 1\ninput %a : f32[1,4,3,3]\ninput %b : f32[1,4,3,3]\n"
                             "const %w : f32[4,4,1,1] = rand(1)\n%s = Add(%a, %b)\n%y = Conv(%s, %w)\noutput %y\n";
  char dir[64] = "/tmp/loom_calib2_XXXXXX", pa[96], pb[96], msg[LOOM_MSG_MAX];
  assert_non_null(mkdtemp(dir));
  snprintf(pa, sizeof pa, "%s/a.npy", dir);
  snprintf(pb, sizeof pb, "%s/b.npy", dir);
  float v[6 * 36 + 7]; /* b's samples start 7 values in */
  for (int i = 0; i < 6 * 36 + 7; i++) v[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
  int64_t d6[4] = {6, 4, 3, 3}, d4[4] = {4, 4, 3, 3};
  assert_int_equal(loom_npy_write(pa, LOOM_DT_F32, 4, d6, v, msg), LOOM_OK);
  struct compile_options o = {.calib = dir};
  struct compile_result r;
  struct ir_error err = {{0}};
  assert_int_equal(compile_graph(parse_ok(text), &o, &r, &err), -1);
  compile_result_free(&r);
  expect_in(err.msg, "a model with 2 inputs is calibrated from");
  expect_in(err.msg, "input 'b' has neither");
  assert_int_equal(loom_npy_write(pb, LOOM_DT_F32, 4, d4, v, msg), LOOM_OK);
  assert_int_equal(compile_graph(parse_ok(text), &o, &r, &err), -1);
  compile_result_free(&r);
  expect_in(err.msg, "input 'a' has 6 calibration samples, input 'b' 4");
  assert_int_equal(loom_npy_write(pb, LOOM_DT_F32, 4, d6, v + 7, msg), LOOM_OK);
  if (compile_graph(parse_ok(text), &o, &r, &err)) fail_msg("%s", err.msg);
  assert_int_equal(r.calib_samples, 6);
  assert_int_equal(count(&r, "loom.QAdd", PART_ACCEL), 1);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 1);
  compile_result_free(&r);
  unlink(pa), unlink(pb), rmdir(dir);
}

/* A ConvTranspose whose kernel equals its stride (U-Net's 2x upsampling)
 * becomes a 1x1 Conv to O*k*k channels (the accelerator's) and a
 * DepthToSpace in CRD order: W'[o*k*k + i*k + j][c] = W[c][o][i][j]; an
 * overlapping one (k 3, stride 2) stays as it is. */
static void test_convtranspose_upsampling(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,3,4,5]\nconst %w : f32[3,2,2,2] = rand(1)\n"
                             "const %b : f32[2] = [0.5, -1.0]\nconst %w3 : f32[3,2,3,3] = rand(2)\n"
                             "%y = ConvTranspose@11(%x, %w, %b) {kernel_shape=[2,2], strides=[2,2]}\n"
                             "%z = ConvTranspose@11(%x, %w3) {strides=[2,2]}\noutput %y\noutput %z\n";
  struct ir_error err = {{0}};
  struct ir_graph *g = parse_ok(text);
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  const float *w = g->tensors[ir_tensor_find(g, "w")].data;
  float want[8 * 3];
  for (int o = 0; o < 2; o++)
    for (int ij = 0; ij < 4; ij++)
      for (int c = 0; c < 3; c++) want[(o * 4 + ij) * 3 + c] = w[(c * 2 + o) * 4 + ij];
  assert_int_equal(ir_pass_const_ops_to_conv(g, 0, &err), 0);
  int conv = -1, d2s = -1, ct = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const char *op = ir_node_op(&g->nodes[i]);
    if (!strcmp(op, "Conv")) conv = i;
    if (!strcmp(op, "DepthToSpace")) d2s = i;
    ct += !strcmp(op, "ConvTranspose");
  }
  assert_true(conv >= 0 && d2s == conv + 1);
  assert_int_equal(ct, 1); /* the overlapping one */
  const struct ir_node *c = &g->nodes[conv], *d = &g->nodes[d2s];
  const struct ir_tensor *w2 = &g->tensors[c->in[1]];
  assert_int_equal(w2->dims[0], 8);
  assert_int_equal(w2->dims[1], 3);
  assert_memory_equal(w2->data, want, sizeof want);
  assert_true(((const float *)g->tensors[c->in[2]].data)[5] == -1.0f); /* bias of o = 1 for each (i, j) */
  assert_int_equal(ir_attr_int(d, "blocksize", 0), 2);
  assert_string_equal(ir_attr_string(d, "mode", ""), "CRD");
  assert_int_equal(d->out[0], ir_tensor_find(g, "y"));
  assert_int_equal(ir_pass_shape_infer(g, &err), 0);
  ir_graph_free(g);
}

/* An activation table of its own is a job only when its estimate at the
 * clock beats the host's lookup (place_tables.c): the Tanh of a 16x8x8
 * input (1024 codes, 16 channels a GEMM row) stays a job; the Tanh of the
 * pooled [1, 16] (a [1, 16, 1, 1] job of ~500 cycles = 5 us against
 * 16 x 25 ns) becomes Cast + Gather on the host, with the reason in the
 * summary.  The lookup is the same bytes as the job: both graphs, the
 * second compiled with COMPILE_TABLE_JOBS, give the same output on the
 * reference interpreter. */
static void test_table_on_host(void **state) {
  static const char text[] = "loom.ir 1\ninput %x : f32[1,16,8,8]\nconst %w : f32[16,16,1,1] = rand(1)\n"
                             "const %fw : f32[10,16] = rand(2)\n%t = Tanh@13(%x)\n%c = Conv(%t, %w)\n"
                             "%g = GlobalAveragePool(%c)\n%f = Flatten(%g)\n%s = Tanh@13(%f)\n"
                             "%y = Gemm(%s, %fw) {transB=1}\noutput %y\n";
  int64_t dims[4] = {1, 16, 8, 8};
  struct compile_result r, jobs;
  struct calib_file cf;
  struct ir_error err = {{0}};
  assert_int_equal(write_calib(&cf, 4, dims, 4, 7), 0);
  struct compile_options o = {.calib = cf.path}, oj = {.calib = cf.path, .flags = COMPILE_TABLE_JOBS};
  if (compile_graph(parse_ok(text), &o, &r, &err) || compile_graph(parse_ok(text), &oj, &jobs, &err))
    fail_msg("%s", err.msg);
  remove_calib(&cf);
  assert_int_equal(count(&r, "loom.QConv", PART_ACCEL), 2); /* the 16x8x8 table, the Conv */
  assert_int_equal(count(&r, "Cast", PART_KERNEL), 1);
  assert_int_equal(count(&r, "Gather", PART_KERNEL), 1);
  assert_int_equal(count(&jobs, "loom.QConv", PART_ACCEL), 3);
  assert_int_equal(count(&jobs, "Gather", PART_KERNEL), 0);
  assert_int_equal(r.n_host_tables, 1);
  char *s = placement_summary(&r);
  expect_in(s, "Tanh                            1      2  table lookup on the host: a job of its own, ");
  expect_in(s, " at 100 MHz > 0.4 us (25 ns/element)\n");
  free(s);
  float x[1024];
  for (int i = 0; i < 1024; i++) x[i] = sinf(0.37f * (float)i) * 1.5f;
  void *y[1] = {NULL}, *yj[1] = {NULL};
  const void *in[1] = {x};
  assert_int_equal(ir_eval_ref(r.graph, in, y, &err), 0);
  assert_int_equal(ir_eval_ref(jobs.graph, in, yj, &err), 0);
  assert_memory_equal(y[0], yj[0], (size_t)ir_tensor_bytes(&r.graph->tensors[r.graph->outputs[0]]));
  free(y[0]);
  free(yj[0]);
  compile_result_free(&r);
  compile_result_free(&jobs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_op_between_convs), cmocka_unit_test(test_export_habits),
      cmocka_unit_test(test_constant_arithmetic),   cmocka_unit_test(test_batched_matmul),
      cmocka_unit_test(test_stays_on_host),         cmocka_unit_test(test_cpu_target),
      cmocka_unit_test(test_input_shapes),          cmocka_unit_test(test_two_inputs),
      cmocka_unit_test(test_convtranspose_upsampling), cmocka_unit_test(test_table_on_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
