/*
 * test_kernels_util.c - the host kernels' shared ground (kernel_util.c,
 * kernel_gemm.c): binary16 and bfloat16 conversions at their edges, the
 * generic element accessors (rounding, saturation, wrap, NaN), the ONNX
 * dtype codes, broadcasting plans against a naive index computation, the
 * stable sort, and the packed GEMM against a naive product on sizes that
 * exercise every edge tile.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/kernel_util.h"

static float bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static void test_f16_edges(void **state) {
  (void)state;
  /* Exact values both ways. */
  static const struct { uint16_t h; float f; } exact[] = {
      {0x0000, 0.0f},         {0x8000, -0.0f},       {0x3c00, 1.0f},      {0xc000, -2.0f},
      {0x7bff, 65504.0f},     {0x0400, 0x1p-14f},    {0x0001, 0x1p-24f},  {0x03ff, 0x3ffp-24f},
      {0x7c00, INFINITY},     {0xfc00, -INFINITY},   {0x3555, 0x1.554p-2f},
  };
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
    assert_int_equal(f_bits(loom_f16_to_f32(exact[i].h)), f_bits(exact[i].f));
    assert_int_equal(loom_f32_to_f16(exact[i].f), exact[i].h);
  }
  /* Rounding: ties to even, overflow, underflow, subnormal rounding. */
  assert_int_equal(loom_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);           /* tie, even stays */
  assert_int_equal(loom_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);       /* tie, rounds up to even */
  assert_int_equal(loom_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above the tie */
  assert_int_equal(loom_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(loom_f32_to_f16(65520.0f), 0x7c00); /* rounds to infinity */
  assert_int_equal(loom_f32_to_f16(1e10f), 0x7c00);
  assert_int_equal(loom_f32_to_f16(0x1p-25f), 0x0000);         /* tie to even zero */
  assert_int_equal(loom_f32_to_f16(0x1.8p-25f), 0x0001);       /* above the tie */
  assert_int_equal(loom_f32_to_f16(0x3p-25f), 0x0002);         /* 1.5 ulp: tie to even 2 */
  assert_int_equal(loom_f32_to_f16(0x1.ffcp-15f), 0x0400);     /* rounds up into the normals */
  assert_int_equal(loom_f32_to_f16(1e-30f), 0x0000);
  assert_int_equal(loom_f32_to_f16(-1e-30f), 0x8000);
  /* NaN stays NaN (quiet), both ways. */
  assert_true((loom_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (loom_f32_to_f16(NAN) & 0x3ff));
  assert_true(isnan(loom_f16_to_f32(0x7e00)) && isnan(loom_f16_to_f32(0xfd01)));
  assert_true(loom_f32_to_f16(bits_f(0x7f800001)) & 0x200); /* signalling NaN comes out quiet */
  /* Every half round-trips. */
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = loom_f16_to_f32((uint16_t)h);
    if (!isnan(f)) assert_int_equal(loom_f32_to_f16(f), h);
  }
}

static void test_bf16_edges(void **state) {
  (void)state;
  assert_int_equal(loom_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(loom_f32_to_bf16(bits_f(0x3f808000)), 0x3f80); /* tie to even */
  assert_int_equal(loom_f32_to_bf16(bits_f(0x3f818000)), 0x3f82); /* tie to even, up */
  assert_int_equal(loom_f32_to_bf16(bits_f(0x3f808001)), 0x3f81);
  assert_int_equal(loom_f32_to_bf16(bits_f(0x7f7fffff)), 0x7f80); /* FLT_MAX rounds to infinity */
  assert_int_equal(loom_f32_to_bf16(-INFINITY), 0xff80);
  assert_true((loom_f32_to_bf16(bits_f(0x7f800001)) & 0x7fc0) == 0x7fc0); /* NaN, quiet, not infinity */
  assert_true(isnan(loom_bf16_to_f32(0x7fc1)));
  assert_int_equal(f_bits(loom_bf16_to_f32(0x8001)), 0x80010000u);
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = loom_bf16_to_f32((uint16_t)h);
    if (!isnan(f)) assert_int_equal(loom_f32_to_bf16(f), h);
  }
}

static void test_accessors(void **state) {
  (void)state;
  int8_t i8[4];
  uint8_t u8[2];
  uint16_t h[3];
  uint64_t u64[2];
  struct loom_kt t8 = {LOOM_DT_I8, 1, {4}, i8}, tu = {LOOM_DT_U8, 1, {2}, u8};
  struct loom_kt th = {LOOM_DT_F16, 1, {3}, h}, tb = {LOOM_DT_BF16, 1, {3}, h}, t64 = {LOOM_DT_U64, 1, {2}, u64};
  loom_kt_set_f64(&t8, 0, 300.7);  /* saturates */
  loom_kt_set_f64(&t8, 1, -300.7);
  loom_kt_set_f64(&t8, 2, NAN);    /* NaN is 0 */
  loom_kt_set_f64(&t8, 3, -2.9);   /* truncates toward zero */
  assert_int_equal(i8[0], 127);
  assert_int_equal(i8[1], -128);
  assert_int_equal(i8[2], 0);
  assert_int_equal(i8[3], -2);
  loom_kt_set_i64(&t8, 0, 300);    /* integers wrap */
  assert_int_equal(i8[0], 44);
  loom_kt_set_f64(&tu, 0, -5);
  loom_kt_set_f64(&tu, 1, 1e9);
  assert_int_equal(u8[0], 0);
  assert_int_equal(u8[1], 255);
  /* Doubles into binary16 round once: a value just above a half-ulp tie
   * in double that float32 would round onto the tie. */
  double v = 1.0 + 0x1p-11 + 0x1p-40;
  loom_kt_set_f64(&th, 0, v);
  assert_int_equal(h[0], 0x3c01);
  loom_kt_set_f64(&th, 1, 65520.0);
  assert_int_equal(h[1], 0x7c00);
  loom_kt_set_f64(&th, 2, 0x1p-26);
  assert_int_equal(h[2], 0);
  loom_kt_set_f64(&tb, 0, 1.0 + 0x1p-8 + 0x1p-40); /* bfloat16: the same single rounding */
  assert_int_equal(h[0], 0x3f81);
  /* uint64 beyond int64. */
  loom_kt_set_f64(&t64, 0, 0x1p63 + 0x1p20);
  assert_true(u64[0] == (1ull << 63) + (1ull << 20));
  loom_kt_set_f64(&t64, 1, 1e30);
  assert_true(u64[1] == UINT64_MAX);
  assert_true(loom_kt_get_f64(&t64, 0) == 0x1p63 + 0x1p20);
  /* Float reads into int64: truncation, saturation, NaN. */
  float f[3] = {-7.9f, 1e30f, NAN};
  struct loom_kt tf = {LOOM_DT_F32, 1, {3}, f};
  assert_int_equal(loom_kt_get_i64(&tf, 0), -7);
  assert_true(loom_kt_get_i64(&tf, 1) > INT64_MAX / 2);
  assert_int_equal(loom_kt_get_i64(&tf, 2), 0);
}

static void test_onnx_codes(void **state) {
  (void)state;
  for (int t = 1; t < LOOM_DT_COUNT; t++) {
    int code = loom_dtype_to_onnx((loom_dtype)t);
    assert_true(code > 0);
    assert_int_equal(loom_dtype_from_onnx(code), t);
  }
  assert_int_equal(loom_dtype_from_onnx(8), LOOM_DT_INVALID);  /* string */
  assert_int_equal(loom_dtype_from_onnx(14), LOOM_DT_INVALID); /* complex64 */
  assert_int_equal(loom_dtype_from_onnx(-1), LOOM_DT_INVALID);
  assert_true(loom_dtype_is_float(LOOM_DT_BF16) && !loom_dtype_is_float(LOOM_DT_I64));
  assert_true(loom_dtype_is_signed_int(LOOM_DT_I16) && !loom_dtype_is_signed_int(LOOM_DT_U16));
  assert_true(loom_dtype_is_unsigned_int(LOOM_DT_U64) && !loom_dtype_is_unsigned_int(LOOM_DT_BOOL));
}

/* ---- broadcasting ---- */

struct probe {
  int64_t *seen; /* per output element: input 0 offset * 1000 + input 1 offset, + 1 */
};

static void row_probe(void *ctx, const struct loom_kbcast *b, const int64_t *off, int64_t o, int64_t len) {
  struct probe *p = ctx;
  int64_t s0 = b->st[0][b->rank - 1], s1 = b->st[1][b->rank - 1];
  assert_true(s0 == 0 || s0 == 1);
  assert_true(s1 == 0 || s1 == 1);
  for (int64_t i = 0; i < len; i++) {
    assert_int_equal(p->seen[o + i], 0); /* every element once */
    p->seen[o + i] = (off[0] + i * s0) * 1000 + off[1] + i * s1 + 1;
  }
}

/* The input offset of output index o under numpy broadcasting. */
static int64_t naive_off(const struct loom_kt *in, const struct loom_kt *out, int64_t o) {
  int64_t off = 0, s = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    int64_t idx = o % out->dims[d];
    o /= out->dims[d];
    int id = d - (out->rank - in->rank);
    if (id < 0) continue;
    if (in->dims[id] != 1) off += idx * s;
    s *= in->dims[id];
  }
  return off;
}

static void check_plan(int ra, const int64_t *a, int rb, const int64_t *b, int ro, const int64_t *o) {
  char msg[LOOM_MSG_MAX];
  struct loom_kcall c = {.msg = msg};
  struct loom_kt ta = {LOOM_DT_F32, ra, {0}, NULL}, tb = {LOOM_DT_F32, rb, {0}, NULL}, to = {LOOM_DT_F32, ro, {0}, NULL};
  if (ra) memcpy(ta.dims, a, (size_t)ra * 8);
  if (rb) memcpy(tb.dims, b, (size_t)rb * 8);
  if (ro) memcpy(to.dims, o, (size_t)ro * 8);
  const struct loom_kt *in[2] = {&ta, &tb};
  struct loom_kbcast plan;
  assert_int_equal(loom_kbcast_init(&c, &plan, 2, in, &to), LOOM_OK);
  int64_t n = loom_kt_numel(&to);
  struct probe p = {calloc((size_t)n + 1, sizeof(int64_t))};
  loom_kbcast_each(&plan, row_probe, &p);
  for (int64_t i = 0; i < n; i++)
    assert_int_equal(p.seen[i], naive_off(&ta, &to, i) * 1000 + naive_off(&tb, &to, i) + 1);
  free(p.seen);
}

static void test_broadcast(void **state) {
  (void)state;
  check_plan(4, (int64_t[]){2, 3, 4, 5}, 4, (int64_t[]){1, 3, 1, 1}, 4, (int64_t[]){2, 3, 4, 5});
  check_plan(4, (int64_t[]){2, 3, 4, 5}, 1, (int64_t[]){5}, 4, (int64_t[]){2, 3, 4, 5});
  check_plan(0, NULL, 3, (int64_t[]){2, 1, 3}, 3, (int64_t[]){2, 1, 3});            /* scalar */
  check_plan(3, (int64_t[]){4, 1, 3}, 2, (int64_t[]){5, 1}, 3, (int64_t[]){4, 5, 3}); /* both ways */
  check_plan(2, (int64_t[]){1, 1}, 2, (int64_t[]){1, 1}, 2, (int64_t[]){1, 1});
  check_plan(3, (int64_t[]){2, 0, 3}, 1, (int64_t[]){3}, 3, (int64_t[]){2, 0, 3});    /* empty */
  check_plan(6, (int64_t[]){2, 1, 2, 1, 2, 1}, 6, (int64_t[]){1, 2, 1, 2, 1, 2}, 6, (int64_t[]){2, 2, 2, 2, 2, 2});
  /* Refusals: incompatible, and an output that is not the broadcast. */
  char msg[LOOM_MSG_MAX] = "";
  struct loom_kcall c = {.msg = msg};
  struct loom_kt a = {LOOM_DT_F32, 1, {3}, NULL}, b = {LOOM_DT_F32, 1, {4}, NULL}, o = {LOOM_DT_F32, 1, {4}, NULL};
  const struct loom_kt *in[2] = {&a, &b};
  struct loom_kbcast plan;
  assert_int_equal(loom_kbcast_init(&c, &plan, 2, in, &o), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "broadcast"));
  a.dims[0] = 1, o.dims[0] = 5;
  assert_int_equal(loom_kbcast_init(&c, &plan, 2, in, &o), LOOM_E_INVALID);
  struct loom_kt absent = {LOOM_DT_INVALID, 0, {0}, NULL};
  in[1] = &absent;
  assert_int_equal(loom_kbcast_init(&c, &plan, 2, in, &o), LOOM_E_INVALID);
}

/* ---- sort ---- */

static int by_key(const void *ctx, int64_t a, int64_t b) {
  const int *k = ctx;
  return k[a] - k[b];
}

static void test_sort_stable(void **state) {
  (void)state;
  int keys[37];
  int64_t idx[37], tmp[37];
  for (int i = 0; i < 37; i++) keys[i] = (i * 7) % 5, idx[i] = i;
  loom_k_sort(idx, 37, by_key, keys, tmp);
  for (int i = 1; i < 37; i++) {
    assert_true(keys[idx[i - 1]] <= keys[idx[i]]);
    if (keys[idx[i - 1]] == keys[idx[i]]) assert_true(idx[i - 1] < idx[i]);
  }
  loom_k_sort(idx, 0, by_key, keys, tmp); /* empty is fine */
}

/* ---- GEMM ---- */

static void check_gemm(int64_t m, int64_t n, int64_t k, int ta, int tb, float alpha, float beta) {
  char msg[LOOM_MSG_MAX];
  struct loom_kcall c = {.msg = msg};
  float *a = malloc((size_t)(m * k) * 4), *b = malloc((size_t)(k * n) * 4), *y = malloc((size_t)(m * n) * 4 + 4);
  double *want = malloc((size_t)(m * n) * 8 + 8);
  for (int64_t i = 0; i < m * k; i++) a[i] = (float)((i * 37 % 101) - 50) / 25;
  for (int64_t i = 0; i < k * n; i++) b[i] = (float)((i * 53 % 97) - 48) / 24;
  for (int64_t i = 0; i < m * n; i++) y[i] = beta == 0 ? NAN : (float)(i % 13); /* beta 0 ignores NaN */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++)
        s += (double)(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      want[i * n + j] = alpha * s + (beta == 0 ? 0 : beta * (double)((i * n + j) % 13));
    }
  assert_int_equal(loom_k_sgemm(&c, m, n, k, alpha, a, ta ? m : k, ta, b, tb ? k : n, tb, beta, y, n), LOOM_OK);
  for (int64_t i = 0; i < m * n; i++) assert_true(fabs(y[i] - want[i]) <= 1e-3 * (1 + fabs(want[i])));
  free(a), free(b), free(y), free(want);
}

static void test_gemm(void **state) {
  (void)state;
  /* Edges of every blocking level: MR 6, NR 16, KC 256, MC 72, NC 1024. */
  check_gemm(1, 1, 1, 0, 0, 1, 0);
  check_gemm(7, 17, 5, 0, 0, 1, 0);
  check_gemm(13, 33, 300, 1, 0, 0.5f, 1);
  check_gemm(75, 20, 257, 0, 1, 1, 2);
  check_gemm(6, 1030, 3, 1, 1, -1, 0);
  check_gemm(5, 3, 0, 0, 0, 1, 0.5f); /* k = 0: only the scaling */
  check_gemm(3, 40, 37, 1, 1, 0.5f, 1); /* fewer rows than a tile: no packing */
  check_gemm(2, 33, 20, 0, 1, 1, 0);
  check_gemm(5, 9, 300, 0, 0, 2, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16_edges),   cmocka_unit_test(test_bf16_edges),
      cmocka_unit_test(test_accessors),   cmocka_unit_test(test_onnx_codes),
      cmocka_unit_test(test_broadcast),   cmocka_unit_test(test_sort_stable),
      cmocka_unit_test(test_gemm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
