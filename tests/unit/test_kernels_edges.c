/*
 * test_kernels_edges.c - what ONNX's node tests do not reach: empty
 * tensors, broadcasting corners, integer semantics (wrap, division by
 * zero, Mod's sign rules, unsigned 64-bit), Cast's saturation and NaN
 * rules, the capacity protocol of the dynamic-shape kernels, and a table
 * of refusals (bad attribute, rank, dtype, shape, index) that must each
 * return an error with a message naming the problem.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kcall.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-5)

static void test_empty(void **state) {
  (void)state;
  float dummy[4] = {0}, y[4] = {7, 7, 7, 7};
  struct loom_kt a = KT(LOOM_DT_F32, dummy, 0, 3), b = KT(LOOM_DT_F32, dummy, 3), o = KT(LOOM_DT_F32, y, 0, 3);
  struct loom_kt ab[2] = {a, b};
  assert_int_equal(kcall("Add", 14, ab, 2, &o, 1, NULL, 0), LOOM_OK);
  assert_int_equal(kcall("Relu", 14, &a, 1, &o, 1, NULL, 0), LOOM_OK);
  int64_t perm[2] = {1, 0};
  struct loom_kattr p = attr_ints("perm", perm, 2);
  struct loom_kt ot = KT(LOOM_DT_F32, y, 3, 0);
  assert_int_equal(kcall("Transpose", 13, &a, 1, &ot, 1, &p, 1), LOOM_OK);
  /* Concat with an empty piece. */
  float c1[2] = {1, 2};
  struct loom_kt cat[2] = {KT(LOOM_DT_F32, c1, 1, 2), KT(LOOM_DT_F32, dummy, 0, 2)}, co = KT(LOOM_DT_F32, y, 1, 2);
  struct loom_kattr ax0 = attr_i("axis", 0);
  assert_int_equal(kcall("Concat", 13, cat, 2, &co, 1, &ax0, 1), LOOM_OK);
  NEAR(y[1], 2);
  /* Reductions over nothing: the identities. */
  struct loom_kt r = KT(LOOM_DT_F32, y, 1, 3);
  int64_t axes[1] = {0};
  struct loom_kattr ra = attr_ints("axes", axes, 1);
  assert_int_equal(kcall("ReduceSum", 11, &a, 1, &r, 1, &ra, 1), LOOM_OK);
  NEAR(y[0], 0);
  assert_int_equal(kcall("ReduceMax", 13, &a, 1, &r, 1, &ra, 1), LOOM_OK);
  assert_true(isinf(y[0]) && y[0] < 0);
  assert_int_equal(kcall("ReduceProd", 13, &a, 1, &r, 1, &ra, 1), LOOM_OK);
  NEAR(y[2], 1);
  /* Gather with no indices; MatMul with k = 0 gives zeros. */
  int64_t none[1];
  struct loom_kt g[2] = {b, KT(LOOM_DT_I64, none, 0)}, go = KT(LOOM_DT_F32, y, 0);
  assert_int_equal(kcall("Gather", 13, g, 2, &go, 1, NULL, 0), LOOM_OK);
  struct loom_kt mm[2] = {KT(LOOM_DT_F32, dummy, 2, 0), KT(LOOM_DT_F32, dummy, 0, 2)}, mo = KT(LOOM_DT_F32, y, 2, 2);
  assert_int_equal(kcall("MatMul", 13, mm, 2, &mo, 1, NULL, 0), LOOM_OK);
  NEAR(y[0], 0), NEAR(y[3], 0);
  int64_t cap[4];
  struct loom_kt nz = KT(LOOM_DT_I64, cap, 2, 2);
  assert_int_equal(kcall("NonZero", 13, &a, 1, &nz, 1, NULL, 0), LOOM_OK);
  assert_int_equal(nz.dims[0], 2), assert_int_equal(nz.dims[1], 0);
}

static void test_broadcast_ops(void **state) {
  (void)state;
  /* Where over three different shapes: [2,1], [1,3], scalar. */
  uint8_t cond[2] = {1, 0};
  float xv[3] = {1, 2, 3}, yv = -1, out[6];
  struct loom_kt w[3] = {KT(LOOM_DT_BOOL, cond, 2, 1), KT(LOOM_DT_F32, xv, 1, 3), KT0(LOOM_DT_F32, &yv)};
  struct loom_kt wo = KT(LOOM_DT_F32, out, 2, 3);
  assert_int_equal(kcall("Where", 16, w, 3, &wo, 1, NULL, 0), LOOM_OK);
  float want[6] = {1, 2, 3, -1, -1, -1};
  assert_memory_equal(out, want, sizeof want);
  /* Add [3,1] + [1,2]; the output must be exactly the broadcast shape. */
  float a[3] = {0, 10, 20}, b[2] = {1, 2};
  struct loom_kt ab[2] = {KT(LOOM_DT_F32, a, 3, 1), KT(LOOM_DT_F32, b, 1, 2)}, ao = KT(LOOM_DT_F32, out, 3, 2);
  assert_int_equal(kcall("Add", 14, ab, 2, &ao, 1, NULL, 0), LOOM_OK);
  NEAR(out[5], 22);
  ao = KT(LOOM_DT_F32, out, 2, 3, 2);
  assert_int_equal(kcall("Add", 14, ab, 2, &ao, 1, NULL, 0), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "broadcast"));
  /* Max propagates NaN from either side; Mean of three with broadcast. */
  float m1[2] = {NAN, 1}, m2[2] = {0, NAN}, m3 = 2;
  struct loom_kt mx[3] = {KT(LOOM_DT_F32, m1, 2), KT(LOOM_DT_F32, m2, 2), KT0(LOOM_DT_F32, &m3)}, mo = KT(LOOM_DT_F32, out, 2);
  assert_int_equal(kcall("Max", 13, mx, 3, &mo, 1, NULL, 0), LOOM_OK);
  assert_true(isnan(out[0]) && isnan(out[1]));
  m1[0] = 4, m2[1] = 3;
  assert_int_equal(kcall("Mean", 13, mx, 3, &mo, 1, NULL, 0), LOOM_OK);
  NEAR(out[0], 2), NEAR(out[1], 2);
  /* PRelu's slope broadcasts one way, per channel. */
  float px[4] = {-1, -1, -1, 1}, slope[2] = {0.5f, 2};
  struct loom_kt pr[2] = {KT(LOOM_DT_F32, px, 1, 2, 2), KT(LOOM_DT_F32, slope, 2, 1)}, po = KT(LOOM_DT_F32, out, 1, 2, 2);
  assert_int_equal(kcall("PRelu", 16, pr, 2, &po, 1, NULL, 0), LOOM_OK);
  NEAR(out[0], -0.5), NEAR(out[2], -2), NEAR(out[3], 1);
}

static void test_integer_semantics(void **state) {
  (void)state;
  int8_t a[4] = {100, -100, 7, -7}, b[4] = {100, -100, 2, 2}, y[4];
  struct loom_kt ab[2] = {KT(LOOM_DT_I8, a, 4), KT(LOOM_DT_I8, b, 4)}, o = KT(LOOM_DT_I8, y, 4);
  assert_int_equal(kcall("Add", 14, ab, 2, &o, 1, NULL, 0), LOOM_OK); /* wraps */
  assert_int_equal(y[0], -56), assert_int_equal(y[1], 56);
  assert_int_equal(kcall("Div", 14, ab, 2, &o, 1, NULL, 0), LOOM_OK); /* truncates */
  assert_int_equal(y[2], 3), assert_int_equal(y[3], -3);
  assert_int_equal(kcall("Mod", 13, ab, 2, &o, 1, NULL, 0), LOOM_OK); /* the divisor's sign */
  assert_int_equal(y[2], 1), assert_int_equal(y[3], 1);
  struct loom_kattr fm = attr_i("fmod", 1);
  assert_int_equal(kcall("Mod", 13, ab, 2, &o, 1, &fm, 1), LOOM_OK); /* the dividend's sign */
  assert_int_equal(y[3], -1);
  b[2] = 0;
  assert_int_equal(kcall("Div", 14, ab, 2, &o, 1, NULL, 0), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "division by zero"));
  int64_t mn[1] = {INT64_MIN}, m1[1] = {-1}, q[1];
  struct loom_kt d[2] = {KT(LOOM_DT_I64, mn, 1), KT(LOOM_DT_I64, m1, 1)}, qo = KT(LOOM_DT_I64, q, 1);
  assert_int_equal(kcall("Div", 14, d, 2, &qo, 1, NULL, 0), LOOM_OK); /* no trap */
  assert_true(q[0] == INT64_MIN);
  uint64_t ua[1] = {UINT64_MAX}, ub[1] = {1};
  uint8_t gt[1];
  struct loom_kt uu[2] = {KT(LOOM_DT_U64, ua, 1), KT(LOOM_DT_U64, ub, 1)}, go = KT(LOOM_DT_BOOL, gt, 1);
  assert_int_equal(kcall("Greater", 13, uu, 2, &go, 1, NULL, 0), LOOM_OK); /* unsigned compare */
  assert_int_equal(gt[0], 1);
  uint8_t s[2] = {1, 200}, n[2] = {9, 1}, r[2];
  struct loom_kt sh[2] = {KT(LOOM_DT_U8, s, 2), KT(LOOM_DT_U8, n, 2)}, so = KT(LOOM_DT_U8, r, 2);
  struct loom_kattr left = attr_s("direction", "LEFT");
  assert_int_equal(kcall("BitShift", 11, sh, 2, &so, 1, &left, 1), LOOM_OK);
  assert_int_equal(r[0], 0), assert_int_equal(r[1], 144); /* shifted out; wrapped */
  int32_t base[2] = {3, 2}, ex[2] = {4, -1}, pw[2];
  struct loom_kt pp[2] = {KT(LOOM_DT_I32, base, 2), KT(LOOM_DT_I32, ex, 2)}, ppo = KT(LOOM_DT_I32, pw, 2);
  assert_int_equal(kcall("Pow", 15, pp, 2, &ppo, 1, NULL, 0), LOOM_OK);
  assert_int_equal(pw[0], 81), assert_int_equal(pw[1], 0);
}

static void test_cast(void **state) {
  (void)state;
  float x[6] = {300.5f, -300.5f, NAN, -2.9f, 1e20f, 0};
  int8_t i8[6];
  uint8_t bl[6];
  struct loom_kt in = KT(LOOM_DT_F32, x, 6), o8 = KT(LOOM_DT_I8, i8, 6), ob = KT(LOOM_DT_BOOL, bl, 6);
  struct loom_kattr to8 = attr_i("to", 3), tob = attr_i("to", 9), tostr = attr_i("to", 8);
  assert_int_equal(kcall("Cast", 13, &in, 1, &o8, 1, &to8, 1), LOOM_OK);
  int8_t want8[6] = {127, -128, 0, -2, 127, 0};
  assert_memory_equal(i8, want8, 6);
  assert_int_equal(kcall("Cast", 13, &in, 1, &ob, 1, &tob, 1), LOOM_OK);
  uint8_t wantb[6] = {1, 1, 1, 1, 1, 0};
  assert_memory_equal(bl, wantb, 6);
  int64_t wide[2] = {300, -129};
  struct loom_kt iw = KT(LOOM_DT_I64, wide, 2), o2 = KT(LOOM_DT_I8, i8, 2);
  assert_int_equal(kcall("Cast", 13, &iw, 1, &o2, 1, &to8, 1), LOOM_OK); /* integers wrap */
  assert_int_equal(i8[0], 44), assert_int_equal(i8[1], 127);
  uint64_t big = UINT64_MAX;
  float f;
  struct loom_kt ub = KT(LOOM_DT_U64, &big, 1), of = KT(LOOM_DT_F32, &f, 1);
  struct loom_kattr tof = attr_i("to", 1);
  assert_int_equal(kcall("Cast", 13, &ub, 1, &of, 1, &tof, 1), LOOM_OK);
  assert_true(f == 0x1p64f);
  double dv = 1.0 + 0x1p-11 + 0x1p-40;
  uint16_t h;
  struct loom_kt dd = KT(LOOM_DT_F64, &dv, 1), oh = KT(LOOM_DT_F16, &h, 1);
  struct loom_kattr toh = attr_i("to", 10);
  assert_int_equal(kcall("Cast", 13, &dd, 1, &oh, 1, &toh, 1), LOOM_OK);
  assert_int_equal(h, 0x3c01); /* one rounding from double */
  assert_int_equal(kcall("Cast", 13, &in, 1, &o8, 1, &tostr, 1), LOOM_E_UNSUPPORTED);
  assert_non_null(strstr(kmsg, "string"));
  assert_int_equal(kcall("Cast", 13, &in, 1, &o8, 1, &tof, 1), LOOM_E_INVALID); /* output type differs */
  assert_int_equal(kcall("Cast", 13, &in, 1, &o8, 1, NULL, 0), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "to"));
  struct loom_kt like[2] = {in, KT(LOOM_DT_I8, i8, 1)};
  assert_int_equal(kcall("CastLike", 15, like, 2, &o8, 1, NULL, 0), LOOM_OK);
  assert_int_equal(i8[3], -2);
}

static void test_dynamic_capacity(void **state) {
  (void)state;
  float x[6] = {1, 0, 2, 0, 3, 4};
  int64_t out[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  struct loom_kt in = KT(LOOM_DT_F32, x, 2, 3), y = KT(LOOM_DT_I64, out, 2, 3); /* holds 6 < 2 x 4 */
  assert_int_equal(kcall("NonZero", 13, &in, 1, &y, 1, NULL, 0), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "holds"));
  assert_true(out[0] == -1); /* nothing written */
  y = KT(LOOM_DT_I64, out, 2, 4);
  assert_int_equal(kcall("NonZero", 13, &in, 1, &y, 1, NULL, 0), LOOM_OK);
  assert_int_equal(y.dims[1], 4);
  int64_t rows[4] = {0, 0, 1, 1}, cols[4] = {0, 2, 1, 2};
  assert_memory_equal(out, rows, sizeof rows), assert_memory_equal(out + 4, cols, sizeof cols);
  /* Unique: Y is data-dependent, inverse_indices is not. */
  float u[5] = {2, 1, 2, 3, 1}, uy[5];
  int64_t ui[5], uinv[5], uc[5];
  struct loom_kt uin = KT(LOOM_DT_F32, u, 5);
  struct loom_kt uo[4] = {KT(LOOM_DT_F32, uy, 5), KT(LOOM_DT_I64, ui, 5), KT(LOOM_DT_I64, uinv, 5), KT(LOOM_DT_I64, uc, 5)};
  struct loom_kattr unsorted = attr_i("sorted", 0);
  assert_int_equal(kcall("Unique", 11, &uin, 1, uo, 4, &unsorted, 1), LOOM_OK);
  assert_int_equal(uo[0].dims[0], 3);
  NEAR(uy[0], 2), NEAR(uy[1], 1), NEAR(uy[2], 3);
  assert_int_equal(uinv[4], 1), assert_int_equal(uc[0], 2), assert_int_equal(ui[2], 3);
  uo[0].dims[0] = 2;
  assert_int_equal(kcall("Unique", 11, &uin, 1, uo, 4, NULL, 0), LOOM_E_INVALID);
}

/* The capacities callers allocate for dynamic outputs, from shapes alone. */
static void test_capacity(void **state) {
  (void)state;
  struct loom_kt in[2] = {KT(LOOM_DT_F32, NULL, 2, 3, 4), KT(LOOM_DT_F32, NULL, 1, 5, 7)}, cap, outs[4];
  struct loom_kcall c = {"NonZero", 13, in, 1, outs, 1, NULL, 0, kmsg};
  assert_int_equal(loom_kernel_capacity(&c, 0, &cap), LOOM_OK);
  assert_int_equal(cap.rank, 2), assert_int_equal(cap.dims[0], 3), assert_int_equal(cap.dims[1], 24);
  struct loom_kattr ax = attr_i("axis", -2);
  c = (struct loom_kcall){"Unique", 11, in, 1, outs, 4, &ax, 1, kmsg};
  assert_int_equal(loom_kernel_capacity(&c, 0, &cap), LOOM_OK);
  assert_int_equal(cap.rank, 3), assert_int_equal(cap.dims[1], 3);
  assert_int_equal(loom_kernel_capacity(&c, 3, &cap), LOOM_OK);
  assert_int_equal(cap.rank, 1), assert_int_equal(cap.dims[0], 3);
  assert_int_equal(loom_kernel_capacity(&c, 4, &cap), LOOM_E_INVALID); /* no such output */
  c = (struct loom_kcall){"Compress", 11, in, 2, outs, 1, NULL, 0, kmsg};
  assert_int_equal(loom_kernel_capacity(&c, 0, &cap), LOOM_OK);
  assert_int_equal(cap.rank, 1), assert_int_equal(cap.dims[0], 24);
  in[0] = KT(LOOM_DT_F32, NULL, 2, 5, 4);
  c = (struct loom_kcall){"NonMaxSuppression", 11, in, 2, outs, 1, NULL, 0, kmsg};
  assert_int_equal(loom_kernel_capacity(&c, 0, &cap), LOOM_OK);
  assert_int_equal(cap.dims[0], 35), assert_int_equal(cap.dims[1], 3);
  c.op = "Relu";
  assert_int_equal(loom_kernel_capacity(&c, 0, &cap), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "Relu"));
  for (int i = 0; i < loom_kernel_count(); i++) { /* a capacity exactly for the dynamic kernels */
    const struct loom_kernel *k = loom_kernel_at(i);
    assert_int_equal(k->capacity != NULL, (k->flags & LOOM_KERNEL_DYNAMIC) != 0);
  }
}

/* Refusals: each call is wrong in one way and must say so. */
static void test_refusals(void **state) {
  (void)state;
  float f[64] = {0};
  int64_t i64[8] = {0, 1, 2, 3, 4, 5, 6, 7}, bad_idx[2] = {0, 9}, perm[2] = {0, 0};
  struct {
    const char *op;
    int opset;
    struct loom_kt in[3];
    int n_in;
    struct loom_kt out;
    struct loom_kattr attr;
    int n_attr;
    loom_status st;
    const char *text;
  } cases[] = {
      {"Transpose", 13, {KT(LOOM_DT_F32, f, 2, 2)}, 1, KT(LOOM_DT_F32, f, 2, 2), attr_ints("perm", perm, 2), 1, LOOM_E_INVALID, "perm"},
      {"Gather", 13, {KT(LOOM_DT_F32, f, 3, 2), KT(LOOM_DT_I64, bad_idx, 2)}, 2, KT(LOOM_DT_F32, f, 2, 2), {0}, 0, LOOM_E_INVALID, "index 9"},
      {"Gather", 13, {KT(LOOM_DT_F32, f, 3, 2), KT(LOOM_DT_F32, f, 2)}, 2, KT(LOOM_DT_F32, f, 2, 2), {0}, 0, LOOM_E_UNSUPPORTED, "indices"},
      {"Softmax", 13, {KT(LOOM_DT_F32, f, 2, 2)}, 1, KT(LOOM_DT_F32, f, 2, 2), attr_i("axis", 2), 1, LOOM_E_INVALID, "axis 2"},
      {"Relu", 14, {KT(LOOM_DT_U8, f, 4)}, 1, KT(LOOM_DT_U8, f, 4), {0}, 0, LOOM_E_UNSUPPORTED, "uint8"},
      {"Exp", 13, {KT(LOOM_DT_F32, f, 4)}, 1, KT(LOOM_DT_F32, f, 5), {0}, 0, LOOM_E_INVALID, "shape"},
      {"Concat", 13, {KT(LOOM_DT_F32, f, 2, 2), KT(LOOM_DT_F32, f, 4)}, 2, KT(LOOM_DT_F32, f, 4, 2), attr_i("axis", 0), 1, LOOM_E_INVALID, "rank"},
      {"Concat", 13, {KT(LOOM_DT_F32, f, 2)}, 1, KT(LOOM_DT_F32, f, 2), {0}, 0, LOOM_E_INVALID, "axis"},
      {"Conv", 11, {KT(LOOM_DT_F32, f, 1, 3, 4, 4), KT(LOOM_DT_F32, f, 2, 2, 1, 1)}, 2, KT(LOOM_DT_F32, f, 1, 2, 4, 4), {0}, 0, LOOM_E_INVALID, "group"},
      {"Conv", 11, {KT(LOOM_DT_F32, f, 1, 1, 2, 2), KT(LOOM_DT_F32, f, 1, 1, 3, 3)}, 2, KT(LOOM_DT_F32, f, 1, 1, 1, 1), {0}, 0, LOOM_E_INVALID, "larger"},
      {"MaxPool", 12, {KT(LOOM_DT_F32, f, 1, 1, 4, 4)}, 1, KT(LOOM_DT_F32, f, 1, 1, 2, 2), {0}, 0, LOOM_E_INVALID, "kernel_shape"},
      {"MatMul", 13, {KT(LOOM_DT_F32, f, 2, 3), KT(LOOM_DT_F32, f, 2, 3)}, 2, KT(LOOM_DT_F32, f, 2, 3), {0}, 0, LOOM_E_INVALID, "inner"},
      {"Reshape", 14, {KT(LOOM_DT_F32, f, 6), KT(LOOM_DT_I64, i64 + 3, 2)}, 2, KT(LOOM_DT_F32, f, 2, 3), {0}, 0, LOOM_E_INVALID, "shape value"},
      {"Range", 11, {KT0(LOOM_DT_F32, f), KT0(LOOM_DT_F32, f), KT0(LOOM_DT_F32, f)}, 3, KT(LOOM_DT_F32, f, 0), {0}, 0, LOOM_E_INVALID, "delta"},
      {"Einsum", 12, {KT(LOOM_DT_F32, f, 2, 2)}, 1, KT(LOOM_DT_F32, f, 2), attr_s("equation", "i?->i"), 1, LOOM_E_INVALID, "label"},
      {"Einsum", 12, {KT(LOOM_DT_F32, f, 2, 2)}, 1, KT(LOOM_DT_F32, f, 2), attr_s("equation", "ijk->i"), 1, LOOM_E_INVALID, "rank"},
      {"Resize", 13, {KT(LOOM_DT_F32, f, 4)}, 1, KT(LOOM_DT_F32, f, 8), {0}, 0, LOOM_E_INVALID, "scales"},
      {"Resize", 13, {KT(LOOM_DT_F32, f, 4), ABSENT, KT(LOOM_DT_F32, f, 1)}, 3, KT(LOOM_DT_F32, f, 0), attr_s("mode", "area"), 1, LOOM_E_UNSUPPORTED, "area"},
      {"TopK", 11, {KT(LOOM_DT_F32, f, 4), KT(LOOM_DT_I64, i64 + 5, 1)}, 2, KT(LOOM_DT_F32, f, 5), {0}, 0, LOOM_E_INVALID, "takes 2 output(s)"},
      {"LSTM", 14, {KT(LOOM_DT_F32, f, 2, 1, 3), KT(LOOM_DT_F32, f, 1, 8, 3), KT(LOOM_DT_F32, f, 1, 8, 3)}, 3, KT(LOOM_DT_F32, f, 2, 1, 1, 2), attr_i("hidden_size", 2), 1, LOOM_E_INVALID, "input 2"},
      {"GRU", 14, {KT(LOOM_DT_F32, f, 2, 1, 3), KT(LOOM_DT_F32, f, 1, 6, 3), KT(LOOM_DT_F32, f, 1, 6, 2)}, 3, KT(LOOM_DT_F32, f, 2, 1, 1, 2), attr_s("direction", "sideways"), 1, LOOM_E_UNSUPPORTED, "sideways"},
      {"QuantizeLinear", 13, {KT(LOOM_DT_F32, f, 4), KT(LOOM_DT_F32, f, 3)}, 2, KT(LOOM_DT_U8, f, 4), attr_i("axis", 0), 1, LOOM_E_INVALID, "scales"},
      {"Mod", 13, {KT(LOOM_DT_F32, f, 2), KT(LOOM_DT_F32, f, 2)}, 2, KT(LOOM_DT_F32, f, 2), {0}, 0, LOOM_E_INVALID, "fmod"},
      {"OneHot", 11, {KT(LOOM_DT_I64, i64, 2), KT0(LOOM_DT_I64, i64), KT(LOOM_DT_F32, f, 2)}, 3, KT(LOOM_DT_F32, f, 2, 1), {0}, 0, LOOM_E_INVALID, "depth"},
      {"Det", 11, {KT(LOOM_DT_F32, f, 2, 3)}, 1, KT0(LOOM_DT_F32, f), {0}, 0, LOOM_E_INVALID, "square"},
      {"ConstantOfShape", 9, {KT(LOOM_DT_I64, i64 + 2, 1)}, 1, KT(LOOM_DT_F32, f, 3), {0}, 0, LOOM_E_INVALID, "shape input"},
      {"DepthToSpace", 13, {KT(LOOM_DT_F32, f, 1, 3, 2, 2)}, 1, KT(LOOM_DT_F32, f, 1, 1, 4, 4), attr_i("blocksize", 2), 1, LOOM_E_INVALID, "divisible"},
      {"BatchNormalization", 15, {KT(LOOM_DT_F32, f, 1, 2, 2)}, 1, KT(LOOM_DT_F32, f, 1, 2, 2), {0}, 0, LOOM_E_INVALID, "takes 5 input(s)"},
      {"LRN", 13, {KT(LOOM_DT_F32, f, 1, 2, 2)}, 1, KT(LOOM_DT_F32, f, 1, 2, 2), {0}, 0, LOOM_E_INVALID, "size"},
      {"Tile", 13, {KT(LOOM_DT_F32, f, 2), KT(LOOM_DT_I64, i64, 2)}, 2, KT(LOOM_DT_F32, f, 0), {0}, 0, LOOM_E_INVALID, "repeats"},
      {"ScatterND", 16, {KT(LOOM_DT_F32, f, 4), KT(LOOM_DT_I64, bad_idx + 1, 1, 1), KT(LOOM_DT_F32, f, 1)}, 3, KT(LOOM_DT_F32, f, 4), {0}, 0, LOOM_E_INVALID, "index 9"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kmsg[0] = 0;
    loom_status st = kcall(cases[i].op, cases[i].opset, cases[i].in, cases[i].n_in, &cases[i].out, 1,
                           &cases[i].attr, cases[i].n_attr);
    if (st != cases[i].st || !strstr(kmsg, cases[i].text))
      fail_msg("case %zu (%s): status %s, message \"%s\"; expected %s with \"%s\"", i, cases[i].op,
               loom_status_name(st), kmsg, loom_status_name(cases[i].st), cases[i].text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),         cmocka_unit_test(test_broadcast_ops),
      cmocka_unit_test(test_integer_semantics), cmocka_unit_test(test_cast),
      cmocka_unit_test(test_dynamic_capacity), cmocka_unit_test(test_capacity),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
