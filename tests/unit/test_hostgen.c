/*
 * test_hostgen.c - whole graphs compiled through LLVM (--target cpu)
 * against the reference interpreter and the accelerator.
 *
 * Kernels on IR text graphs and the digits and small ONNX models against
 * ir_eval_ref (bit-identical; softmax within 2e-7); digits_mlp + softmax
 * compiled for the accelerator with its host steps native against the
 * same model with portable host steps; and digits_cnn against the int8
 * accelerator path on fsim (same class on >= 98% of the 360 test digits,
 * mean logit difference <= 2% of the logit range).  Model tests skip with
 * a message when build/models ($MODELS) has not been made
 * (sw_compiler/llvm/module.mk makes it before the test).
 *
 * Single host ops, images for other machines and load failures:
 * test_hostgen_ops.c.
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

#include "hostgenrun.h"
#include "driver/core/npy.h"
#include "driver/lib/runtime.h"
#include "sw_compiler/compile.h"

/* ---- whole graphs (--target cpu) ---- */

/* Runs the model on inputs in[k] (plain f32 of graph input k); out[k]
 * gets malloc'd outputs. */
static void run_model(struct hgrun_loaded *l, const struct ir_graph *g, const float *const *in, float **out) {
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
  uint8_t *p = hgrun_graph_loom(g, NULL, &n);
  struct hgrun_loaded l;
  hgrun_load(p, n, &l);
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
  hgrun_unload(&l);
  free(p);
  return worst;
}

static float *random_input(const struct ir_graph *g, int k) {
  int64_t n = ir_tensor_numel(&g->tensors[g->inputs[k]]);
  float *v = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) v[i] = hgrun_rfloat(-2, 2);
  return v;
}

static void check_text_graph(const char *text, float tol) {
  struct ir_graph *g = hgrun_parse_graph(text);
  float *in[3] = {0};
  for (int k = 0; k < g->n_inputs; k++) in[k] = random_input(g, k);
  float worst = compare_graph(g, (const float *const *)in, tol);
  print_message("graph with %d nodes: largest difference %g (allowed %g)\n", g->n_nodes, (double)worst, (double)tol);
  for (int k = 0; k < g->n_inputs; k++) free(in[k]);
  ir_graph_free(g);
}

/* Every kernel, with the attributes that change its loops. */
static void test_graph_ops(void **state) {
  hgrun_seed(7);
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
  uint8_t *q = hgrun_generate(r.bytes, r.size, NULL, &m, &sum);
  print_message("digits_mlp+softmax: %u host steps native, %u portable, %llu-byte image\n", sum.native_steps,
                sum.portable_steps, (unsigned long long)sum.image_bytes);
  assert_true(sum.native_steps >= 1);
  int64_t count;
  float *x = read_npy("digits_test_x_flat.npy", &count), out_n[10], out_p[10];
  struct hgrun_loaded ln, lp;
  hgrun_load(q, m, &ln);
  hgrun_load(r.bytes, r.size, &lp);
  const struct loom_tensor_info *in = loom_model_input(ln.m, 0);
  for (int64_t s = 0; s < count / 64 && s < 100; s++) {
    float *outs[2];
    struct hgrun_loaded *both[2] = {&ln, &lp};
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
  hgrun_unload(&ln), hgrun_unload(&lp);
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
  struct hgrun_loaded lc, la;
  hgrun_load(cpu, n, &lc);
  hgrun_load(r.bytes, r.size, &la);
  int64_t count;
  float *x = read_npy("digits_test_x.npy", &count);
  int samples = (int)(count / 64), agree = 0;
  double diff = 0, range = 0;
  for (int s = 0; s < samples; s++) {
    float yc[10], ya[10];
    struct hgrun_loaded *both[2] = {&lc, &la};
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
  hgrun_unload(&lc), hgrun_unload(&la);
  free(x), free(cpu);
  compile_result_free(&r);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_ops),
      cmocka_unit_test(test_graph_models),
      cmocka_unit_test(test_accel_model_host_steps),
      cmocka_unit_test(test_cpu_vs_accel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
