/*
 * test_onnx_versions.c - the importer across opsets 7 to 17: each op form
 * that changed between versions (an attribute that became an operand, a
 * renamed op, a changed default) imports into the one form the IR keeps,
 * and shape inference gives the ONNX result for it.
 *
 * Each case builds a one- or two-node model at the opset whose form it
 * checks, imports it, runs shape inference and compares the printed IR
 * (the node's type@version, operands and attributes, and the inferred
 * result) with the form docs/compiler.md records.  The compiled value of
 * generic nodes is the host kernels' business (the node suite checks it);
 * here only the form and the shapes are checked, so no kernel is needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnxbuild.h"
#include "sw_compiler/compiler.h"

/* The model imported and shape-inferred, printed. */
static char *imported(struct mb *b) {
  struct ir_graph *g = mb_import_ok(b);
  struct ir_error err = {{0}};
  if (ir_pass_shape_infer(g, &err)) fail_msg("shape inference: %s", err.msg);
  char *text = ir_print_str(g, IR_PRINT_ELIDE);
  ir_graph_free(g);
  mb_free(b);
  return text;
}

static void expect_in(char *text, const char *const *lines) {
  for (; *lines; lines++)
    if (!strstr(text, *lines)) fail_msg("'%s' not in:\n%s", *lines, text);
  free(text);
}
#define EXPECT(b, ...) expect_in(imported(b), (const char *const[]){__VA_ARGS__, NULL})

static const int64_t d23[2] = {2, 3}, d46[2] = {4, 6}, d1344[4] = {1, 3, 4, 4};

static Onnx__NodeProto *one_node(struct mb *b, int opset, const int64_t *dims, int rank, const char *op,
                                 const char *ins, const char *outs) {
  mb_init(b, opset);
  mb_input(b, "x", rank, dims);
  Onnx__NodeProto *n = mb_node(b, op, "n", ins, outs);
  char **o;
  size_t k = mb_names(b, outs, &o);
  for (size_t i = 0; i < k; i++) mb_output(b, o[i]);
  return n;
}

/* Slice-1's starts / ends / axes attributes are Slice-10's operands. */
static void test_slice_v1(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 9, d46, 2, "Slice", "x", "y");
  mb_attr_ints(&b, n, "starts", 2, (int64_t[]){1, -4});
  mb_attr_ints(&b, n, "ends", 2, (int64_t[]){3, 1000});
  mb_attr_ints(&b, n, "axes", 2, (int64_t[]){0, 1});
  EXPECT(&b, "const  %t2 : i64[2] = [1, -4]\nconst  %t3 : i64[2] = [3, 1000]\n",
         "%y : f32[2,4] = Slice@10(%x, %t2, %t3, %t4) \"n\"\n");
  /* without axes: the first len(starts) axes */
  n = one_node(&b, 7, d46, 2, "Slice", "x", "y");
  mb_attr_ints(&b, n, "starts", 1, (int64_t[]){1});
  mb_attr_ints(&b, n, "ends", 1, (int64_t[]){-1});
  EXPECT(&b, "%y : f32[2,6] = Slice@10(%x, %t2, %t3) \"n\"\n");
}

/* Split-2's split attribute is Split-13's operand; no split: equal parts. */
static void test_split(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 11, d46, 2, "Split", "x", "y,z");
  mb_attr_int(&b, n, "axis", -1);
  mb_attr_ints(&b, n, "split", 2, (int64_t[]){2, 4});
  EXPECT(&b, "const  %t3 : i64[2] = [2, 4]\n", "%y : f32[4,2], %z : f32[4,4] = Split@13(%x, %t3) {axis=-1} \"n\"\n");
  n = one_node(&b, 13, d46, 2, "Split", "x", "y,z,w");
  mb_attr_int(&b, n, "axis", 1);
  EXPECT(&b, "%y : f32[4,2], %z : f32[4,2], %w : f32[4,2] = Split@13(%x) {axis=1} \"n\"\n");
}

/* ReduceSum's axes became an operand at 13; the other reductions keep the
 * attribute through 17. */
static void test_reduce_axes(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 11, d46, 2, "ReduceSum", "x", "y");
  mb_attr_ints(&b, n, "axes", 1, (int64_t[]){-1});
  n = mb_node(&b, "ReduceMean", "m", "x", "z");
  mb_attr_ints(&b, n, "axes", 1, (int64_t[]){0});
  mb_attr_int(&b, n, "keepdims", 0);
  mb_output(&b, "z");
  EXPECT(&b, "const  %t2 : i64[1] = [-1]\n%y : f32[4,1] = ReduceSum@13(%x, %t2) \"n\"\n",
         "%z : f32[6] = ReduceMean@11(%x) {axes=[0], keepdims=0} \"m\"\n");
  /* an attribute and the operand both: refused */
  n = one_node(&b, 11, d46, 2, "ReduceSum", "x", "y");
  mb_attr_ints(&b, n, "axes", 1, (int64_t[]){0});
  mb_init_i64(&b, "a", 1, 1, (int64_t[]){0});
  n->n_input = mb_names(&b, "x,a", &n->input);
  mb_import_fails(&b, "model.onnx: node 0 'n' (ReduceSum): has 2 inputs, takes 1");
  mb_free(&b);
}

/* TopK-1's k attribute is TopK-10's K operand. */
static void test_topk_v1(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 9, d46, 2, "TopK", "x", "v,i");
  mb_attr_int(&b, n, "k", 3);
  EXPECT(&b, "const  %t3 : i64[1] = [3]\n", "%v : f32[4,3], %i : i64[4,3] = TopK@10(%x, %t3) \"n\"\n");
}

/* Upsample-7 (scales attribute) and Upsample-9 (scales operand) are
 * Resize-10; Scatter is ScatterElements-11. */
static void test_renamed_ops(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 7, d1344, 4, "Upsample", "x", "y");
  Onnx__AttributeProto *a = mb_attr(&b, n, "scales", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = 4;
  a->floats = mb_alloc(&b, 16);
  memcpy(a->floats, (float[]){1, 1, 2, 3}, 16);
  EXPECT(&b, "const  %t2 : f32[4] = [1.0, 1.0, 2.0, 3.0]\n%y : f32[1,3,8,12] = Resize@10(%x, %t2) \"n\"\n");
  n = one_node(&b, 9, d1344, 4, "Upsample", "x,s", "y");
  mb_init_f32(&b, "s", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2}, 0);
  mb_attr_string(&b, n, "mode", "linear");
  EXPECT(&b, "%y : f32[1,3,8,8] = Resize@10(%x, %s) {mode=\"linear\"} \"n\"\n");
  one_node(&b, 9, d23, 2, "Scatter", "x,i,u", "y");
  b.inputs[b.n_inputs++] = mb_value(&b, "i", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 2, (int64_t[]){1, 3});
  mb_input(&b, "u", 2, (int64_t[]){1, 3});
  EXPECT(&b, "input  %i : i64[1,3]\n", "%y : f32[2,3] = ScatterElements@11(%x, %i, %u) \"n\"\n");
}

/* Dropout in inference is the identity (any version); asking for its mask
 * keeps the op, which the kernel runs. */
static void test_dropout(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 7, d23, 2, "Dropout", "x", "y");
  mb_attr_float(&b, n, "ratio", 0.3f);
  EXPECT(&b, "%y : f32[2,3] = Identity(%x) \"n\"\n");
  one_node(&b, 12, d23, 2, "Dropout", "x,r,t", "y");
  mb_init_f32(&b, "r", 0, NULL, (float[]){0.5f}, 0);
  Onnx__TensorProto *t = mb_tensor(&b, "t", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
  t->n_int32_data = 1;
  t->int32_data = mb_alloc(&b, 4);
  b.inits[b.n_inits++] = t; /* training_mode = false */
  EXPECT(&b, "%y : f32[2,3] = Identity(%x) \"n\"\n");
  one_node(&b, 13, d23, 2, "Dropout", "x", "y,m");
  EXPECT(&b, "%y : f32[2,3], %m : bool[2,3] = Dropout@13(%x) \"n\"\n");
}

/* BatchNormalization-7's spatial = 1 is the typed kind's only form;
 * spatial = 0 stays a generic node. */
static void test_batchnorm_spatial(void **state) {
  struct mb b;
  for (int sp = 0; sp < 2; sp++) {
    Onnx__NodeProto *n = one_node(&b, 7, d1344, 4, "BatchNormalization", "x,s,m,b,v", "y");
    for (int k = 0; k < 4; k++) mb_init_f32(&b, (const char[]){"smbv"[k], 0}, 1, (int64_t[]){3}, (float[]){1, 2, 3}, 0);
    mb_attr_int(&b, n, "spatial", sp);
    EXPECT(&b, sp ? "%y : f32[1,3,4,4] = BatchNormalization(%x, %s, %m, %b, %v) \"n\"\n"
                  : "%y : f32[1,3,4,4] = BatchNormalization@7(%x, %s, %m, %b, %v) {spatial=0} \"n\"\n");
  }
}

/* Clip-6's min / max attributes are Clip-11's scalar operands. */
static void test_clip_v6(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 10, d23, 2, "Clip", "x", "y");
  mb_attr_float(&b, n, "min", -1);
  mb_attr_float(&b, n, "max", 6);
  EXPECT(&b, "const  %t2 : f32[] = [-1.0]\nconst  %t3 : f32[] = [6.0]\n%y : f32[2,3] = Clip(%x, %t2, %t3) \"n\"\n");
  n = one_node(&b, 10, d23, 2, "Clip", "x", "y");
  mb_attr_float(&b, n, "max", 6); /* min defaults to the lowest float */
  EXPECT(&b, "%y : f32[2,3] = Clip(%x, _, %t2) \"n\"\n");
}

/* Squeeze-13's constant axes operand is the attribute of Squeeze-1/11;
 * Softmax before 13 coerces to 2-D at axis 1 (legacy_2d), from 13 on it is
 * one axis (default -1). */
static void test_axes_and_softmax(void **state) {
  struct mb b;
  one_node(&b, 13, (int64_t[]){2, 1, 3}, 3, "Squeeze", "x,ax", "y");
  mb_init_i64(&b, "ax", 1, 1, (int64_t[]){-2});
  EXPECT(&b, "%y : f32[2,3] = Squeeze(%x) {axes=[-2]} \"n\"\n");
  one_node(&b, 13, d23, 2, "Unsqueeze", "x,ax", "y");
  mb_init_i64(&b, "ax", 1, 2, (int64_t[]){0, -1});
  EXPECT(&b, "%y : f32[1,2,3,1] = Unsqueeze(%x) {axes=[0,-1]} \"n\"\n");
  one_node(&b, 11, (int64_t[]){2, 3, 4}, 3, "Softmax", "x", "y");
  EXPECT(&b, "%y : f32[2,3,4] = Softmax(%x) {axis=1, legacy_2d=1} \"n\"\n");
  one_node(&b, 13, (int64_t[]){2, 3, 4}, 3, "Softmax", "x", "y");
  EXPECT(&b, "%y : f32[2,3,4] = Softmax(%x) \"n\"\n");
}

/* Pad-2 keeps its attributes (its value takes the data's type); Gather
 * and Concat take negative axes. */
static void test_pad_v2_and_negative_axes(void **state) {
  struct mb b;
  Onnx__NodeProto *n = one_node(&b, 10, d23, 2, "Pad", "x", "y");
  mb_attr_ints(&b, n, "pads", 4, (int64_t[]){1, 0, 2, 1});
  mb_attr_float(&b, n, "value", 1.5f);
  EXPECT(&b, "%y : f32[5,4] = Pad@10(%x) {pads=[1,0,2,1], value=1.5} \"n\"\n");
  n = one_node(&b, 13, d23, 2, "Gather", "x,i", "y");
  mb_init_i64(&b, "i", 1, 2, (int64_t[]){2, -1});
  mb_attr_int(&b, n, "axis", -1);
  n = mb_node(&b, "Concat", "c", "x,y", "z");
  mb_attr_int(&b, n, "axis", -1);
  mb_output(&b, "z");
  EXPECT(&b, "%y : f32[2,2] = Gather(%x, %i) {axis=-1} \"n\"\n", "%z : f32[2,5] = Concat(%x, %y) {axis=-1} \"c\"\n");
}

/* Bad input names the node, the op and what is not supported. */
static void test_refusals(void **state) {
  struct mb b;
  one_node(&b, 13, d23, 2, "If", "x", "y");
  mb_import_fails(&b, "model.onnx: node 0 'n' (If): op 'If' is not supported: control flow (If, Loop, Scan) is not supported");
  mb_free(&b);
  one_node(&b, 17, d23, 2, "LayerNormalization", "x", "y");
  b.opset.version = 16;
  mb_import_fails(&b, "model.onnx: node 0 'n' (LayerNormalization): op 'LayerNormalization' does not exist at opset 16");
  mb_free(&b);
  Onnx__NodeProto *n = one_node(&b, 9, d46, 2, "Slice", "x,s", "y");
  mb_init_i64(&b, "s", 1, 1, (int64_t[]){0});
  mb_attr_ints(&b, n, "starts", 1, (int64_t[]){1});
  mb_attr_ints(&b, n, "ends", 1, (int64_t[]){2});
  mb_import_fails(&b, "model.onnx: node 0 'n' (Slice): has 2 inputs, takes 1");
  mb_free(&b);
  n = one_node(&b, 13, d23, 2, "Relu", "x", "y");
  b.inputs[0] = mb_value(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64, 2, d23);
  mb_import_fails(&b, "'x' has data type 14 (complex), which is not supported");
  mb_free(&b);
  n = one_node(&b, 13, d1344, 4, "Resize", "x,,s", "y");
  mb_init_f32(&b, "s", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2}, 0);
  Onnx__AttributeProto *a = mb_attr(&b, n, "mode", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  (void)a;
  mb_import_fails(&b, "model.onnx: node 0 'n' (Resize): attribute 'mode' is a graph, which is not supported");
  mb_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slice_v1),       cmocka_unit_test(test_split),
      cmocka_unit_test(test_reduce_axes),    cmocka_unit_test(test_topk_v1),
      cmocka_unit_test(test_renamed_ops),    cmocka_unit_test(test_dropout),
      cmocka_unit_test(test_batchnorm_spatial), cmocka_unit_test(test_clip_v6),
      cmocka_unit_test(test_axes_and_softmax), cmocka_unit_test(test_pad_v2_and_negative_axes),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
