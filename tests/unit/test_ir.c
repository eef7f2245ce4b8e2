/*
 * test_ir.c - the tensor IR: its tables, the text form round trip and its
 * parse errors, the builder and the verifier, all driven from IR text.
 * Shape inference, the passes and the reference interpreter:
 * test_ir_passes.c.
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

static void assert_roundtrip(const char *text) {
  struct ir_graph *g = parse_ok(text);
  char *out = ir_print_str(g, 0);
  assert_string_equal(out, text);
  free(out);
  ir_graph_free(g);
}

/* Parses `text` and expects the verifier to reject it with `msg`. */
static void assert_verify_error(const char *text, const char *msg) {
  struct ir_graph *g = parse_ok(text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_verify(g, &err), -1);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
  ir_graph_free(g);
}

static void assert_parse_error(const char *text, const char *msg) {
  struct ir_error err = {{0}};
  struct ir_graph *g = ir_parse(text, "t.ir", &err);
  assert_null(g);
  if (!strstr(err.msg, msg)) fail_msg("expected '%s' in '%s'", msg, err.msg);
}

/* ---- tables ---- */

static void test_tables_complete(void **state) {
  for (int i = 0; i < IR_OP_COUNT; i++) {
    assert_non_null(ir_op_name(i));
    assert_int_equal(ir_op_from_name(ir_op_name(i)), i == IR_OP_ONNX ? -1 : i); /* "onnx" names no op */
  }
  for (int i = 1; i < IR_DT_COUNT; i++) assert_int_equal(ir_dtype_from_loom(ir_dtype_to_loom(i)), i);
  for (int i = 1; i < IR_DT_COUNT; i++) assert_int_equal(ir_dtype_from_name(ir_dtype_name(i)), i);
  assert_int_equal(ir_op_from_name("Nope"), -1);
}

/* ---- text form ---- */

static const char *const conv_text =
    "loom.ir 1\n"
    "input  %x : f32[1,1,8,8]\n"
    "const  %w : f32[4,1,3,3] = seq\n"
    "const  %b : f32[4] = [0.5, -1.0, 2.0, 1e-07]\n"
    "%y : f32[1,4,8,8] = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1], group=1} \"conv1\"\n"
    "%z = Relu(%y)\n"
    "output %z\n";

static void test_roundtrip_conv(void **state) { assert_roundtrip(conv_text); }

static void test_roundtrip_everything(void **state) {
  assert_roundtrip(
      "loom.ir 1\n"
      "input  %x : u8[1,3,4,4] layout=NCHW quant(scale=0.5, zp=128)\n"
      "input  %\"onnx::weird name\" : i8[*]\n"
      "input  %u : ?[2,?]\n"
      "const  %w : i8[2,3,1,1] layout=NCHWc16 quant(axis=0, scale=[0.25, 0.125], zp=[0, 0]) = [1, -2, 3, -4, 5, -128]\n"
      "const  %z : i64[3] = zeros\n"
      "const  %h : f32[20] = hex \"0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f\"\n"
      "const  %one : f32[] = [1.0]\n"
      "%a : f32[*], %b = Gemm(%x, _, %w) {alpha=1.0, beta=-0.5, transB=1, l=[], f=[0.5,inf], s=\"a\\\"b\\x01\", t=%z}\n"
      "output %a\n"
      "output %\"onnx::weird name\"\n");
}

static void test_parse_lists_and_patterns(void **state) {
  struct ir_graph *g = parse_ok(
      "loom.ir 1  # header\n"
      "const %s : i64[2] = [1, -1]\n"
      "const %r : f32[3] = rand(7)\n"
      "const %e : f32[40] = ...\n"
      "const %q : i8[300] = seq\n");
  const struct ir_tensor *s = &g->tensors[ir_tensor_find(g, "s")];
  assert_int_equal(((int64_t *)s->data)[1], -1);
  const struct ir_tensor *r = &g->tensors[ir_tensor_find(g, "r")];
  for (int i = 0; i < 3; i++) assert_true(fabsf(((float *)r->data)[i]) <= 1.0f);
  assert_int_equal(((int8_t *)g->tensors[ir_tensor_find(g, "q")].data)[200], (int8_t)200);
  char *out = ir_print_str(g, IR_PRINT_ELIDE);
  assert_non_null(strstr(out, "const  %e : f32[40] = zeros\n"));
  assert_non_null(strstr(out, "const  %q : i8[300] = seq\n"));
  free(out);
  ir_graph_free(g);
}

static void test_parse_errors(void **state) {
  assert_parse_error("loom.ir 2\n", "t.ir: line 1: unsupported IR text version 2");
  assert_parse_error("input %x : f32[1]\n", "missing 'loom.ir 1' header");
  assert_parse_error("loom.ir 1\n%y = Relu(%x)\n", "t.ir: line 2: use of undefined %x");
  assert_parse_error("loom.ir 1\ninput %x : f32[1]\n%y = Frob(%x)\n", "line 3: unknown op 'Frob'");
  assert_parse_error("loom.ir 1\ninput %x : f32[1]\ninput %x : f32[1]\n", "redefinition of %x");
  assert_parse_error("loom.ir 1\nconst %c : i8[2] = [1, 300]\n", "300 does not fit i8");
  assert_parse_error("loom.ir 1\nconst %c : f32[3] = [1, 2]\n", "2 values for 3 elements");
  assert_parse_error("loom.ir 1\nconst %c : f32[1,1,1,1,1,1,1] = zeros\n", "rank above 6");
  assert_parse_error("loom.ir 1\nconst %c : f32[4294967296,4294967296] = zeros\n", "out of range");
  assert_parse_error("loom.ir 1\nconst %c : f32[65536,65536] = zeros\n", "at most 4 GiB");
  assert_parse_error("loom.ir 1\ninput %x : f32[1\n", "expected ',', found 'end of input'");
  assert_parse_error("loom.ir 1\ninput %x : f32[1] quant(scale=[1.0, 2.0], zp=[0, 0])\n", "without an axis");
  assert_parse_error("loom.ir 1\nconst %c : u8[1] = hex \"0g\"\n", "bad hex digit");
  assert_parse_error("loom.ir 1\ninput %x : f32[1]\n%y = Relu(%x) {a=1, a=2}\n", "duplicate attribute 'a'");
  assert_parse_error("loom.ir 1\ninput %x : f32[1]\n%y = Relu(%x) \"unterminated\n", "unterminated string");
}

/* ---- builder ---- */

static void test_builder(void **state) {
  struct ir_graph *g = ir_graph_new("built");
  int64_t d[4] = {1, 2, 3, 3};
  int x = ir_input_add(g, "x", IR_DT_F32, 4, d);
  int64_t wd[4] = {2, 2, 1, 1};
  int w = ir_const_add(g, "w", IR_DT_F32, 4, wd, NULL);
  int in[2] = {x, w};
  int y = ir_build(g, IR_OP_CONV, 2, in);
  ir_attr_set_int(g, g->n_nodes - 1, "group", 1);
  int r = ir_build(g, IR_OP_RELU, 1, &y);
  ir_output_add(g, r);
  struct ir_error err = {{0}};
  assert_int_equal(ir_verify(g, &err), 0);
  assert_int_equal(ir_input_add(g, "x", IR_DT_F32, 4, d), -1); /* name taken */
  char *out = ir_print_str(g, 0);
  assert_string_equal(out,
                      "loom.ir 1\n"
                      "input  %x : f32[1,2,3,3]\n"
                      "const  %w : f32[2,2,1,1] = zeros\n"
                      "%t2 = Conv(%x, %w) {group=1}\n"
                      "%t3 = Relu(%t2)\n"
                      "output %t3\n");
  free(out);
  ir_graph_free(g);
}

/* ---- verifier ---- */

static void test_verify_ok(void **state) {
  struct ir_graph *g = parse_ok(conv_text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_verify(g, &err), 0);
  ir_graph_free(g);
}

static void test_verify_errors(void **state) {
  assert_verify_error("loom.ir 1\ninput %x : f32[1]\n%y = Relu(%x, %x) \"r\"\n",
                      "t.ir: node 0 'r' (Relu): takes 1 operands, has 2");
  assert_verify_error("loom.ir 1\ninput %x : f32[1,1,4,4]\n%y = Conv(%x, _)\n",
                      "node 0 '%y' (Conv): operand 1 is required");
  assert_verify_error("loom.ir 1\ninput %x : f32[1,1,4,4]\nconst %w : f32[1,1,1,1] = zeros\n"
                      "%y = Conv(%x, %w) {foo=1}\n",
                      "(Conv): attribute 'foo' is not supported");
  assert_verify_error("loom.ir 1\ninput %x : f32[1,1,4,4]\nconst %w : f32[1,1,1,1] = zeros\n"
                      "%y = Conv(%x, %w) {group=1.5}\n",
                      "attribute 'group' must be int, not float");
  assert_verify_error("loom.ir 1\ninput %x : f32[1,4]\n%y = Concat(%x, %x)\n",
                      "required attribute 'axis' is missing");
  assert_verify_error("loom.ir 1\ninput %x : i8[1,1,4,4]\nconst %w : f32[1,1,1,1] = zeros\n"
                      "%y = Conv(%x, %w)\n",
                      "operand 0 %x has dtype i8");
  assert_verify_error("loom.ir 1\ninput %x : f32[4,4]\nconst %w : f32[1,1,1,1] = zeros\n"
                      "%y = Conv(%x, %w)\n",
                      "operand 0 %x has rank 2, needs 3 to 6");
  assert_verify_error("loom.ir 1\ninput %x : f32[4]\nconst %s : i32[1] = [4]\n%y = Reshape(%x, %s)\n",
                      "operand 1 %s has dtype i32");
}

/* Definition-before-use cannot be written in text (the parser resolves
 * names as it goes), so break a built graph instead. */
static void test_verify_use_before_def(void **state) {
  struct ir_graph *g = parse_ok("loom.ir 1\ninput %x : f32[4]\n%a = Relu(%x)\n%b = Relu(%a)\noutput %b\n");
  int a = ir_tensor_find(g, "a"), b = ir_tensor_find(g, "b");
  g->nodes[0].in[0] = b;
  struct ir_error err = {{0}};
  assert_int_equal(ir_verify(g, &err), -1);
  assert_string_equal(err.msg, "t.ir: node 0 '%a' (Relu): operand 0 %b is used before it is defined");
  g->nodes[0].in[0] = 0;
  g->nodes[1].out[0] = a;
  assert_int_equal(ir_verify(g, &err), -1);
  assert_string_equal(err.msg, "t.ir: node 1 '%a' (Relu): result %a is defined twice");
  ir_graph_free(g);
}


int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables_complete),
      cmocka_unit_test(test_roundtrip_conv),
      cmocka_unit_test(test_roundtrip_everything),
      cmocka_unit_test(test_parse_lists_and_patterns),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_builder),
      cmocka_unit_test(test_verify_ok),
      cmocka_unit_test(test_verify_errors),
      cmocka_unit_test(test_verify_use_before_def),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
