/*
 * test_onnx_import.c - ONNX import, built from models packed in C.
 *
 * Each test builds a small ModelProto with the protoc-c generated structs
 * and packs it with protobuf_c_message_pack, so no Python or fixture file
 * is needed.  The imported graphs then go through the default passes and
 * the reference interpreter; malformed models (truncated, mutated,
 * unsupported, absurd sizes) must be refused with the expected message and
 * never crash (run under `make SAN=1` for the memory checks).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "onnxbuild.h"
#include "sw_compiler/compiler.h"

static void fill(float *v, int n, float scale, int seed) {
  for (int i = 0; i < n; i++) v[i] = scale * sinf((float)(i * 7 + seed * 13) * 0.37f);
}

/* ---- a small torch-style CNN ---- */

/* x[1,2,6,6] -> Conv(3x3, pad 1) -> BN -> Relu -> MaxPool 2 -> Shape/Gather/
 * Unsqueeze/Concat/Reshape (flatten) -> Gemm -> Softmax. */
static void build_cnn(struct mb *b, int opset) {
  mb_init(b, opset);
  static float w[4 * 2 * 9], bias[4], gamma[4], beta[4], mean[4], var[4], fw[10 * 36], fb[10];
  fill(w, 72, 0.5f, 1), fill(bias, 4, 0.1f, 2), fill(gamma, 4, 1.0f, 3), fill(beta, 4, 0.3f, 4);
  fill(mean, 4, 0.2f, 5), fill(fw, 360, 0.2f, 6), fill(fb, 10, 0.1f, 7);
  for (int i = 0; i < 4; i++) var[i] = 0.5f + (float)i;
  int64_t x[4] = {1, 2, 6, 6}, wd[4] = {4, 2, 3, 3}, c4 = 4, fwd[2] = {10, 36}, c10 = 10;
  mb_input(b, "input", 4, x);
  mb_init_f32(b, "conv.weight", 4, wd, w, 1);
  mb_init_f32(b, "conv.bias", 1, &c4, bias, 0);
  mb_init_f32(b, "bn.weight", 1, &c4, gamma, 1);
  mb_init_f32(b, "bn.bias", 1, &c4, beta, 1);
  mb_init_f32(b, "bn.running_mean", 1, &c4, mean, 1);
  mb_init_f32(b, "bn.running_var", 1, &c4, var, 0);
  mb_init_f32(b, "fc.weight", 2, fwd, fw, 1);
  mb_init_f32(b, "fc.bias", 1, &c10, fb, 1);
  Onnx__NodeProto *n = mb_node(b, "Conv", "Conv_0", "input,conv.weight,conv.bias", "c");
  mb_attr_ints(b, n, "kernel_shape", 2, (int64_t[]){3, 3});
  mb_attr_ints(b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_attr_ints(b, n, "strides", 2, (int64_t[]){1, 1});
  n = mb_node(b, "BatchNormalization", "BatchNormalization_1", "c,bn.weight,bn.bias,bn.running_mean,bn.running_var", "bn");
  mb_attr_float(b, n, "epsilon", 1e-5f);
  mb_attr_float(b, n, "momentum", 0.9f);
  mb_node(b, "Relu", "Relu_2", "bn", "onnx::MaxPool_5");
  n = mb_node(b, "MaxPool", "MaxPool_3", "onnx::MaxPool_5", "p");
  mb_attr_ints(b, n, "kernel_shape", 2, (int64_t[]){2, 2});
  mb_attr_ints(b, n, "strides", 2, (int64_t[]){2, 2});
  mb_node(b, "Shape", "Shape_4", "p", "shape");
  n = mb_node(b, "Constant", "Constant_5", "", "zero");
  Onnx__AttributeProto *a = mb_attr(b, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = mb_tensor(b, "", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0, NULL);
  a->t->n_int64_data = 1;
  a->t->int64_data = mb_alloc(b, 8);
  n = mb_node(b, "Gather", "Gather_6", "shape,zero", "batch");
  mb_attr_int(b, n, "axis", 0);
  if (opset >= 13) {
    mb_init_i64(b, "axes0", 1, 1, (int64_t[]){0});
    mb_node(b, "Unsqueeze", "Unsqueeze_7", "batch,axes0", "batch1");
  } else {
    n = mb_node(b, "Unsqueeze", "Unsqueeze_7", "batch", "batch1");
    mb_attr_ints(b, n, "axes", 1, (int64_t[]){0});
  }
  n = mb_node(b, "Constant", "Constant_8", "", "minus1");
  mb_attr(b, n, "value_ints", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  n->attribute[0]->n_ints = 1;
  n->attribute[0]->ints = mb_alloc(b, 8);
  n->attribute[0]->ints[0] = -1;
  n = mb_node(b, "Concat", "Concat_9", "batch1,minus1", "newshape");
  mb_attr_int(b, n, "axis", 0);
  mb_node(b, "Reshape", "Reshape_10", "p,newshape", "flat");
  n = mb_node(b, "Gemm", "Gemm_11", "flat,fc.weight,fc.bias", "logits");
  mb_attr_float(b, n, "alpha", 1.0f);
  mb_attr_float(b, n, "beta", 1.0f);
  mb_attr_int(b, n, "transB", 1);
  n = mb_node(b, "Softmax", "Softmax_12", "logits", "prob");
  mb_attr_int(b, n, "axis", 1);
  mb_output(b, "prob");
}

/* Shape inference and folding only (no BN folding): the reference. */
static void fold_only(struct ir_graph *g) {
  struct ir_error err = {{0}};
  int changed = 1;
  while (changed)
    if (ir_pass_shape_infer(g, &err) || ir_pass_const_fold(g, &changed, &err)) fail_msg("%s", err.msg);
}

static float *run(struct ir_graph *g, const float *x) {
  struct ir_error err = {{0}};
  void *out[1];
  const void *in[1] = {x};
  if (ir_eval_ref(g, in, out, &err)) fail_msg("%s", err.msg);
  return out[0];
}

static void check_cnn(int opset) {
  struct mb b;
  build_cnn(&b, opset);
  struct ir_graph *ref = mb_import_ok(&b), *g = mb_import_ok(&b);
  mb_free(&b);
  struct ir_error err = {{0}};
  fold_only(ref);
  if (ir_run_default_passes(g, &err)) fail_msg("%s", err.msg);
  char *text = ir_print_str(g, IR_PRINT_ELIDE);
  /* BN folded into the conv, the shape chain folded into one constant */
  assert_null(strstr(text, "BatchNormalization"));
  assert_null(strstr(text, "Shape("));
  assert_null(strstr(text, "Gather"));
  assert_non_null(strstr(text, "const  %newshape : i64[2] = [1, -1]\n"));
  assert_non_null(strstr(text, "%flat : f32[1,36] = Reshape(%p, %newshape) \"Reshape_10\"\n"));
  assert_non_null(strstr(text, "%prob : f32[1,10] = Softmax(%logits) {axis=1} \"Softmax_12\"\n"));
  free(text);
  /* the canonical text of an imported graph reads back to the same text */
  text = ir_print_str(g, 0);
  struct ir_graph *back = ir_parse(text, "cnn.ir", &err);
  if (!back) fail_msg("%s", err.msg);
  char *again = ir_print_str(back, 0);
  assert_string_equal(again, text);
  assert_non_null(strstr(text, "%\"onnx::MaxPool_5\" : f32[1,4,6,6] = Relu("));
  free(again);
  free(text);
  ir_graph_free(back);
  float x[72];
  fill(x, 72, 1.0f, 9);
  float *want = run(ref, x), *got = run(g, x), sum = 0;
  for (int i = 0; i < 10; i++) {
    assert_float_equal(got[i], want[i], 1e-5);
    sum += got[i];
  }
  assert_float_equal(sum, 1.0, 1e-5);
  free(want);
  free(got);
  ir_graph_free(ref);
  ir_graph_free(g);
}

static void test_cnn_opset13(void **state) { check_cnn(13); }
static void test_cnn_opset11(void **state) { check_cnn(11); }
static void test_cnn_opset17(void **state) { check_cnn(17); }

/* ---- op forms that differ between opsets ---- */

static void test_opset_forms(void **state) {
  struct mb b;
  mb_init(&b, 11);
  int64_t x[2] = {2, 3}, one = 1;
  mb_input(&b, "x", 2, x);
  mb_init_f32(&b, "lo", 0, NULL, (float[]){-0.5f}, 0);
  mb_init_f32(&b, "w", 1, &one, (float[]){2.0f}, 0);
  mb_node(&b, "Clip", "clip", "x,lo", "c");               /* max absent */
  Onnx__NodeProto *n = mb_node(&b, "Softmax", "sm", "c", "s"); /* opset 11: axis 1, 2-D */
  (void)n;
  n = mb_node(&b, "Squeeze", "sq", "s", "q");             /* squeeze all (none) */
  mb_node(&b, "Mul", "mul", "q,w", "y");
  mb_output(&b, "y");
  struct ir_graph *g = mb_import_ok(&b);
  mb_free(&b);
  char *text = ir_print_str(g, 0);
  assert_non_null(strstr(text, "%c = Clip(%x, %lo) \"clip\"\n"));
  assert_non_null(strstr(text, "%s = Softmax(%c) {axis=1, legacy_2d=1} \"sm\"\n"));
  free(text);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  text = ir_print_str(g, 0);
  assert_non_null(strstr(text, "%s : f32[2,3] = Softmax(%c) {axis=1} \"sm\"\n")); /* last axis */
  free(text);
  float in[6] = {-1, 0, 1, 2, 3, 4};
  float *y = run(g, in);
  float e0 = expf(-0.5f), e1 = 1, e2 = expf(1);
  assert_float_equal(y[0], 2 * e0 / (e0 + e1 + e2), 1e-6);
  free(y);
  ir_graph_free(g);
}

static void test_auto_pad_and_value_info(void **state) {
  struct mb b;
  mb_init(&b, 12);
  int64_t x[4] = {1, 1, 5, 5}, wd[4] = {2, 1, 3, 3}, yd[4] = {1, 2, 3, 3};
  float w[18];
  fill(w, 18, 1, 3);
  mb_input(&b, "x", 4, x);
  mb_init_f32(&b, "w", 4, wd, w, 1);
  Onnx__NodeProto *n = mb_node(&b, "Conv", "conv", "x,w", "y");
  mb_attr_string(&b, n, "auto_pad", "SAME_LOWER");
  mb_attr_ints(&b, n, "strides", 2, (int64_t[]){2, 2});
  b.infos[b.n_infos++] = mb_value(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 4, yd);
  mb_output(&b, "y");
  struct ir_graph *g = mb_import_ok(&b);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  char *text = ir_print_str(g, IR_PRINT_ELIDE);
  assert_non_null(strstr(text, "%y : f32[1,2,3,3] = Conv(%x, %w) {strides=[2,2], kernel_shape=[3,3], pads=[1,1,1,1]} \"conv\"\n"));
  free(text);
  ir_graph_free(g);
  /* a value_info that disagrees with inference is reported */
  b.infos[0] = mb_value(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 4, (int64_t[]){1, 2, 4, 4});
  g = mb_import_ok(&b);
  assert_int_equal(ir_run_default_passes(g, &err), -1);
  assert_string_equal(err.msg, "model.onnx: node 0 'conv' (Conv): result %y is f32[1,2,3,3], but declared as f32[1,2,4,4]");
  ir_graph_free(g);
  mb_free(&b);
}

static void test_quantized_ops(void **state) {
  struct mb b;
  mb_init(&b, 13);
  int64_t x[2] = {1, 4};
  mb_input(&b, "x", 2, x);
  mb_init_f32(&b, "s", 0, NULL, (float[]){0.5f}, 0);
  Onnx__TensorProto *zp = mb_tensor(&b, "zp", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
  zp->n_int32_data = 1;
  zp->int32_data = mb_alloc(&b, 4);
  zp->int32_data[0] = 128;
  b.inits[b.n_inits++] = zp;
  mb_node(&b, "QuantizeLinear", "q", "x,s,zp", "xq");
  mb_node(&b, "DequantizeLinear", "dq", "xq,s,zp", "y");
  mb_output(&b, "y");
  struct ir_graph *g = mb_import_ok(&b);
  mb_free(&b);
  struct ir_error err = {{0}};
  assert_int_equal(ir_run_default_passes(g, &err), 0);
  char *text = ir_print_str(g, 0);
  assert_non_null(strstr(text, "%xq : u8[1,4] = QuantizeLinear(%x, %s, %zp) \"q\"\n"));
  free(text);
  float in[4] = {0.25f, 0.75f, -100.0f, 1.0f};
  float *y = run(g, in);
  float want[4] = {0.0f, 1.0f, -64.0f, 1.0f}; /* 0.5 -> 0, 1.5 -> 2 (even), saturates at 0 */
  for (int i = 0; i < 4; i++) assert_float_equal(y[i], want[i], 0);
  free(y);
  ir_graph_free(g);
}

/* ---- refusals ---- */

static void simple_model(struct mb *b, int opset) {
  mb_init(b, opset);
  int64_t x[2] = {1, 4};
  mb_input(b, "x", 2, x);
  mb_node(b, "Relu", "Relu_0", "x", "y");
  mb_output(b, "y");
}

static void test_bad_opset(void **state) {
  struct mb b;
  simple_model(&b, 0);
  mb_import_fails(&b, "model.onnx: opset 0 is not supported (supported: 7 to 17)");
  b.opset.version = 18;
  mb_import_fails(&b, "opset 18 is not supported");
  b.opset.domain = "ai.onnx.ml";
  mb_import_fails(&b, "model.onnx: the model imports no default-domain opset");
  mb_free(&b);
}

static void test_unsupported_op_and_attr(void **state) {
  struct mb b;
  simple_model(&b, 13);
  mb_node(&b, "Frobnicate", "f_1", "y", "z");
  mb_import_fails(&b, "model.onnx: node 1 'f_1' (Frobnicate): op 'Frobnicate' is not supported");
  mb_free(&b);
  simple_model(&b, 13);
  mb_node(&b, "Loop", "loop_1", "y", "z");
  mb_import_fails(&b, "model.onnx: node 1 'loop_1' (Loop): op 'Loop' is not supported: control flow (If, Loop, Scan) is not supported");
  mb_free(&b);
  simple_model(&b, 13);
  mb_node(&b, "RandomUniformLike", "r_1", "y", "z");
  mb_import_fails(&b, "(RandomUniformLike): op 'RandomUniformLike' is not supported: random generators are not supported");
  mb_free(&b);
  simple_model(&b, 13);
  mb_node(&b, "SequenceEmpty", "s_1", "", "z");
  mb_import_fails(&b, "(SequenceEmpty): op 'SequenceEmpty' is not supported: sequence and optional types are not supported");
  mb_free(&b);
  simple_model(&b, 13);
  mb_node(&b, "LSTM", "lstm_1", "y", "z");
  mb_import_fails(&b, "model.onnx: node 1 'lstm_1' (LSTM): has 1 inputs, takes 3 to 8");
  mb_free(&b);
  simple_model(&b, 9);
  mb_node(&b, "HardSwish", "hs_1", "y", "z");
  mb_import_fails(&b, "(HardSwish): op 'HardSwish' does not exist at opset 9");
  mb_free(&b);
  simple_model(&b, 6); /* Relu means at opset 6 what it means at 7: imports */
  mb_node(&b, "Add", "add_1", "y,y", "z");
  mb_import_fails(&b, "(Add): op 'Add' at opset 6 (version 6) is older than Loom supports (opsets 7 to 17)");
  mb_free(&b);

  mb_init(&b, 13);
  int64_t x[4] = {1, 1, 4, 4}, wd[4] = {1, 1, 1, 1};
  mb_input(&b, "x", 4, x);
  mb_init_f32(&b, "w", 4, wd, (float[]){1}, 1);
  mb_node(&b, "Relu", "Relu_0", "x", "r");
  Onnx__NodeProto *n = mb_node(&b, "Conv", "Conv_7", "r,w", "y");
  mb_attr_int(&b, n, "foo", 1);
  mb_output(&b, "y");
  mb_import_fails(&b, "model.onnx: node 1 'Conv_7' (Conv): attribute 'foo' is not supported");
  n->attribute[0]->name = "group";
  n->attribute[0]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  mb_import_fails(&b, "node 1 'Conv_7' (Conv): attribute 'group' is float, expected int");
  n->attribute[0]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  n->domain = "com.microsoft";
  mb_import_fails(&b, "node 1 'Conv_7' (Conv): op 'com.microsoft.Conv' is not supported");
  n->domain = "";
  n->input[0] = "nope";
  mb_import_fails(&b, "node 1 'Conv_7' (Conv): input 'nope' is not defined before use");
  n->input[0] = "r";
  n->n_output = 2;
  n->output[1] = "extra";
  mb_import_fails(&b, "node 1 'Conv_7' (Conv): has 2 outputs, takes 1 to 1");
  n->n_output = 1;
  n->n_input = 1;
  mb_import_fails(&b, "node 1 'Conv_7' (Conv): has 1 inputs, takes 2 to 3");
  mb_free(&b);

  simple_model(&b, 13);
  n = mb_node(&b, "Concat", "cat", "y,y", "z");
  mb_import_fails(&b, "node 1 'cat' (Concat): required attribute 'axis' is missing");
  mb_free(&b);
}

static void test_absurd_sizes(void **state) {
  struct mb b;
  simple_model(&b, 13);
  Onnx__TensorProto *t = mb_tensor(&b, "big", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, (int64_t[]){INT64_C(1) << 40});
  b.inits[b.n_inits++] = t;
  mb_import_fails(&b, "model.onnx: tensor 'big' has dim 0 of 1099511627776, outside [0, 2147483648]");
  t->n_dims = 3;
  t->dims = (int64_t[]){INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31};
  mb_import_fails(&b, "tensor 'big' has too many elements");
  t->n_dims = 7;
  t->dims = (int64_t[]){1, 1, 1, 1, 1, 1, 1};
  mb_import_fails(&b, "tensor 'big' has rank 7, above the limit of 6");
  t->n_dims = 1;
  t->dims = (int64_t[]){-3};
  mb_import_fails(&b, "tensor 'big' has dim 0 of -3");
  t->dims = (int64_t[]){4};
  t->has_raw_data = 1;
  t->raw_data.len = 15;
  t->raw_data.data = mb_alloc(&b, 16);
  mb_import_fails(&b, "tensor 'big': raw_data has 15 bytes, its shape needs 16");
  t->has_raw_data = 0;
  t->n_float_data = 3;
  t->float_data = mb_alloc(&b, 16);
  mb_import_fails(&b, "tensor 'big' holds 3 values, its shape needs 4");
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64;
  mb_import_fails(&b, "tensor 'big': data type 14 (complex) is not supported");
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
  mb_import_fails(&b, "tensor 'big': data type 8 (string) is not supported");
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  mb_import_fails(&b, "tensor 'big': external data is not supported");
  mb_free(&b);

  mb_init(&b, 13);
  mb_input(&b, "x", 7, (int64_t[]){1, 1, 1, 1, 1, 1, 1});
  mb_output(&b, "x");
  mb_import_fails(&b, "model.onnx: 'x' has rank 7, above the limit of 6");
  mb_free(&b);
}

static void test_truncated_and_garbage(void **state) {
  struct mb b;
  build_cnn(&b, 13);
  size_t len;
  uint8_t *buf = mb_pack(&b, &len);
  mb_free(&b);
  struct ir_error err = {{0}};
  int refused = 0;
  /* Every prefix: either refused with a message, or (for prefixes that end
   * on a field boundary) a graph that verifies. */
  for (size_t cut = 0; cut < len; cut += 1) {
    struct ir_graph *g = onnx_import_buffer(buf, cut, "model.onnx", &err);
    if (!g) {
      refused++;
      assert_true(strncmp(err.msg, "model.onnx: ", 12) == 0);
    }
    ir_graph_free(g);
  }
  assert_true(refused > 0);
  struct ir_graph *g = onnx_import_buffer(buf, len / 2, "model.onnx", &err);
  assert_null(g);
  assert_string_equal(err.msg, "model.onnx: not a valid ONNX model (protobuf decoding failed; truncated or corrupt?)");
  uint8_t garbage[64];
  for (int i = 0; i < 64; i++) garbage[i] = (uint8_t)(i * 37 + 11);
  assert_null(onnx_import_buffer(garbage, sizeof garbage, "model.onnx", &err));
  free(buf);
}

/* Random byte mutations of a valid model: import, then the passes and the
 * interpreter on whatever imports; nothing may crash or leak. */
static void test_mutations_do_not_crash(void **state) {
  struct mb b;
  build_cnn(&b, 13);
  size_t len;
  uint8_t *orig = mb_pack(&b, &len), *buf = malloc(len);
  mb_free(&b);
  uint64_t s = 12345;
  int imported = 0;
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(buf, orig, len);
    for (int k = 0; k < 1 + iter % 4; k++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      buf[(s >> 33) % len] = (uint8_t)(s >> 17);
    }
    struct ir_error err = {{0}};
    struct ir_graph *g = onnx_import_buffer(buf, len, "m.onnx", &err);
    if (!g) continue;
    imported++;
    if (!ir_run_default_passes(g, &err) && g->n_inputs == 1 && g->n_outputs == 1 &&
        ir_tensor_numel(&g->tensors[g->inputs[0]]) == 72 && g->tensors[g->inputs[0]].dtype == IR_DT_F32) {
      float x[72] = {0};
      void *out[1] = {0};
      const void *in[1] = {x};
      ir_eval_ref(g, in, out, &err);
      free(out[0]);
    }
    ir_graph_free(g);
  }
  assert_true(imported > 0);
  free(orig);
  free(buf);
}

static void test_import_file(void **state) {
  struct ir_error err = {{0}};
  assert_null(onnx_import_file("/nonexistent/model.onnx", &err));
  assert_string_equal(err.msg, "/nonexistent/model.onnx: cannot open: No such file or directory");
  struct mb b;
  simple_model(&b, 13);
  size_t len;
  uint8_t *buf = mb_pack(&b, &len);
  mb_free(&b);
  char path[] = "/tmp/loom_test_onnx_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, buf, len), (ssize_t)len);
  close(fd);
  struct ir_graph *g = onnx_import_file(path, &err);
  unlink(path);
  free(buf);
  if (!g) fail_msg("%s", err.msg);
  char *text = ir_print_str(g, 0);
  assert_string_equal(text,
                      "loom.ir 1\n"
                      "input  %x : f32[1,4]\n"
                      "%y = Relu(%x) \"Relu_0\"\n"
                      "output %y\n");
  free(text);
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cnn_opset13),
      cmocka_unit_test(test_cnn_opset11),
      cmocka_unit_test(test_cnn_opset17),
      cmocka_unit_test(test_opset_forms),
      cmocka_unit_test(test_auto_pad_and_value_info),
      cmocka_unit_test(test_quantized_ops),
      cmocka_unit_test(test_bad_opset),
      cmocka_unit_test(test_unsupported_op_and_attr),
      cmocka_unit_test(test_absurd_sizes),
      cmocka_unit_test(test_truncated_and_garbage),
      cmocka_unit_test(test_mutations_do_not_crash),
      cmocka_unit_test(test_import_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
