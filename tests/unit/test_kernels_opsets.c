/*
 * test_kernels_opsets.c - the host kernels where ONNX changed an op's
 * meaning between opsets 7 and 17: each case runs the same data through
 * the old and the new form and checks both against hand-computed results
 * (Softmax's 2-D coercion before 13, Clip/Pad/Slice/Split/Squeeze/
 * ReduceSum/TopK moving attributes to inputs, Dropout's training mode,
 * Resize's coordinates before 11, ArgMax's select_last_index, Shape's
 * start/end, Reshape's allowzero, OneHot's negative indices).
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

static void test_softmax_coercion(void **state) {
  (void)state;
  /* [2, 3, 2] at axis 1: opset 11 normalises over 6 elements, 13 over the 3. */
  float x[12], y[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(i % 5) * 0.5f;
  struct loom_kt in = KT(LOOM_DT_F32, x, 2, 3, 2), out = KT(LOOM_DT_F32, y, 2, 3, 2);
  struct loom_kattr axis = attr_i("axis", 1);
  assert_int_equal(kcall("Softmax", 11, &in, 1, &out, 1, &axis, 1), LOOM_OK);
  for (int b = 0; b < 2; b++) {
    double s = 0;
    for (int i = 0; i < 6; i++) s += y[b * 6 + i];
    NEAR(s, 1);
  }
  assert_int_equal(kcall("Softmax", 13, &in, 1, &out, 1, &axis, 1), LOOM_OK);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 2; i++) NEAR(y[b * 6 + i] + y[b * 6 + 2 + i] + y[b * 6 + 4 + i], 1);
  /* Default axis: 1 before 13, -1 from 13. */
  assert_int_equal(kcall("LogSoftmax", 13, &in, 1, &out, 1, NULL, 0), LOOM_OK);
  NEAR(expf(y[0]) + expf(y[1]), 1);
  assert_int_equal(kcall("Hardmax", 9, &in, 1, &out, 1, NULL, 0), LOOM_OK);
  double ones = 0;
  for (int i = 0; i < 12; i++) ones += y[i];
  NEAR(ones, 2); /* one 1 per batch row of 6 */
}

static void test_clip_forms(void **state) {
  (void)state;
  float x[4] = {-2, -0.5f, 0.5f, 2}, y[4], lo = -1, hi = 1;
  struct loom_kt in[3] = {KT(LOOM_DT_F32, x, 4), KT0(LOOM_DT_F32, &lo), KT0(LOOM_DT_F32, &hi)};
  struct loom_kt out = KT(LOOM_DT_F32, y, 4);
  struct loom_kattr a[2] = {attr_f("min", -0.25f), attr_f("max", 0.25f)};
  assert_int_equal(kcall("Clip", 6, in, 1, &out, 1, a, 2), LOOM_OK); /* attributes */
  NEAR(y[0], -0.25), NEAR(y[3], 0.25);
  assert_int_equal(kcall("Clip", 11, in, 3, &out, 1, a, 2), LOOM_OK); /* inputs; attributes ignored */
  NEAR(y[0], -1), NEAR(y[1], -0.5), NEAR(y[3], 1);
  in[1] = ABSENT; /* only max */
  assert_int_equal(kcall("Clip", 13, in, 3, &out, 1, NULL, 0), LOOM_OK);
  NEAR(y[0], -2), NEAR(y[3], 1);
  int8_t xi[3] = {-100, 5, 100}, yi[3], li = -10, hi8 = 10;
  struct loom_kt ii[3] = {KT(LOOM_DT_I8, xi, 3), KT0(LOOM_DT_I8, &li), KT0(LOOM_DT_I8, &hi8)}, oi = KT(LOOM_DT_I8, yi, 3);
  assert_int_equal(kcall("Clip", 12, ii, 3, &oi, 1, NULL, 0), LOOM_OK);
  assert_int_equal(yi[0], -10), assert_int_equal(yi[1], 5), assert_int_equal(yi[2], 10);
  assert_int_equal(kcall("Clip", 11, ii, 3, &oi, 1, NULL, 0), LOOM_E_UNSUPPORTED); /* ints from 12 */
  assert_non_null(strstr(kmsg, "int8"));
}

static void test_pad_forms(void **state) {
  (void)state;
  int32_t x[3] = {1, 2, 3}, y[7];
  int64_t pads[2] = {2, 2};
  float v = 9;
  int32_t cv = 7;
  struct loom_kt in[3] = {KT(LOOM_DT_I32, x, 3), KT(LOOM_DT_I64, pads, 2), KT0(LOOM_DT_I32, &cv)};
  struct loom_kt out = KT(LOOM_DT_I32, y, 7);
  struct loom_kattr a[3] = {attr_ints("pads", pads, 2), attr_f("value", v), attr_s("mode", "constant")};
  assert_int_equal(kcall("Pad", 2, in, 1, &out, 1, a, 3), LOOM_OK);
  assert_int_equal(y[0], 9), assert_int_equal(y[2], 1), assert_int_equal(y[6], 9);
  assert_int_equal(kcall("Pad", 11, in, 3, &out, 1, NULL, 0), LOOM_OK);
  assert_int_equal(y[0], 7), assert_int_equal(y[4], 3), assert_int_equal(y[5], 7);
  struct loom_kattr refl = attr_s("mode", "reflect"), edge = attr_s("mode", "edge");
  assert_int_equal(kcall("Pad", 13, in, 2, &out, 1, &refl, 1), LOOM_OK);
  int32_t want_r[7] = {3, 2, 1, 2, 3, 2, 1}, want_e[7] = {1, 1, 1, 2, 3, 3, 3};
  assert_memory_equal(y, want_r, sizeof y);
  assert_int_equal(kcall("Pad", 13, in, 2, &out, 1, &edge, 1), LOOM_OK);
  assert_memory_equal(y, want_e, sizeof y);
  int64_t crop[2] = {-1, 0};
  struct loom_kt cin[2] = {in[0], KT(LOOM_DT_I64, crop, 2)}, cout = KT(LOOM_DT_I32, y, 2);
  assert_int_equal(kcall("Pad", 13, cin, 2, &cout, 1, NULL, 0), LOOM_OK); /* negative pads crop */
  assert_int_equal(y[0], 2), assert_int_equal(y[1], 3);
  struct loom_kattr wrap = attr_s("mode", "wrap");
  assert_int_equal(kcall("Pad", 13, in, 2, &out, 1, &wrap, 1), LOOM_E_UNSUPPORTED);
  assert_non_null(strstr(kmsg, "wrap"));
}

static void test_slice_forms(void **state) {
  (void)state;
  float x[10], y[10];
  for (int i = 0; i < 10; i++) x[i] = (float)i;
  int64_t starts[1] = {1}, ends[1] = {8}, axes[1] = {0};
  struct loom_kattr a[3] = {attr_ints("starts", starts, 1), attr_ints("ends", ends, 1), attr_ints("axes", axes, 1)};
  struct loom_kt in = KT(LOOM_DT_F32, x, 10), out = KT(LOOM_DT_F32, y, 7);
  assert_int_equal(kcall("Slice", 9, &in, 1, &out, 1, a, 3), LOOM_OK);
  NEAR(y[0], 1), NEAR(y[6], 7);
  /* Opset 10: inputs, a negative step from the clamped end. */
  int64_t s2[1] = {100}, e2[1] = {-100}, st2[1] = {-3};
  struct loom_kt ins[5] = {in, KT(LOOM_DT_I64, s2, 1), KT(LOOM_DT_I64, e2, 1), KT(LOOM_DT_I64, axes, 1), KT(LOOM_DT_I64, st2, 1)};
  struct loom_kt o2 = KT(LOOM_DT_F32, y, 4);
  assert_int_equal(kcall("Slice", 10, ins, 5, &o2, 1, NULL, 0), LOOM_OK);
  NEAR(y[0], 9), NEAR(y[1], 6), NEAR(y[2], 3), NEAR(y[3], 0);
  st2[0] = 0;
  assert_int_equal(kcall("Slice", 13, ins, 5, &o2, 1, NULL, 0), LOOM_E_INVALID);
  assert_non_null(strstr(kmsg, "step"));
}

static void test_split_squeeze_forms(void **state) {
  (void)state;
  float x[6] = {0, 1, 2, 3, 4, 5}, a[6], b[6];
  int64_t parts[2] = {2, 4};
  struct loom_kt in[2] = {KT(LOOM_DT_F32, x, 6), KT(LOOM_DT_I64, parts, 2)};
  struct loom_kt out[2] = {KT(LOOM_DT_F32, a, 2), KT(LOOM_DT_F32, b, 4)};
  struct loom_kattr sp = attr_ints("split", parts, 2);
  assert_int_equal(kcall("Split", 11, in, 1, out, 2, &sp, 1), LOOM_OK);
  NEAR(a[1], 1), NEAR(b[0], 2);
  assert_int_equal(kcall("Split", 13, in, 2, out, 2, NULL, 0), LOOM_OK);
  NEAR(b[3], 5);
  out[0].dims[0] = 3, out[1].dims[0] = 3; /* equal parts without a split */
  assert_int_equal(kcall("Split", 13, in, 1, out, 2, NULL, 0), LOOM_OK);
  NEAR(b[0], 3);
  /* Squeeze: axes attribute (11) or input (13); none squeezes every 1. */
  int64_t ax[1] = {-3};
  struct loom_kt sq[2] = {KT(LOOM_DT_F32, x, 1, 6, 1), KT(LOOM_DT_I64, ax, 1)};
  struct loom_kt so = KT(LOOM_DT_F32, a, 6, 1);
  struct loom_kattr sa = attr_ints("axes", ax, 1);
  assert_int_equal(kcall("Squeeze", 11, sq, 1, &so, 1, &sa, 1), LOOM_OK);
  assert_int_equal(kcall("Squeeze", 13, sq, 2, &so, 1, NULL, 0), LOOM_OK);
  so = KT(LOOM_DT_F32, a, 6);
  assert_int_equal(kcall("Squeeze", 13, sq, 1, &so, 1, NULL, 0), LOOM_OK);
  assert_int_equal(kcall("Squeeze", 13, sq, 2, &so, 1, NULL, 0), LOOM_E_INVALID); /* shape disagrees */
  int64_t uax[2] = {0, 3};
  struct loom_kt un[2] = {KT(LOOM_DT_F32, x, 2, 3), KT(LOOM_DT_I64, uax, 2)}, uo = KT(LOOM_DT_F32, a, 1, 2, 3, 1);
  struct loom_kattr ua = attr_ints("axes", uax, 2);
  assert_int_equal(kcall("Unsqueeze", 11, un, 1, &uo, 1, &ua, 1), LOOM_OK);
  assert_int_equal(kcall("Unsqueeze", 13, un, 2, &uo, 1, NULL, 0), LOOM_OK);
}

static void test_reducesum_forms(void **state) {
  (void)state;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  int64_t ax[1] = {1};
  struct loom_kt in[2] = {KT(LOOM_DT_F32, x, 2, 3), KT(LOOM_DT_I64, ax, 1)}, out = KT(LOOM_DT_F32, y, 2, 1);
  struct loom_kattr a = attr_ints("axes", ax, 1);
  assert_int_equal(kcall("ReduceSum", 11, in, 1, &out, 1, &a, 1), LOOM_OK);
  NEAR(y[0], 6), NEAR(y[1], 15);
  assert_int_equal(kcall("ReduceSum", 13, in, 2, &out, 1, NULL, 0), LOOM_OK);
  NEAR(y[1], 15);
  out = KT(LOOM_DT_F32, y, 1, 1); /* no axes: everything */
  assert_int_equal(kcall("ReduceSum", 13, in, 1, &out, 1, NULL, 0), LOOM_OK);
  NEAR(y[0], 21);
  struct loom_kattr noop = attr_i("noop_with_empty_axes", 1);
  out = KT(LOOM_DT_F32, y, 2, 3);
  assert_int_equal(kcall("ReduceSum", 13, in, 1, &out, 1, &noop, 1), LOOM_OK);
  NEAR(y[5], 6);
  /* ReduceMean kept its attribute through 17. */
  out = KT(LOOM_DT_F32, y, 2, 1);
  assert_int_equal(kcall("ReduceMean", 17, in, 1, &out, 1, &a, 1), LOOM_OK);
  NEAR(y[0], 2);
}

static void test_topk_forms(void **state) {
  (void)state;
  float x[5] = {3, 1, 4, 1, 5}, v[2];
  int64_t k = 2, idx[2];
  struct loom_kt in[2] = {KT(LOOM_DT_F32, x, 5), KT(LOOM_DT_I64, &k, 1)};
  struct loom_kt out[2] = {KT(LOOM_DT_F32, v, 2), KT(LOOM_DT_I64, idx, 2)};
  struct loom_kattr ka = attr_i("k", 2), small = attr_i("largest", 0);
  assert_int_equal(kcall("TopK", 1, in, 1, out, 2, &ka, 1), LOOM_OK);
  NEAR(v[0], 5), assert_int_equal(idx[1], 2);
  assert_int_equal(kcall("TopK", 10, in, 2, out, 2, &small, 1), LOOM_OK); /* largest: 11 on */
  NEAR(v[0], 5);
  assert_int_equal(kcall("TopK", 11, in, 2, out, 2, &small, 1), LOOM_OK);
  NEAR(v[0], 1), NEAR(v[1], 1), assert_int_equal(idx[0], 1), assert_int_equal(idx[1], 3); /* ties by index */
}

static void test_dropout_forms(void **state) {
  (void)state;
  float x[4] = {1, 2, 3, 4}, y[4], ratio = 0;
  uint8_t train = 1, mask[4];
  struct loom_kt in[3] = {KT(LOOM_DT_F32, x, 4), KT0(LOOM_DT_F32, &ratio), KT0(LOOM_DT_BOOL, &train)};
  struct loom_kt out[2] = {KT(LOOM_DT_F32, y, 4), KT(LOOM_DT_BOOL, mask, 4)};
  struct loom_kattr r = attr_f("ratio", 0.5f);
  assert_int_equal(kcall("Dropout", 7, in, 1, out, 2, &r, 1), LOOM_OK); /* inference: identity */
  NEAR(y[3], 4), assert_int_equal(mask[0], 1);
  assert_int_equal(kcall("Dropout", 12, in, 3, out, 2, NULL, 0), LOOM_OK); /* training, ratio 0 */
  NEAR(y[2], 3);
  ratio = 0.5f;
  assert_int_equal(kcall("Dropout", 13, in, 3, out, 2, NULL, 0), LOOM_E_UNSUPPORTED);
  assert_non_null(strstr(kmsg, "random"));
}

static void test_resize_coordinates(void **state) {
  (void)state;
  /* 4 -> 8 nearest: opset 10 maps x to floor(x / 2) (asymmetric); 11's
   * default half_pixel + round_prefer_floor maps x to round((x+.5)/2-.5). */
  float x[4] = {0, 1, 2, 3}, y[8], sc[1] = {2};
  struct loom_kt in10[2] = {KT(LOOM_DT_F32, x, 4), KT(LOOM_DT_F32, sc, 1)}, out = KT(LOOM_DT_F32, y, 8);
  assert_int_equal(kcall("Resize", 10, in10, 2, &out, 1, NULL, 0), LOOM_OK);
  float w10[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  assert_memory_equal(y, w10, sizeof y);
  struct loom_kt in11[3] = {in10[0], ABSENT, in10[1]};
  assert_int_equal(kcall("Resize", 11, in11, 3, &out, 1, NULL, 0), LOOM_OK);
  float w11[8] = {0, 0, 1, 1, 2, 2, 3, 3}; /* (x+.5)/2-.5 = -.25,.25,.75,1.25,...: ties never occur */
  assert_memory_equal(y, w11, sizeof y);
  struct loom_kattr lin = attr_s("mode", "linear"), ac = attr_s("coordinate_transformation_mode", "align_corners");
  struct loom_kattr both[2] = {lin, ac};
  assert_int_equal(kcall("Resize", 13, in11, 3, &out, 1, both, 2), LOOM_OK);
  NEAR(y[7], 3), NEAR(y[1], 3.0 / 7);
  assert_int_equal(kcall("Resize", 10, in10, 2, &out, 1, &lin, 1), LOOM_OK); /* asymmetric linear */
  NEAR(y[1], 0.5), NEAR(y[7], 3);
  struct loom_kattr cub = attr_s("mode", "cubic");
  assert_int_equal(kcall("Resize", 10, in10, 2, &out, 1, &cub, 1), LOOM_E_UNSUPPORTED);
}

static void test_small_changes(void **state) {
  (void)state;
  /* ArgMax select_last_index (12). */
  float x[4] = {1, 3, 3, 0};
  int64_t y, shp[4];
  struct loom_kt in = KT(LOOM_DT_F32, x, 4), out = KT(LOOM_DT_I64, &y, 1);
  struct loom_kattr last = attr_i("select_last_index", 1);
  assert_int_equal(kcall("ArgMax", 11, &in, 1, &out, 1, &last, 1), LOOM_OK);
  assert_int_equal(y, 1);
  assert_int_equal(kcall("ArgMax", 12, &in, 1, &out, 1, &last, 1), LOOM_OK);
  assert_int_equal(y, 2);
  /* Shape start/end (15). */
  float big[24];
  struct loom_kt b = KT(LOOM_DT_F32, big, 2, 3, 4), so = KT(LOOM_DT_I64, shp, 2);
  struct loom_kattr se[2] = {attr_i("start", -2), attr_i("end", 100)};
  assert_int_equal(kcall("Shape", 15, &b, 1, &so, 1, se, 2), LOOM_OK);
  assert_int_equal(shp[0], 3), assert_int_equal(shp[1], 4);
  so.dims[0] = 3;
  assert_int_equal(kcall("Shape", 13, &b, 1, &so, 1, se, 2), LOOM_OK); /* ignored before 15 */
  /* Reshape allowzero (14): 0 copies the input dim, or is a real 0. */
  int64_t s[2] = {0, 12};
  struct loom_kt rin[2] = {KT(LOOM_DT_F32, big, 2, 12), KT(LOOM_DT_I64, s, 2)}, ro = KT(LOOM_DT_F32, big, 2, 12);
  struct loom_kattr az = attr_i("allowzero", 1);
  assert_int_equal(kcall("Reshape", 13, rin, 2, &ro, 1, &az, 1), LOOM_OK);
  assert_int_equal(kcall("Reshape", 14, rin, 2, &ro, 1, &az, 1), LOOM_E_INVALID);
  /* OneHot negative indices (11). */
  int64_t ind[1] = {-1};
  float depth = 3, vals[2] = {0, 1}, oh[3];
  struct loom_kt oin[3] = {KT(LOOM_DT_I64, ind, 1), KT0(LOOM_DT_F32, &depth), KT(LOOM_DT_F32, vals, 2)};
  struct loom_kt oo = KT(LOOM_DT_F32, oh, 1, 3);
  assert_int_equal(kcall("OneHot", 11, oin, 3, &oo, 1, NULL, 0), LOOM_OK);
  NEAR(oh[2], 1);
  assert_int_equal(kcall("OneHot", 9, oin, 3, &oo, 1, NULL, 0), LOOM_OK);
  NEAR(oh[2], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_softmax_coercion), cmocka_unit_test(test_clip_forms),
      cmocka_unit_test(test_pad_forms),        cmocka_unit_test(test_slice_forms),
      cmocka_unit_test(test_split_squeeze_forms), cmocka_unit_test(test_reducesum_forms),
      cmocka_unit_test(test_topk_forms),       cmocka_unit_test(test_dropout_forms),
      cmocka_unit_test(test_resize_coordinates), cmocka_unit_test(test_small_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
