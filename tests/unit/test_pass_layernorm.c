/*
 * test_pass_layernorm.c - the default passes on a LayerNorm exported as
 * nine ops (pass_layernorm.c) and on Transposes that only move axes of
 * size 1 (pass_simplify.c).
 *
 * Every case is a graph in IR text, run by the reference interpreter
 * before and after ir_run_default_passes: the outputs must agree (to float
 * rounding for the LayerNorm, bit for bit for the Reshape), and the node
 * counts say what was rewritten.  The matches: the PyTorch form with gamma
 * and beta, without them, with commuted operands and a [1, 1, D] gamma, with
 * and a Mul by a per-row (not per-channel)
 * constant that stays after the LayerNormalization.  The near misses, which
 * must stay as they are: a mean over two axes, a second mean over another
 * axis, means without keepdims, Pow 3, Div's operands swapped, a per-channel epsilon, and an
 * intermediate read outside the pattern (by another node, as a graph
 * output; d by a third node, a Pow too; the root by the Div and an Add).
 * The rewrites that add a tensor, at every tensor count up to 40 (under
 * ASan: no read of the tensor array that the addition moved).
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

#include "irtext.h"
#include "sw_compiler/compiler.h"

#define NX 64 /* x : f32[2,3,8] uses 48 */

/* The PyTorch export; MEAN1, EXP, ... are replaced per case. */
static const char *const ln_text =
    "loom.ir 1\n"
    "input %x : XTYPE\n"
    "const %two : f32[] = [EXP]\n"
    "const %eps : EPS_TYPE = EPS\n"
    "const %gamma : GAMMA_TYPE = rand(5)\n"
    "const %beta : f32[8] = rand(6)\n"
    "%m = MEAN1\n"
    "%d = Sub@13(%x, %m)\n"
    "%p = Pow@13(%d, %two)\n"
    "%v = MEAN2\n"
    "%a = ADDE\n"
    "%s = Sqrt@13(%a)\n"
    "%n = DIV\n"
    "%g = MUL\n"
    "%y = Add(%g, %beta)\n"
    "OUTPUTS\n";

struct subst {
  const char *key, *val;
};

/* ln_text with each key replaced by the case's value or the default. */
static char *ln_case(const struct subst *s, int n) {
  static const struct subst dflt[] = {
      {"XTYPE", "f32[2,3,8]"},
      {"EXP", "2.0"},
      {"EPS_TYPE", "f32[]"},
      {"EPS", "[0.00001]"},
      {"GAMMA_TYPE", "f32[8]"},
      {"MEAN1", "ReduceMean@13(%x) {axes=[-1]}"},
      {"MEAN2", "ReduceMean@13(%p) {axes=[-1]}"},
      {"ADDE", "Add(%v, %eps)"},
      {"DIV", "Div@13(%d, %s)"},
      {"MUL", "Mul(%n, %gamma)"},
      {"OUTPUTS", "output %y"},
  };
  char *text = strdup(ln_text);
  for (size_t k = 0; k < sizeof dflt / sizeof dflt[0]; k++) {
    const char *val = dflt[k].val;
    for (int j = 0; j < n; j++)
      if (!strcmp(s[j].key, dflt[k].key)) val = s[j].val;
    char *at = strstr(text, dflt[k].key);
    assert_non_null(at);
    size_t head = (size_t)(at - text), klen = strlen(dflt[k].key);
    char *t = malloc(strlen(text) + strlen(val) + 1);
    memcpy(t, text, head);
    strcpy(t + head, val);
    strcat(t, at + klen);
    free(text);
    text = t;
  }
  return text;
}

static int count_op(const struct ir_graph *g, const char *op) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++) c += !g->nodes[i].dead && !strcmp(ir_node_op(&g->nodes[i]), op);
  return c;
}

/* Runs text before and after the default passes; returns the graph after
 * (for the counts) and checks that output 0 agrees within tol. */
static struct ir_graph *before_after(const char *text, const float *x, double tol) {
  struct ir_graph *a = parse_ok(text), *b = parse_ok(text);
  struct ir_error err = {{0}};
  float *ya = eval_ok(a, x);
  if (ir_run_default_passes(b, &err)) fail_msg("%s", err.msg);
  float *yb = eval_ok(b, x);
  int64_t n = ir_tensor_numel(&b->tensors[b->outputs[0]]);
  assert_int_equal(n, ir_tensor_numel(&a->tensors[a->outputs[0]]));
  for (int64_t i = 0; i < n; i++)
    if (tol == 0 ? memcmp(&ya[i], &yb[i], sizeof ya[i]) : fabs(ya[i] - yb[i]) > tol * (1 + fabs(ya[i])))
      fail_msg("output %lld: %.9g before the passes, %.9g after", (long long)i, ya[i], yb[i]);
  free(ya), free(yb);
  ir_graph_free(a);
  return b;
}

static void fill_x(float *x) {
  for (int i = 0; i < NX; i++) x[i] = 2.5f * sinf(0.7f * (float)i) + 0.3f * (float)(i / 8); /* rows differ */
}

/* Checks one case: `ln` LayerNormalization nodes and `pow` Pow nodes left,
 * `mul` Muls (the per-row one that is not gamma). */
static void check_case(const struct subst *s, int n, int ln, int pow, int mul) {
  float x[NX];
  fill_x(x);
  char *text = ln_case(s, n);
  struct ir_graph *g = before_after(text, x, 1e-5);
  assert_int_equal(count_op(g, "LayerNormalization"), ln);
  assert_int_equal(count_op(g, "Pow"), pow);
  assert_int_equal(count_op(g, "Mul"), mul);
  if (ln && !pow) {
    assert_int_equal(count_op(g, "ReduceMean") + count_op(g, "Sqrt") + count_op(g, "Div"), 0);
    for (int i = 0; i < g->n_nodes; i++)
      if (!strcmp(ir_node_op(&g->nodes[i]), "LayerNormalization")) {
        assert_int_equal(ir_attr_int(&g->nodes[i], "axis", 0), -1);
        assert_float_equal(ir_attr_float(&g->nodes[i], "epsilon", 0), 1e-5, 1e-12);
        assert_int_equal(g->nodes[i].opset, 17);
      }
  }
  ir_graph_free(g);
  free(text);
}

static void test_layernorm_torch_form(void **state) {
  check_case(NULL, 0, 1, 0, 0);
  /* one node left, in the place of the last: its result is the output */
  float x[NX];
  fill_x(x);
  char *text = ln_case(NULL, 0);
  struct ir_graph *g = before_after(text, x, 1e-5);
  int ln = ir_producer(g, g->outputs[0]);
  assert_true(ln >= 0);
  assert_string_equal(ir_node_op(&g->nodes[ln]), "LayerNormalization");
  assert_int_equal(g->nodes[ln].n_in, 3);
  assert_int_equal(g->n_nodes, 1);
  ir_graph_free(g);
  free(text);
}

static void test_layernorm_forms(void **state) {
  static const struct subst bare[] = {{"OUTPUTS", "output %n"}};
  check_case(bare, 1, 1, 0, 0); /* no gamma, no beta: the Mul and Add are dead */
  static const struct subst commuted[] = {{"ADDE", "Add(%eps, %v)"},
                                          {"MUL", "Mul(%gamma, %n)"},
                                          {"GAMMA_TYPE", "f32[1,1,8]"},
                                          {"MEAN1", "ReduceMean@13(%x) {axes=[2], keepdims=1}"}};
  check_case(commuted, 4, 1, 0, 0);
  /* a per-row scale is no gamma: the LayerNormalization ends at the Div */
  static const struct subst per_row[] = {{"GAMMA_TYPE", "f32[3,1]"}};
  check_case(per_row, 1, 1, 0, 1);
}

static void test_layernorm_near_misses(void **state) {
  static const struct subst two_axes[] = {{"MEAN1", "ReduceMean@13(%x) {axes=[-2,-1]}"},
                                          {"MEAN2", "ReduceMean@13(%p) {axes=[-2,-1]}"}};
  check_case(two_axes, 2, 0, 1, 1);
  static const struct subst last_two[] = {{"MEAN1", "ReduceMean@13(%x) {axes=[-1,-2]}"},
                                          {"MEAN2", "ReduceMean@13(%p) {axes=[-1,-2]}"}};
  check_case(last_two, 2, 0, 1, 1);
  static const struct subst other_axis[] = {{"MEAN2", "ReduceMean@13(%p) {axes=[1]}"}};
  check_case(other_axis, 1, 0, 1, 1);
  static const struct subst cube[] = {{"EXP", "3.0"}};
  check_case(cube, 1, 0, 1, 1);
  /* keepdims 0 on a square x: Sub broadcasts the rows' means down the columns */
  static const struct subst no_keep[] = {{"XTYPE", "f32[8,8]"},
                                         {"MEAN1", "ReduceMean@13(%x) {axes=[-1], keepdims=0}"},
                                         {"MEAN2", "ReduceMean@13(%p) {axes=[-1], keepdims=0}"}};
  check_case(no_keep, 3, 0, 1, 1);
  static const struct subst swapped[] = {{"DIV", "Div@13(%s, %d)"}};
  check_case(swapped, 1, 0, 1, 1);
  static const struct subst eps_vec[] = {{"EPS_TYPE", "f32[8]"}, {"EPS", "rand(7)"}};
  check_case(eps_vec, 2, 0, 1, 1);
  static const struct subst d_read[] = {{"MEAN2", "ReduceMean@13(%p) {axes=[-1]}\n%r = Relu(%d)"},
                                        {"OUTPUTS", "%z = Add(%y, %r)\noutput %z"}};
  check_case(d_read, 2, 0, 1, 1);
  static const struct subst d_pow[] = {{"OUTPUTS", "%p2 = Pow@13(%d, %two)\n%z = Add(%y, %p2)\noutput %z"}};
  check_case(d_pow, 1, 0, 2, 1);
  static const struct subst s_read[] = {{"OUTPUTS", "%z = Add(%y, %s)\noutput %z"}};
  check_case(s_read, 1, 0, 1, 1);
  static const struct subst d_out[] = {{"OUTPUTS", "output %y\noutput %d"}};
  check_case(d_out, 1, 0, 1, 1);
  static const struct subst v_out[] = {{"OUTPUTS", "output %y\noutput %v"}};
  check_case(v_out, 1, 0, 1, 1);
}

/* ---- Transposes of size-1 axes ---- */

/* Transpose(x : f32[dims]) {perm} then Relu: `reshape` whether it became a
 * Reshape, which the partition then makes a view (no copy). */
static void check_transpose(const char *dims, const char *perm, int n, int reshape) {
  char text[512];
  snprintf(text, sizeof text,
           "loom.ir 1\ninput %%x : f32[%s]\n%%t = Transpose(%%x) {perm=[%s]}\n%%y = Relu(%%t)\noutput %%y\n", dims,
           perm);
  float x[64];
  for (int i = 0; i < n; i++) x[i] = (float)i - 7.5f;
  struct ir_graph *g = before_after(text, x, 0);
  assert_int_equal(count_op(g, "Transpose"), !reshape);
  assert_int_equal(count_op(g, "Reshape"), reshape);
  enum part_target targets[8];
  struct ir_error err = {{0}};
  assert_true(g->n_nodes <= 8);
  if (ir_pass_partition_host(g, targets, &err)) fail_msg("%s", err.msg);
  assert_int_equal(targets[0], reshape ? PART_ALIAS : PART_KERNEL);
  ir_graph_free(g);
}

static void test_unit_transpose(void **state) {
  check_transpose("4,1,8", "1,0,2", 32, 1);  /* [S,1,D] -> [1,S,D] */
  check_transpose("1,4,8", "1,0,2", 32, 1);  /* and back */
  check_transpose("1,4,1,8", "2,0,1,3", 32, 1);
  check_transpose("1,4,1,8", "2,0,3,1", 32, 0);  /* 4 and 8 change places */
  check_transpose("4,2,1", "1,0,2", 8, 0);   /* moves axes of size 4 and 2 */
  check_transpose("1,4,8", "0,2,1", 32, 0);
  check_transpose("2,1,3", "2,1,0", 6, 0);
}

/* The rewrites that add a constant (the Reshape's shape, Sub's negated
 * operand) at every tensor count up to 40, so that one of them adds it to
 * a full array (which moves): under ASan a read of the old array fails. */
static void test_simplify_growth(void **state) {
  char text[4096];
  float x[32];
  for (int i = 0; i < 32; i++) x[i] = 0.25f * (float)i - 3;
  for (int extra = 0; extra < 36; extra++) {
    int at = snprintf(text, sizeof text,
                      "loom.ir 1\ninput %%x : f32[4,1,8]\nconst %%c : f32[1,4,8] = rand(3)\n"
                      "%%t = Transpose(%%x) {perm=[1,0,2]}\n%%r0 = Sub@13(%%t, %%c)\n");
    for (int k = 1; k <= extra; k++)
      at += snprintf(text + at, sizeof text - (size_t)at, "%%r%d = Relu(%%r%d)\n", k, k - 1);
    snprintf(text + at, sizeof text - (size_t)at, "output %%r%d\n", extra);
    struct ir_graph *g = before_after(text, x, 0);
    assert_int_equal(count_op(g, "Reshape"), 1);
    assert_int_equal(count_op(g, "Sub"), 0);
    ir_graph_free(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layernorm_torch_form),
      cmocka_unit_test(test_layernorm_forms),
      cmocka_unit_test(test_layernorm_near_misses),
      cmocka_unit_test(test_unit_transpose),
      cmocka_unit_test(test_simplify_growth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
