/*
 * test_kernels_registry.c - the kernel registry and the form checks of
 * loom_kernel_run.
 *
 * The registry must match the operator list recorded from onnx
 * (tests/kernels/onnx_ops.txt, scripts/list_onnx_ops.py): every op marked
 * `kernel` has exactly one kernel, no excluded op has one.  Malformed calls
 * (unknown op, opset, operand counts, dims, data, attributes) are refused
 * with a message before any kernel runs.  A sweep then calls every kernel
 * with well-formed but meaningless operands (every count, several shapes
 * and dtypes, no attributes): each call must return, and a refusal must
 * carry a message; under ASan (make test-san) it also proves that no
 * kernel reads or writes outside its operands when the operands make no
 * sense.
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

/* Ops Loom has beyond the list of onnx 1.12 (newer opsets). */
static const char *const beyond_list[] = {"Mish", NULL};

static void test_unique_and_listed(void **state) {
  (void)state;
  int n = loom_kernel_count();
  assert_true(n > 150);
  assert_null(loom_kernel_at(n));
  assert_null(loom_kernel_at(-1));
  for (int i = 0; i < n; i++) {
    const struct loom_kernel *k = loom_kernel_at(i);
    assert_non_null(k);
    assert_non_null(k->fn);
    assert_ptr_equal(loom_kernel_find(k->op), k); /* first match is itself: no duplicate */
  }
  assert_null(loom_kernel_find("NoSuchOp"));
  assert_null(loom_kernel_find(NULL));
  FILE *f = fopen("tests/kernels/onnx_ops.txt", "r");
  assert_non_null(f);
  char line[256], dom[64], op[64], vers[64], status[64];
  int kernels = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%63s %63s %63s %63s", dom, op, vers, status) != 4) continue;
    int want = !strcmp(status, "kernel");
    if ((loom_kernel_find(op) != NULL) != want) fail_msg("%s: %s but the registry %s it", op, status, want ? "lacks" : "has");
    kernels += want;
  }
  fclose(f);
  int extra = 0;
  for (int i = 0; beyond_list[i]; i++) extra += loom_kernel_find(beyond_list[i]) != NULL;
  assert_int_equal(kernels + extra, n);
}

static loom_status run(const char *op, int opset, struct loom_kt *in, int n_in, struct loom_kt *out, int n_out,
                       const struct loom_kattr *attrs, int n_attrs, char *msg) {
  struct loom_kcall c = {op, opset, in, n_in, out, n_out, attrs, n_attrs, msg};
  msg[0] = 0;
  return loom_kernel_run(&c);
}

#define REFUSED(expr, st, text)                                                       \
  do {                                                                                \
    assert_int_equal((expr), (st));                                                   \
    if (!strstr(msg, (text))) fail_msg("message \"%s\" lacks \"%s\"", msg, (text));    \
  } while (0)

static void test_form_checks(void **state) {
  (void)state;
  char msg[LOOM_MSG_MAX];
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  struct loom_kt in = {LOOM_DT_F32, 2, {2, 3}, x}, out = {LOOM_DT_F32, 2, {2, 3}, y};
  assert_int_equal(loom_kernel_run(NULL), LOOM_E_INVALID);
  REFUSED(run("Frobnicate", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_UNSUPPORTED, "Frobnicate");
  REFUSED(run("Relu", 0, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_UNSUPPORTED, "opset 0");
  REFUSED(run("Relu", 18, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_UNSUPPORTED, "opset 18");
  REFUSED(run("Relu", 13, &in, LOOM_KERNEL_MAX_IO + 1, &out, 1, NULL, 0, msg), LOOM_E_UNSUPPORTED, "inputs");
  REFUSED(run("Relu", 13, NULL, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "missing");
  in.dims[1] = -3;
  REFUSED(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "negative");
  in.dims[1] = 3, in.rank = LOOM_KT_MAX_RANK + 1;
  REFUSED(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_UNSUPPORTED, "rank");
  in.rank = 2, in.dtype = (loom_dtype)99;
  REFUSED(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "dtype");
  in.dtype = LOOM_DT_F32, in.data = NULL;
  REFUSED(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "no data");
  in.data = x, in.dims[0] = INT64_MAX / 2;
  REFUSED(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "too many");
  in.dims[0] = 2;
  struct loom_kattr bad[] = {{.name = "alpha", .kind = LOOM_KATTR_STRING, .s = NULL},
                             {.name = "perm", .kind = LOOM_KATTR_INTS, .n = 2, .ints = NULL},
                             {.name = "value", .kind = LOOM_KATTR_TENSOR, .t = NULL},
                             {.name = NULL, .kind = LOOM_KATTR_INT},
                             {.name = "x", .kind = (enum loom_kattr_kind)77}};
  for (int i = 0; i < 5; i++) REFUSED(run("Relu", 13, &in, 1, &out, 1, &bad[i], 1, msg), LOOM_E_INVALID, "malformed");
  assert_int_equal(run("Relu", 13, &in, 1, &out, 1, NULL, 0, msg), LOOM_OK);
  /* An absent output the kernel may skip, an absent required input it refuses. */
  struct loom_kt absent = {LOOM_DT_INVALID, 0, {0}, NULL};
  REFUSED(run("Relu", 13, &absent, 1, &out, 1, NULL, 0, msg), LOOM_E_INVALID, "missing");
}

static void test_attr_getters(void **state) {
  (void)state;
  int64_t ints[2] = {3, 4};
  float fl[1] = {0.5f};
  struct loom_kattr a[] = {{.name = "i", .kind = LOOM_KATTR_INT, .i = 7},
                           {.name = "f", .kind = LOOM_KATTR_FLOAT, .f = 1.5f},
                           {.name = "s", .kind = LOOM_KATTR_STRING, .s = "abc"},
                           {.name = "v", .kind = LOOM_KATTR_INTS, .n = 2, .ints = ints},
                           {.name = "w", .kind = LOOM_KATTR_FLOATS, .n = 1, .floats = fl}};
  struct loom_kcall c = {.attrs = a, .n_attrs = 5};
  const int64_t *v;
  const float *w;
  assert_int_equal(loom_kattr_int(&c, "i", 0), 7);
  assert_int_equal(loom_kattr_int(&c, "f", -1), -1); /* wrong kind: the default */
  assert_true(loom_kattr_float(&c, "f", 0) == 1.5f);
  assert_true(loom_kattr_float(&c, "i", 0) == 7.0f); /* an INT reads as a float */
  assert_string_equal(loom_kattr_string(&c, "s", "d"), "abc");
  assert_string_equal(loom_kattr_string(&c, "x", "d"), "d");
  assert_int_equal(loom_kattr_ints(&c, "v", &v), 2);
  assert_int_equal(v[1], 4);
  assert_int_equal(loom_kattr_ints(&c, "w", &v), -1);
  assert_int_equal(loom_kattr_floats(&c, "w", &w), 1);
  assert_null(loom_kattr_find(&c, "nothing"));
}

/* Every kernel with meaningless operands: returns, and explains a refusal. */
static void test_sweep(void **state) {
  (void)state;
  static const loom_dtype types[] = {LOOM_DT_F32, LOOM_DT_I64, LOOM_DT_U8, LOOM_DT_BOOL, LOOM_DT_F16};
  static const int64_t shapes[4][4] = {{0}, {1}, {2, 3}, {1, 2, 3, 2}};
  static const int ranks[4] = {0, 1, 2, 4};
  char msg[LOOM_MSG_MAX];
  int calls = 0, ok = 0;
  for (int k = 0; k < loom_kernel_count(); k++) {
    const struct loom_kernel *kern = loom_kernel_at(k);
    for (int t = 0; t < 5; t++)
      for (int s = 0; s < 4; s++)
        for (int n_in = 0; n_in <= 5; n_in++)
          for (int n_out = 1; n_out <= 2; n_out++) {
            struct loom_kt in[5], out[2];
            int64_t n = 1;
            for (int d = 0; d < ranks[s]; d++) n *= shapes[s][d];
            size_t es = loom_dtype_size(types[t]);
            for (int i = 0; i < n_in + n_out; i++) {
              struct loom_kt *x = i < n_in ? &in[i] : &out[i - n_in];
              x->dtype = types[t], x->rank = ranks[s];
              memcpy(x->dims, shapes[s], sizeof shapes[s]);
              x->data = malloc((size_t)n * es);
              for (int64_t e = 0; e < n; e++) /* small values: 1, 2, 1, 2, ... in every type */
                loom_kt_set_f64(x, e, (double)(1 + (e + i) % 2));
            }
            loom_status st = run(kern->op, 17, in, n_in, out, n_out, NULL, 0, msg);
            calls++;
            if (st == LOOM_OK) ok++;
            else if (!msg[0]) fail_msg("%s refused (%s) without a message", kern->op, loom_status_name(st));
            for (int i = 0; i < n_in; i++) free(in[i].data);
            for (int i = 0; i < n_out; i++) free(out[i].data);
          }
  }
  print_message("%d calls, %d accepted\n", calls, ok);
  assert_true(ok > 0 && ok < calls);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unique_and_listed),
      cmocka_unit_test(test_form_checks),
      cmocka_unit_test(test_attr_getters),
      cmocka_unit_test(test_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
