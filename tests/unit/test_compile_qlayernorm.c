/*
 * test_compile_qlayernorm.c - the compiler's int8 LayerNorm
 * (compile_qlayernorm.c): a LayerNormalization between two int8 jobs, read
 * through a DequantizeLinear and written through a QuantizeLinear, becomes
 * one QLAYERNORM host step (no DEQUANTIZE, no float LayerNormalization
 * kernel, no QUANTIZE), for a [1, S, D] and an [S, D] activation and for D
 * not a multiple of 16, and the placement summary says why it is on the
 * host; when the graph also reads the LayerNorm's result as float (a
 * model output here) the float form stays.  A LayerNorm whose rows a
 * Gather picks before the QuantizeLinear (the class token of a ViT or a
 * BERT) is int8 too, the Gather copying int8 codes: one QLAYERNORM and the
 * Gather, no DEQUANTIZE, QUANTIZE or COPY between the jobs.  Each
 * bit-exact on fsim against the fused graph, whose int8 LayerNormalization
 * is the same integer code.
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

#include "compilerun.h"
#include "testcalib.h"

/* Live LayerNormalization nodes reading int8 codes. */
static int int8_layernorms(const struct compile_result *r) {
  int n = 0;
  for (int i = 0; i < r->graph->n_nodes; i++) {
    const struct ir_node *nd = &r->graph->nodes[i];
    n += !nd->dead && compile_is_int8_layernorm(r->graph, nd);
  }
  return n;
}

static void test_int8_layernorm(void **state) {
  (void)state;
  static const struct { const char *shape, *outputs; int64_t dims[3]; int rank, fused; } cases[] = {
      {"1,6,40", "output %o\n", {1, 6, 40}, 3, 1},
      {"6,40", "output %o\n", {6, 40}, 2, 1},
      {"1,5,32", "output %o\n", {1, 5, 32}, 3, 1},
      {"1,6,40", "output %n\noutput %o\n", {1, 6, 40}, 3, 0}, /* the LayerNorm's result read as float */
  };
  for (int k = 0; k < 4; k++) {
    int64_t d = cases[k].dims[cases[k].rank - 1], rows = cases[k].dims[cases[k].rank - 2];
    char text[1024];
    snprintf(text, sizeof text,
             "loom.ir 1\n"
             "input %%x : f32[%s]\n"
             "const %%w1 : f32[%lld,%lld] = rand(31)\n"
             "const %%g : f32[%lld] = rand(32)\nconst %%b : f32[%lld] = rand(33)\n"
             "const %%w2 : f32[%lld,16] = rand(34)\n"
             "%%h = MatMul(%%x, %%w1)\n"
             "%%n = LayerNormalization@17(%%h, %%g, %%b) {axis=-1, epsilon=0.001}\n"
             "%%o = MatMul(%%n, %%w2)\n%s",
             cases[k].shape, (long long)d, (long long)d, (long long)d, (long long)d, (long long)d, cases[k].outputs);
    struct calib_file cf;
    assert_int_equal(0, write_calib(&cf, cases[k].rank, cases[k].dims, 6, 11 + (unsigned)k));
    struct compile_result r;
    struct ir_error err = {{0}};
    int rc = compile_text(text, cf.path, NULL, &r, &err);
    remove_calib(&cf);
    if (rc) fail_msg("case %d: %s", k, err.msg);
    char *summary = placement_summary(&r);
    if (cases[k].fused) {
      assert_int_equal(int8_layernorms(&r), 1);
      assert_int_equal(count_rows(&r, "host QLAYERNORM"), 1);
      assert_int_equal(count_rows(&r, "LayerNormalization"), 0); /* no float kernel step */
      assert_int_equal(count_rows(&r, "host DEQUANTIZE"), 0);
      int at = 0;
      while (at < r.n_layers && strcmp(r.layers[at].op, "host QLAYERNORM")) at++;
      assert_true(at > 0 && at + 1 < r.n_layers && r.layers[at - 1].is_job && r.layers[at + 1].is_job);
      if (!strstr(summary, "int8 LayerNorm on the host (integer mean, variance, isqrt)"))
        fail_msg("summary:\n%s", summary);
    } else {
      assert_int_equal(int8_layernorms(&r), 0);
      assert_int_equal(count_rows(&r, "host QLAYERNORM"), 0);
      if (strstr(summary, "int8 LayerNorm on the host")) fail_msg("summary:\n%s", summary);
    }
    free(summary);
    float x[240];
    for (int s = 0; s < 3; s++) {
      for (int64_t i = 0; i < rows * d; i++) x[i] = sinf(0.37f * (float)i * (float)(s + 1)) * 1.5f + 0.2f * (float)s;
      assert_bit_exact(&r, LOOM_DT_F32, x);
    }
    compile_result_free(&r);
  }
}

/* x -> MatMul -> LayerNormalization -> Gather (constant indices, not along
 * the last axis) -> MatMul: the LayerNorm int8, the Gather on its codes. */
static void test_int8_layernorm_gather(void **state) {
  (void)state;
  static const struct {
    const char *shape, *index, *gather, *outputs;
    int64_t dims[3];
    int rank, fused; /* 0: the float form, 1: QLAYERNORM and a Gather kernel, 2: QLAYERNORM and a COPY */
  } cases[] = {
      {"1,6,40", "i64[] = [0]", "axis=1", "output %o\n", {1, 6, 40}, 3, 2}, /* the class token: a COPY of its row */
      {"1,5,32", "i64[] = [-1]", "axis=-2", "output %o\n", {1, 5, 32}, 3, 2},
      {"6,40", "i64[1] = [2]", "axis=0", "output %o\n", {6, 40}, 2, 2},
      {"6,40", "i64[2] = [4,1]", "axis=0", "output %o\n", {6, 40}, 2, 1}, /* two rows: the Gather kernel */
      {"1,6,40", "i64[] = [0]", "axis=1", "output %n\noutput %o\n", {1, 6, 40}, 3, 0}, /* LayerNorm read as float */
      {"1,5,32", "i64[2] = [4,-5]", "axis=1", "output %o\n", {1, 5, 32}, 3, 0}, /* a Reshape after the Gather */
  };
  for (int k = 0; k < 6; k++) {
    int64_t d = cases[k].dims[cases[k].rank - 1], rows = cases[k].dims[cases[k].rank - 2];
    char text[1024];
    snprintf(text, sizeof text,
             "loom.ir 1\n"
             "input %%x : f32[%s]\n"
             "const %%w1 : f32[%lld,%lld] = rand(41)\n"
             "const %%g : f32[%lld] = rand(42)\nconst %%b : f32[%lld] = rand(43)\n"
             "const %%w2 : f32[%lld,16] = rand(44)\nconst %%i : %s\n"
             "%%h = MatMul(%%x, %%w1)\n"
             "%%n = LayerNormalization@17(%%h, %%g, %%b) {axis=-1, epsilon=0.001}\n"
             "%%c = Gather(%%n, %%i) {%s}\n"
             "%%o = MatMul(%%c, %%w2)\n%s",
             cases[k].shape, (long long)d, (long long)d, (long long)d, (long long)d, (long long)d, cases[k].index,
             cases[k].gather, cases[k].outputs);
    struct calib_file cf; /* 6 samples: an [S, D] input is a batch of 6 rows */
    assert_int_equal(0, write_calib(&cf, cases[k].rank, cases[k].dims, 6, 21 + (unsigned)k));
    struct compile_result r;
    struct ir_error err = {{0}};
    int rc = compile_text(text, cf.path, NULL, &r, &err);
    remove_calib(&cf);
    if (rc) fail_msg("case %d: %s", k, err.msg);
    int fused = cases[k].fused != 0;
    if (int8_layernorms(&r) != fused) fail_msg("case %d: %d int8 LayerNorms", k, int8_layernorms(&r));
    assert_int_equal(count_rows(&r, "host QLAYERNORM"), fused);
    assert_int_equal(count_rows(&r, "LayerNormalization"), !fused); /* the float kernel step */
    if (fused) {
      assert_int_equal(count_rows(&r, "host DEQUANTIZE"), 0);
      assert_int_equal(count_rows(&r, "host COPY"), cases[k].fused == 2);
      int at = 0;
      while (at < r.n_layers && strcmp(r.layers[at].op, "host QLAYERNORM")) at++;
      /* job, QLAYERNORM, Gather, job: the last steps (a QUANTIZE of the input may come first) */
      assert_true(at > 0 && at + 3 == r.n_layers && r.layers[at - 1].is_job && r.layers[at + 2].is_job);
      assert_string_equal(r.layers[at + 1].op, cases[k].fused == 2 ? "host COPY" : "host Gather");
      assert_int_equal(count_rows(&r, "host QUANTIZE"), at - 1);
      int gathers = 0;
      for (int i = 0; i < r.graph->n_nodes; i++) {
        const struct ir_node *nd = &r.graph->nodes[i];
        if (nd->dead || nd->op != IR_OP_GATHER) continue;
        gathers++;
        assert_int_equal(r.graph->tensors[nd->in[0]].dtype, IR_DT_I8);
        assert_int_equal(r.graph->tensors[nd->out[0]].dtype, IR_DT_I8);
      }
      assert_int_equal(gathers, 1);
    }
    float x[240];
    for (int s = 0; s < 3; s++) {
      for (int64_t i = 0; i < rows * d; i++) x[i] = sinf(0.29f * (float)i * (float)(s + 1)) * 1.5f + 0.2f * (float)s;
      assert_bit_exact(&r, LOOM_DT_F32, x);
    }
    compile_result_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_layernorm),
      cmocka_unit_test(test_int8_layernorm_gather),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
