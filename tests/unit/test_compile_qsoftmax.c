/*
 * test_compile_qsoftmax.c - the compiler's masked int8 Softmax
 * (compile_qsoftmax.c): attention whose scores get an additive float mask
 * first, BERT's Softmax(scores + mask), becomes one QSOFTMAX host step
 * reading the int8 scores as the job stored them and the mask (no
 * DEQUANTIZE, float Add, SOFTMAX or QUANTIZE of the scores).  Masks: BERT's
 * (x[.., 0] < 0 ? -10000 : 0, computed in the graph from the input, [1, S]
 * over every head and query row), a finite bias of the same shape, and a
 * [1, S, S] mask over the heads (one mask row per query row).  A mask that
 * is not along the last axis ([1, S, 1]) keeps the float form.  Each
 * bit-exact on fsim against the fused graph on the reference interpreter,
 * whose masked int8 Softmax is the same integer code, on inputs with some,
 * none and all keys masked.
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

/* Live int8 Softmax nodes with a mask operand, and their mask_group. */
static int masked_softmaxes(const struct compile_result *r, int64_t *group) {
  int n = 0;
  for (int i = 0; i < r->graph->n_nodes; i++) {
    const struct ir_node *nd = &r->graph->nodes[i];
    if (nd->dead || nd->op != IR_OP_SOFTMAX || r->graph->tensors[nd->in[0]].dtype != IR_DT_I8 || nd->n_in != 2) continue;
    *group = ir_attr_int(nd, "mask_group", -1);
    n++;
  }
  return n;
}

static void test_masked_softmax(void **state) {
  (void)state;
  static const struct { const char *what, *mask; int fused; int64_t group; } cases[] = {
      {"BERT's 0 / -10000, [1, S]",
       "%lt = Less@13(%c, %zero)\n%cf = Cast@13(%lt) {to=1}\n%mk = Mul(%cf, %big)\n", 1, 12},
      {"a finite bias, [1, S]", "%mk = Mul(%c, %three)\n", 1, 12},
      {"per query row, [1, S, S]",
       "const %st : i64[1] = [0]\nconst %en : i64[1] = [6]\nconst %ax : i64[1] = [2]\n"
       "%xs = Slice@13(%x, %st, %en, %ax)\n%mk = Mul(%xs, %three)\n", 1, 1},
      {"along the rows, [1, S, 1]", "const %s1 : i64[3] = [1, 6, 1]\n%mk = Reshape(%c, %s1)\n", 0, 0},
  };
  int64_t dims[3] = {1, 6, 16};
  for (int k = 0; k < 4; k++) {
    char text[2048];
    snprintf(text, sizeof text,
             "loom.ir 1\n"
             "input %%x : f32[1,6,16]\n"
             "const %%wq : f32[16,16] = rand(21)\nconst %%wk : f32[16,16] = rand(22)\nconst %%wv : f32[16,16] = rand(23)\n"
             "const %%hs : i64[3] = [6, 2, 8]\n"
             "const %%i0 : i64[] = [0]\nconst %%zero : f32[] = [0]\nconst %%big : f32[] = [-10000]\n"
             "const %%three : f32[] = [3]\n"
             "%%c = Gather(%%x, %%i0) {axis=2}\n%s"
             "%%q = MatMul(%%x, %%wq)\n%%k = MatMul(%%x, %%wk)\n%%v = MatMul(%%x, %%wv)\n"
             "%%q3 = Reshape(%%q, %%hs)\n%%k3 = Reshape(%%k, %%hs)\n%%v3 = Reshape(%%v, %%hs)\n"
             "%%qh = Transpose(%%q3) {perm=[1,0,2]}\n%%kt = Transpose(%%k3) {perm=[1,2,0]}\n"
             "%%vh = Transpose(%%v3) {perm=[1,0,2]}\n"
             "%%s = MatMul(%%qh, %%kt)\n%%sm = Add(%%s, %%mk)\n%%p = Softmax(%%sm) {axis=-1}\n"
             "%%o = MatMul(%%p, %%vh)\noutput %%o\n",
             cases[k].mask);
    struct calib_file cf;
    assert_int_equal(0, write_calib(&cf, 3, dims, 6, 17 + (unsigned)k));
    struct compile_result r;
    struct ir_error err = {{0}};
    int rc = compile_text(text, cf.path, NULL, &r, &err);
    remove_calib(&cf);
    if (rc) fail_msg("%s: %s", cases[k].what, err.msg);
    char *summary = placement_summary(&r);
    int64_t group = 0;
    if (cases[k].fused) {
      assert_int_equal(masked_softmaxes(&r, &group), 1);
      assert_int_equal(group, cases[k].group);
      assert_int_equal(count_rows(&r, "host QSOFTMAX"), 1);
      assert_int_equal(count_rows(&r, "host SOFTMAX"), 0);
      int at = 0;
      while (at < r.n_layers && strcmp(r.layers[at].op, "host QSOFTMAX")) at++;
      assert_true(at > 0 && at < r.n_layers && r.layers[at - 1].is_job); /* the scores as the job stored them */
      assert_string_equal(r.layers[at].shape, "12x6");
      if (!strstr(summary, "int8 softmax on the host (integer exp")) fail_msg("%s: summary:\n%s", cases[k].what, summary);
    } else {
      assert_int_equal(masked_softmaxes(&r, &group), 0);
      assert_int_equal(count_rows(&r, "host QSOFTMAX"), 0);
      assert_int_equal(count_rows(&r, "host SOFTMAX"), 1);
    }
    free(summary);
    float x[96];
    for (int s = 0; s < 4; s++) {
      for (int i = 0; i < 96; i++) x[i] = cosf(0.41f * (float)i * (float)(s + 1)) * 1.5f;
      for (int t = 0; t < 6; t++) /* keys: some masked, none (s = 1), all (s = 2) */
        x[t * 16] = s == 1 ? 0.5f + 0.1f * (float)t : s == 2 ? -0.5f - 0.1f * (float)t : x[t * 16];
      assert_bit_exact(&r, LOOM_DT_F32, x);
    }
    compile_result_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_masked_softmax),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
