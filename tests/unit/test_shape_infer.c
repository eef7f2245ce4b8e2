/*
 * test_shape_infer.c - shape and type inference of the generic ONNX nodes
 * (sw_compiler/shape_onnx*.c), written as IR text: each case is one node
 * whose operands have known shapes (and constant values where the op needs
 * them), and the result's dtype and dims must be the ONNX ones.  Every op
 * type the importer accepts must have a rule; wrong nodes are refused with a
 * message naming the node; data-dependent results get a capacity and the
 * dyn flag; shapes wait for constants that are not there yet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/kernel.h"
#include "sw_compiler/compiler.h"
#include "sw_compiler/onnx_schema.h"
#include "sw_compiler/shape_onnx.h"

/* Parses `body` after the header, infers, and returns the type text of
 * tensor %y ("f32[2,3]"). */
static const char *infer(const char *body, char *buf, size_t len, int *dyn) {
  char text[4096];
  snprintf(text, sizeof text, "loom.ir 1\n%s", body);
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse: %s", err.msg);
  if (ir_pass_shape_infer(g, &err)) fail_msg("infer: %s\n%s", err.msg, body);
  int y = ir_tensor_find(g, "y");
  assert_true(y >= 0);
  const struct ir_tensor *t = &g->tensors[y];
  int n = snprintf(buf, len, "%s[", ir_dtype_name(t->dtype));
  for (int i = 0; i < t->rank; i++) n += snprintf(buf + n, len - (size_t)n, i ? ",%lld" : "%lld", (long long)t->dims[i]);
  snprintf(buf + n, len - (size_t)n, t->rank < 0 ? "?]" : "]");
  if (dyn) *dyn = t->dyn;
  ir_graph_free(g);
  return buf;
}

#define EXPECT(body, want)                                 \
  do {                                                     \
    char b_[128];                                          \
    assert_string_equal(infer(body, b_, sizeof b_, NULL), want); \
  } while (0)

static void expect_error(const char *body, const char *msg) {
  char text[4096];
  snprintf(text, sizeof text, "loom.ir 1\n%s", body);
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  if (!g) fail_msg("parse: %s", err.msg);
  assert_int_equal(ir_pass_shape_infer(g, &err), -1);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
  ir_graph_free(g);
}

/* Every op type the importer takes has a shape rule (and the table's
 * binary search finds each).  Constant becomes a constant tensor, and
 * Scatter and Upsample are renamed (ScatterElements, Resize) at import:
 * no node keeps those types. */
static void test_every_op_has_a_rule(void **state) {
  static const char *const renamed[] = {"Constant", "Scatter", "Upsample"};
  char missing[512] = "";
  for (int i = 0; i < onnx_schema_count; i++) {
    const char *op = onnx_schemas[i].op;
    int skip = 0;
    for (size_t k = 0; k < sizeof renamed / sizeof renamed[0]; k++) skip |= !strcmp(op, renamed[k]);
    if (skip || so_has_rule(op) || strstr(missing, op)) continue;
    strncat(missing, op, sizeof missing - strlen(missing) - 2);
    strcat(missing, " ");
  }
  if (missing[0]) fail_msg("no shape rule for %s", missing);
}

static void test_elementwise(void **state) {
  EXPECT("input %a : f32[2,1,4]\ninput %b : f32[3,1]\n%y = Sub@14(%a, %b)\n", "f32[2,3,4]");
  EXPECT("input %a : i64[2,3]\ninput %b : i64[3]\n%y = Greater@13(%a, %b)\n", "bool[2,3]");
  EXPECT("input %a : f32[5]\n%y = IsNaN@13(%a)\n", "bool[5]");
  EXPECT("input %a : f32[2,3]\n%y = Cast@13(%a) {to=7}\n", "i64[2,3]");
  EXPECT("input %a : f32[2,3]\ninput %l : f16[1]\n%y = CastLike@15(%a, %l)\n", "f16[2,3]");
  EXPECT("input %c : bool[3,1]\ninput %a : f32[1,4]\ninput %b : f32[3,4]\n%y = Where@16(%c, %a, %b)\n", "f32[3,4]");
  EXPECT("input %a : f32[2]\ninput %b : f32[3,1]\ninput %c : f32[1]\n%y = Max@13(%a, %b, %c)\n", "f32[3,2]");
  EXPECT("input %a : f32[7,8]\n%y = Size@13(%a)\n", "i64[]");
  expect_error("input %a : f32[2,3]\ninput %b : f32[4]\n%y = Div@14(%a, %b)\n",
               "t.ir: node 0 '%y' (Div): shapes do not broadcast (dim 3 vs 4)");
  expect_error("input %a : f32[2]\n%y = Cast@13(%a) {to=8}\n", "(Cast): cast to ONNX type 8 is not supported");
}

static void test_reductions(void **state) {
  EXPECT("input %x : f32[2,3,4]\n%y = ReduceMean@13(%x) {axes=[1]}\n", "f32[2,1,4]");
  EXPECT("input %x : f32[2,3,4]\n%y = ReduceMax@13(%x) {axes=[-1,0], keepdims=0}\n", "f32[3]");
  EXPECT("input %x : f32[2,3,4]\n%y = ReduceL2@13(%x) {keepdims=0}\n", "f32[]");
  EXPECT("input %x : f32[2,3,4]\nconst %a : i64[1] = [1]\n%y = ReduceSum@13(%x, %a) {keepdims=0}\n", "f32[2,4]");
  EXPECT("input %x : f32[2,3,4]\nconst %a : i64[0] = zeros\n%y = ReduceSum@13(%x, %a) {noop_with_empty_axes=1}\n",
         "f32[2,3,4]");
  EXPECT("input %x : f32[2,3,4]\ninput %a : i64[1]\n%y = ReduceSum@13(%x, %a)\n", "?[?]"); /* waits */
  EXPECT("input %x : f32[2,3,4]\n%y = ArgMax@13(%x) {axis=1, keepdims=0}\n", "i64[2,4]");
  expect_error("input %x : f32[2,3]\n%y = ReduceMin@13(%x) {axes=[2]}\n", "(ReduceMin): axis 2 is out of range for rank 2");
}

static void test_data_movement(void **state) {
  EXPECT("input %x : f32[5,10]\nconst %s : i64[2] = [1, -1]\nconst %e : i64[2] = [1000, -100]\n"
         "const %a : i64[2] = [0, 1]\nconst %p : i64[2] = [2, -3]\n%y = Slice@13(%x, %s, %e, %a, %p)\n",
         "f32[2,4]"); /* rows 1, 3; columns 9, 6, 3, 0 */
  EXPECT("input %x : f32[4,6]\nconst %s : i64[2] = [2, 4]\n%y, %z = Split@13(%x, %s) {axis=1}\n", "f32[4,2]");
  EXPECT("input %x : f32[4,6]\n%y, %z, %w = Split@13(%x) {axis=1}\n", "f32[4,2]");
  EXPECT("input %x : f32[1,3,4,4]\nconst %p : i64[8] = [0, 0, 1, 2, 0, 0, 3, 4]\n%y = Pad@13(%x, %p)\n",
         "f32[1,3,8,10]");
  EXPECT("input %x : f32[1,3,4,4]\n%y = Pad@2(%x) {pads=[0, 0, 1, 1, 0, 0, 1, 1]}\n", "f32[1,3,6,6]");
  EXPECT("input %x : f32[2,3]\nconst %r : i64[2] = [3, 2]\n%y = Tile@13(%x, %r)\n", "f32[6,6]");
  EXPECT("input %x : f32[3,1]\nconst %s : i64[3] = [2, 1, 6]\n%y = Expand@13(%x, %s)\n", "f32[2,3,6]");
  EXPECT("input %x : f32[3,4]\ninput %i : i64[2,4]\n%y = GatherElements@13(%x, %i)\n", "f32[2,4]");
  EXPECT("input %x : f32[2,3,4]\ninput %i : i64[2,1]\n%y = GatherND@13(%x, %i) {batch_dims=1}\n", "f32[2,4]");
  EXPECT("input %x : f32[1,8,2,3]\n%y = DepthToSpace@13(%x) {blocksize=2}\n", "f32[1,2,4,6]");
  EXPECT("input %x : f32[1,2,4,6]\n%y = SpaceToDepth@13(%x) {blocksize=2}\n", "f32[1,8,2,3]");
  EXPECT("input %x : f32[1,3,4,4]\nconst %s : f32[4] = [1.0, 1.0, 2.0, 1.5]\n%y = Resize@10(%x, %s)\n",
         "f32[1,3,8,6]");
  EXPECT("input %x : f32[1,3,4,4]\nconst %sz : i64[4] = [1, 3, 7, 9]\n%y = Resize@13(%x, _, _, %sz)\n",
         "f32[1,3,7,9]");
  EXPECT("input %x : f32[3,1]\ninput %a : i64[1]\n%y = Squeeze@13(%x, %a)\n", "?[?]"); /* waits */
  EXPECT("input %i : i64[2,3]\nconst %d : i64[] = [10]\ninput %v : f32[2]\n%y = OneHot@11(%i, %d, %v) {axis=1}\n",
         "f32[2,10,3]");
  EXPECT("input %x : f32[3,4]\n%y = EyeLike@9(%x) {dtype=7}\n", "i64[3,4]");
  EXPECT("const %s : i64[2] = [2, 5]\n%y = ConstantOfShape@9(%s)\n", "f32[2,5]");
  EXPECT("const %a : i32[] = [10]\nconst %b : i32[] = [1]\nconst %d : i32[] = [-3]\n%y = Range@11(%a, %b, %d)\n",
         "i32[3]");
  EXPECT("input %x : f32[3,7]\nconst %k : i64[1] = [2]\n%y, %i = TopK@11(%x, %k)\n", "f32[3,2]");
  expect_error("input %x : f32[3,7]\nconst %k : i64[1] = [9]\n%y, %i = TopK@11(%x, %k)\n", "K must be one value in [0, 7]");
  expect_error("input %x : f32[5]\nconst %s : i64[1] = [0]\nconst %e : i64[1] = [3]\nconst %a : i64[1] = [0]\n"
               "const %p : i64[1] = [0]\n%y = Slice@13(%x, %s, %e, %a, %p)\n", "(Slice): a step is 0");
}

static void test_data_dependent(void **state) {
  char b[128];
  int dyn = 0;
  assert_string_equal(infer("input %x : f32[2,3]\n%y = NonZero@13(%x)\n", b, sizeof b, &dyn), "i64[2,6]");
  assert_true(dyn);
  assert_string_equal(infer("input %x : f32[7]\n%y, %i, %v, %c = Unique@11(%x)\n", b, sizeof b, &dyn), "f32[7]");
  assert_true(dyn);
  assert_string_equal(infer("input %x : f32[4,2]\ninput %c : bool[4]\n%y = Compress@11(%x, %c) {axis=0}\n", b,
                            sizeof b, &dyn), "f32[4,2]");
  assert_true(dyn);
  assert_string_equal(infer("input %x : f32[4,2]\nconst %c : bool[3] = [1, 0, 1]\n%y = Compress@11(%x, %c) {axis=0}\n",
                            b, sizeof b, &dyn), "f32[2,2]");
  assert_false(dyn); /* a constant condition: the exact count */
  assert_string_equal(infer("input %b : f32[2,5,4]\ninput %s : f32[2,3,5]\nconst %m : i64[1] = [2]\n"
                            "%y = NonMaxSuppression@11(%b, %s, %m)\n", b, sizeof b, &dyn), "i64[12,3]");
  assert_true(dyn);
  /* a data-dependent result read by another node (dims fixed from the
   * capacity would be wrong), or measured by Shape: refused */
  static const char *const reads[] = {"%y = Transpose(%n) {perm=[1,0]}\n", "%y = Shape(%n)\n"};
  for (int i = 0; i < 2; i++) {
    char text[256];
    snprintf(text, sizeof text, "loom.ir 1\ninput %%x : f32[2,3]\n%%n = NonZero@13(%%x) \"nz\"\n%soutput %%y\n", reads[i]);
    struct ir_error err = {{0}};
    struct ir_graph *g = ir_parse(text, "t.ir", &err);
    assert_non_null(g);
    assert_int_equal(ir_run_default_passes(g, &err), -1);
    if (!strstr(err.msg, "node 1 '%y' (") || !strstr(err.msg, "operand %n is the data-dependent result of node 0 'nz' "
                                                                   "(NonZero): its size is known only at run time"))
      fail_msg("%s", err.msg);
    ir_graph_free(g);
  }
}

static void test_nn(void **state) {
  EXPECT("input %x : f32[1,2,3,3]\ninput %w : f32[2,4,3,3]\n%y = ConvTranspose@11(%x, %w) {strides=[2,2], pads=[1,1,1,1], "
         "output_padding=[1,1]}\n", "f32[1,4,6,6]");
  EXPECT("input %x : f32[1,2,3,3]\ninput %w : f32[2,3,3,3]\n%y = ConvTranspose@11(%x, %w) {group=2, output_shape=[10,8]}\n",
         "f32[1,6,10,8]");
  EXPECT("input %x : f32[1,2,5,5,5]\n%y, %i = MaxPool@12(%x) {kernel_shape=[2,2,2], strides=[2,2,2], ceil_mode=1}\n",
         "f32[1,2,3,3,3]");
  EXPECT("input %x : f32[1,2,6,6]\n%y = LpPool@11(%x) {kernel_shape=[3,3], p=2}\n", "f32[1,2,4,4]");
  EXPECT("input %x : f32[1,2,6,6,2]\n%y = GlobalMaxPool@1(%x)\n", "f32[1,2,1,1,1]");
  EXPECT("input %x : f32[2,3,4]\ninput %s : f32[4]\n%y, %m, %r = LayerNormalization@17(%x, %s) {axis=-1}\n",
         "f32[2,3,4]");
  EXPECT("input %a : f32[2,3]\ninput %b : f32[3,5]\n%y = Einsum@12(%a, %b) {equation=\"ij,jk->ik\"}\n", "f32[2,5]");
  EXPECT("input %a : f32[4,2,3]\ninput %b : f32[4,3,5]\n%y = Einsum@12(%a, %b) {equation=\"...ij, ...jk\"}\n",
         "f32[4,2,5]");
  EXPECT("input %a : f32[3,4]\n%y = Einsum@12(%a) {equation=\"ij->ji\"}\n", "f32[4,3]");
  EXPECT("input %a : f32[2,3,3]\n%y = Det@11(%a)\n", "f32[2]");
  EXPECT("input %x : f32[7,2,5]\ninput %w : f32[2,12,5]\ninput %r : f32[2,12,3]\n%y, %h, %c = LSTM@14(%x, %w, %r) "
         "{hidden_size=3, direction=\"bidirectional\"}\n", "f32[7,2,2,3]");
  EXPECT("input %x : f32[2,7,5]\ninput %w : f32[1,9,5]\ninput %r : f32[1,9,3]\n%y, %h = GRU@14(%x, %w, %r) "
         "{hidden_size=3, layout=1}\n", "f32[2,7,1,3]");
  EXPECT("input %x : f32[3,5,2]\ninput %t : i64[3,2]\n%y = NegativeLogLikelihoodLoss@13(%x, %t) {reduction=\"none\"}\n",
         "f32[3,2]");
  EXPECT("input %x : f32[3,5]\ninput %t : i64[3]\n%y, %l = SoftmaxCrossEntropyLoss@13(%x, %t)\n", "f32[]");
  EXPECT("input %x : f32[1,8,1]\nconst %n : i64[] = [8]\n%y = DFT@17(%x, %n) {onesided=1}\n", "f32[1,5,2]");
  EXPECT("input %x : f32[1,64,1]\nconst %s : i64[] = [8]\nconst %w : f32[16] = zeros\n%y = STFT@17(%x, %s, %w)\n",
         "f32[1,7,9,2]");
  EXPECT("const %n : i64[] = [10]\n%y = HannWindow@17(%n)\n", "f32[10]");
  EXPECT("const %b : i64[] = [8]\nconst %l : i64[] = [16]\nconst %r : i64[] = [8000]\nconst %lo : f32[] = [0.0]\n"
         "const %hi : f32[] = [4000.0]\n%y = MelWeightMatrix@17(%b, %l, %r, %lo, %hi)\n", "f32[9,8]");
  EXPECT("input %x : f32[1,3,8,8]\ninput %r : f32[4,4]\ninput %i : i64[4]\n%y = RoiAlign@16(%x, %r, %i) "
         "{output_height=2, output_width=3}\n", "f32[4,3,2,3]");
  EXPECT("input %x : f32[1,3,8,8]\ninput %g : f32[1,5,6,2]\n%y = GridSample@16(%x, %g)\n", "f32[1,3,5,6]");
  expect_error("input %a : f32[2,3]\ninput %b : f32[4,5]\n%y = Einsum@12(%a, %b) {equation=\"ij,jk->ik\"}\n",
               "subscript 'j' is 3 and 4");
}

/* Typed kinds in forms they do not cover become generic nodes. */
static void test_demotion(void **state) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse("loom.ir 1\ninput %x : f32[1,2,4,4,4]\nconst %w : f32[3,2,1,1,1] = zeros\n"
                                "%y = Conv(%x, %w)\ninput %d : f64[2,3]\nconst %e : f64[3,4] = zeros\n"
                                "%z = MatMul(%d, %e)\n", "t.ir", &err);
  assert_non_null(g);
  assert_int_equal(ir_pass_shape_infer(g, &err), 0);
  assert_int_equal(g->nodes[0].op, IR_OP_ONNX);
  assert_string_equal(g->nodes[0].type, "Conv");
  assert_int_equal(g->nodes[1].op, IR_OP_ONNX); /* float64: the host kernels' */
  assert_string_equal(ir_dtype_name(g->tensors[g->nodes[1].out[0]].dtype), "f64");
  ir_graph_free(g);
}

/* torch.chunk(x, 2, dim=1) as exported: Shape, Gather, Div, Slice with the
 * computed bounds.  The arithmetic folds into constants (through the host
 * kernels: Div is a generic op), so the Slices get their shapes before
 * placement.  Needs the kernels, which a build without them lacks. */
static void test_chunk_folds(void **state) {
  if (!loom_kernel_find("Div")) skip();
  static const char text[] =
      "loom.ir 1\ninput %x : f32[1,6,4]\n%s = Shape(%x)\nconst %i : i64[] = [1]\n%c = Gather(%s, %i)\n"
      "const %two : i64[] = [2]\n%h = Div@14(%c, %two)\nconst %z : i64[1] = [0]\nconst %ax : i64[1] = [1]\n"
      "%h1 = Unsqueeze(%h) {axes=[0]}\n%a = Slice@13(%x, %z, %h1, %ax)\n%e = Mul@14(%h1, %two)\n"
      "%b = Slice@13(%x, %h1, %e, %ax)\noutput %a\noutput %b\n";
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  assert_non_null(g);
  if (ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) {
      live++;
      assert_string_equal(ir_node_op(&g->nodes[i]), "Slice"); /* the arithmetic is gone */
      assert_non_null(g->tensors[g->nodes[i].in[2]].data);
    }
  assert_int_equal(live, 2);
  const struct ir_tensor *b = &g->tensors[ir_tensor_find(g, "b")];
  assert_int_equal(b->rank, 3);
  assert_int_equal(b->dims[1], 3);
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_has_a_rule), cmocka_unit_test(test_elementwise),
      cmocka_unit_test(test_reductions),          cmocka_unit_test(test_data_movement),
      cmocka_unit_test(test_data_dependent),      cmocka_unit_test(test_nn),
      cmocka_unit_test(test_demotion),           cmocka_unit_test(test_chunk_folds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
