/*
 * test_npy.c - the .npy reader and writer.
 *
 * The fixtures in tests/data were written once by numpy 1.24
 * (tests/data/README.md says how): the reader must take the supported ones
 * with the right values and refuse the others with an exact message, and
 * the writer must produce byte-identical files for the same arrays.  Hand-
 * written headers cover what numpy does not write but other writers (or a
 * fuzzer) do.  Tests run from the top of the tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver/core/npy.h"
#include "driver/core/readfile.h"

#define DATA "tests/data/"
#define SUPPORTED "(little-endian bool, int8..int64, uint8..uint64, float16, float32, float64 only)"

static uint8_t *slurp(const char *path, size_t *n) {
  uint8_t *p;
  char msg[LOOM_MSG_MAX];
  if (loom_read_file(path, 1 << 20, &p, n, msg)) fail_msg("%s", msg);
  return p;
}

static void test_roundtrip_each_dtype(void **state) {
  static const loom_dtype types[] = {LOOM_DT_I8,  LOOM_DT_U8,  LOOM_DT_I32, LOOM_DT_F32, LOOM_DT_I64, LOOM_DT_BOOL,
                                     LOOM_DT_I16, LOOM_DT_U16, LOOM_DT_U32, LOOM_DT_U64, LOOM_DT_F16, LOOM_DT_F64};
  static const int64_t dims[4][4] = {{0}, {5}, {2, 3}, {2, 1, 4}};
  uint8_t data[128];
  for (int i = 0; i < 128; i++) data[i] = (uint8_t)(i * 37 + 1);
  for (int t = 0; t < (int)(sizeof types / sizeof types[0]); t++)
    for (int rank = 0; rank < 4; rank++) {
      uint8_t *p;
      size_t n;
      char msg[LOOM_MSG_MAX];
      struct loom_npy a;
      assert_int_equal(loom_npy_encode(types[t], rank, dims[rank], data, &p, &n, msg), LOOM_OK);
      assert_int_equal(loom_npy_parse(p, n, "x.npy", &a, msg), LOOM_OK);
      assert_int_equal(a.dtype, types[t]);
      assert_int_equal(a.rank, rank);
      for (int k = 0; k < rank; k++) assert_int_equal(a.dims[k], dims[rank][k]);
      assert_memory_equal(a.data, data, a.bytes);
      assert_int_equal(p[6], 1);
      assert_int_equal((p[8] | p[9] << 8) + 10, n - a.bytes); /* header length */
      assert_int_equal((n - a.bytes) % 64, 0);
      loom_npy_free(&a);
      free(p);
    }
}

static void test_write_read_file(void **state) {
  char path[] = "/tmp/test_npy_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  float v[6] = {1, 2, 3, 4, 5, -6.5f};
  int64_t dims[2] = {3, 2};
  char msg[LOOM_MSG_MAX];
  struct loom_npy a;
  assert_int_equal(loom_npy_write(path, LOOM_DT_F32, 2, dims, v, msg), LOOM_OK);
  assert_int_equal(loom_npy_read(path, &a, msg), LOOM_OK);
  assert_int_equal(a.bytes, sizeof v);
  assert_memory_equal(a.data, v, sizeof v);
  loom_npy_free(&a);
  unlink(path);
  assert_int_equal(loom_npy_read(path, &a, msg), LOOM_E_NOTFOUND);
  int64_t bad[1] = {-1};
  assert_int_equal(loom_npy_write(path, LOOM_DT_F32, 1, bad, v, msg), LOOM_E_INVALID);
  assert_true(!strncmp(msg, path, strlen(path))); /* the message names the file */
  assert_non_null(strstr(msg, "dims[0] = -1 is negative"));
  assert_int_equal(loom_npy_write(path, LOOM_DT_INVALID, 1, dims, v, msg), LOOM_E_INVALID);
  assert_int_equal(loom_npy_write(path, LOOM_DT_BF16, 1, dims, v, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "dtype bfloat16 cannot be written (numpy has no such type)"));
  assert_int_equal(loom_npy_write(path, LOOM_DT_F32, 9, dims, v, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "rank 9 is not in 0..8"));
}

struct fixture {
  const char *file;
  loom_dtype dtype;
  int rank;
  int64_t dims[2];
  const void *data;
  size_t bytes;
  int version;
};

static const int8_t fx_i8[] = {1, -2, 3, -4, 5, -128};
static const uint8_t fx_u8[] = {0, 1, 128, 255};
static const int32_t fx_i4[] = {1, -2, INT32_MAX, INT32_MIN};
static const float fx_f4[] = {0.5f, -1.25f, 3.0f};
static const float fx_scalar[] = {7.5f};
static const float fx_v2[] = {1, 2, 3, 4};
static const int32_t fx_v3[] = {10, 20, 30};
static const double fx_f8[] = {1, 2};
static const uint8_t fx_bool[] = {1, 0};
static const int64_t fx_i64[] = {1, -2, INT64_C(1) << 40, -(INT64_C(1) << 62)};
static const uint16_t fx_f2[] = {0x3800, 0xc000, 0x7bff}; /* 0.5, -2, 65504 in binary16 */

static const struct fixture fixtures[] = {
    {DATA "npy_v1_i8.npy", LOOM_DT_I8, 2, {2, 3}, fx_i8, sizeof fx_i8, 1},
    {DATA "npy_v1_u8.npy", LOOM_DT_U8, 1, {4}, fx_u8, sizeof fx_u8, 1},
    {DATA "npy_v1_i4.npy", LOOM_DT_I32, 2, {2, 2}, fx_i4, sizeof fx_i4, 1},
    {DATA "npy_v1_f4.npy", LOOM_DT_F32, 1, {3}, fx_f4, sizeof fx_f4, 1},
    {DATA "npy_v1_scalar.npy", LOOM_DT_F32, 0, {0}, fx_scalar, sizeof fx_scalar, 1},
    {DATA "npy_v1_empty.npy", LOOM_DT_F32, 2, {0, 3}, NULL, 0, 1},
    {DATA "npy_v2_f4.npy", LOOM_DT_F32, 2, {2, 2}, fx_v2, sizeof fx_v2, 2},
    {DATA "npy_v3_i4.npy", LOOM_DT_I32, 1, {3}, fx_v3, sizeof fx_v3, 3},
    {DATA "npy_v1_f8.npy", LOOM_DT_F64, 1, {2}, fx_f8, sizeof fx_f8, 1},
    {DATA "npy_v1_bool.npy", LOOM_DT_BOOL, 1, {2}, fx_bool, sizeof fx_bool, 1},
    {DATA "npy_v1_i8_64.npy", LOOM_DT_I64, 2, {2, 2}, fx_i64, sizeof fx_i64, 1},
    {DATA "npy_v1_f2.npy", LOOM_DT_F16, 1, {3}, fx_f2, sizeof fx_f2, 1},
};

static void test_fixtures_accepted(void **state) {
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    const struct fixture *f = &fixtures[i];
    struct loom_npy a;
    char msg[LOOM_MSG_MAX];
    if (loom_npy_read(f->file, &a, msg)) fail_msg("%s", msg);
    assert_int_equal(a.dtype, f->dtype);
    assert_int_equal(a.rank, f->rank);
    for (int k = 0; k < f->rank; k++) assert_int_equal(a.dims[k], f->dims[k]);
    assert_int_equal(a.bytes, f->bytes);
    if (f->bytes) assert_memory_equal(a.data, f->data, f->bytes);
    loom_npy_free(&a);
  }
}

/* The writer's bytes are numpy.save's bytes. */
static void test_writer_matches_numpy(void **state) {
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    const struct fixture *f = &fixtures[i];
    if (f->version != 1) continue;
    size_t n, m;
    uint8_t *want = slurp(f->file, &n), *got;
    char msg[LOOM_MSG_MAX];
    assert_int_equal(loom_npy_encode(f->dtype, f->rank, f->dims, f->data, &got, &m, msg), LOOM_OK);
    if (m != n || memcmp(got, want, n)) fail_msg("%s: writer output differs from numpy's", f->file);
    free(got);
    free(want);
  }
}

static void expect_msg(const char *file, const char *want) {
  struct loom_npy a;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_npy_read(file, &a, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, want);
  assert_null(a.data);
}

static void test_fixtures_rejected(void **state) {
  expect_msg(DATA "npy_bad_be_f4.npy", DATA "npy_bad_be_f4.npy: dtype '>f4' is not supported " SUPPORTED);
  expect_msg(DATA "npy_bad_c8.npy", DATA "npy_bad_c8.npy: dtype '<c8' is not supported " SUPPORTED);
  expect_msg(DATA "npy_bad_object.npy", DATA "npy_bad_object.npy: dtype '|O' is not supported " SUPPORTED);
  expect_msg(DATA "npy_bad_struct.npy", DATA "npy_bad_struct.npy: structured dtypes are not supported " SUPPORTED);
  expect_msg(DATA "npy_bad_fortran.npy", DATA "npy_bad_fortran.npy: fortran_order is True; only C-order arrays are "
             "supported (save numpy.ascontiguousarray(x))");
}

static void test_truncated_every_length(void **state) {
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    size_t n;
    uint8_t *p = slurp(fixtures[i].file, &n);
    for (size_t len = 0; len < n; len++) {
      uint8_t *q = malloc(len ? len : 1);
      memcpy(q, p, len);
      struct loom_npy a;
      char msg[LOOM_MSG_MAX];
      assert_int_equal(loom_npy_parse(q, len, "t.npy", &a, msg), LOOM_E_FORMAT);
      assert_true(strstr(msg, "truncated") || strstr(msg, "data is") || strstr(msg, "bad magic"));
      free(q);
    }
    free(p);
  }
}

/* A v1.0 file around a hand-written header dict. */
static uint8_t *v1(const char *dict, const void *data, size_t bytes, size_t *n) {
  size_t h = strlen(dict);
  uint8_t *p = malloc(10 + h + bytes + 1);
  memcpy(p, "\x93NUMPY\x01\x00", 8);
  p[8] = (uint8_t)h;
  p[9] = (uint8_t)(h >> 8);
  memcpy(p + 10, dict, h);
  if (bytes) memcpy(p + 10 + h, data, bytes);
  *n = 10 + h + bytes;
  return p;
}

static void parse_dict(const char *dict, size_t bytes, loom_status want, const char *needle) {
  static const uint8_t zeros[64];
  size_t n;
  uint8_t *p = v1(dict, zeros, bytes, &n);
  struct loom_npy a;
  char msg[LOOM_MSG_MAX] = "";
  loom_status st = loom_npy_parse(p, n, "h.npy", &a, msg);
  if (st != want) fail_msg("%s: status %d, message '%s'", dict, st, msg);
  if (needle && !strstr(msg, needle)) fail_msg("%s: message '%s' lacks '%s'", dict, msg, needle);
  loom_npy_free(&a);
  free(p);
}

static void test_header_variants_accepted(void **state) {
  parse_dict("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<i4\"}\n", 24, LOOM_OK, NULL);
  parse_dict("{'descr':'i1','fortran_order':False,'shape':(3L,2L)}", 6, LOOM_OK, NULL);
  parse_dict("{'descr': '<u1', 'fortran_order': False, 'shape': (4,), }    \n", 4, LOOM_OK, NULL);
  parse_dict("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 2), }", 2, LOOM_OK, NULL);
  parse_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (), }", 4, LOOM_E_FORMAT, "fortran_order is True");
}

static void test_header_malformed(void **state) {
  parse_dict("{'descr': '<f4', 'fortran_order': False}", 4, LOOM_E_FORMAT, "the header has no 'shape'");
  parse_dict("{'descr': '<f4', 'shape': ()}", 4, LOOM_E_FORMAT, "the header has no 'fortran_order'");
  parse_dict("{'shape': (), 'fortran_order': False}", 4, LOOM_E_FORMAT, "the header has no 'descr'");
  parse_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4, LOOM_E_FORMAT,
             "h.npy: offset 0x1b: header: a key appears twice");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4, LOOM_E_FORMAT, "unexpected key");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", 4, LOOM_E_FORMAT, "is not a tuple");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4, LOOM_E_FORMAT, "shape is not a tuple");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, LOOM_E_FORMAT, "a dimension is negative");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", 4, LOOM_E_FORMAT, "not an integer");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 4, LOOM_E_FORMAT,
             "a dimension overflows");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 4, LOOM_E_FORMAT,
             "exceeds the 4294967296-byte limit");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4, LOOM_E_FORMAT,
             "more than 8 dimensions");
  parse_dict("{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4, LOOM_E_FORMAT, "offset 0x1b: header: expected ',' or '}'");
  parse_dict("{'descr' '<f4', 'fortran_order': False, 'shape': ()}", 4, LOOM_E_FORMAT, "offset 0x13: header: expected ':' after a key");
  parse_dict("{'descr': '<f4', 'fortran_order': Maybe, 'shape': ()}", 4, LOOM_E_FORMAT, "not True or False");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4, LOOM_E_FORMAT, "unexpected text after");
  parse_dict("{'descr': '<f\\x34', 'fortran_order': False, 'shape': ()}", 4, LOOM_E_FORMAT, "escape sequences");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': ()", 4, LOOM_E_FORMAT, "expected ',' or '}'");
  parse_dict("['descr']", 4, LOOM_E_FORMAT, "the header is not a dict");
  parse_dict("", 4, LOOM_E_FORMAT, "the header is not a dict");
  parse_dict("{'descr': [[[[[[[[[[[[[[[[[[[[('a', '<i4')]]]]]]]]]]]]]]]]]]], 'fortran_order': False, 'shape': ()}", 4,
             LOOM_E_FORMAT, "nested too deeply");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 4, LOOM_E_FORMAT,
             "h.npy: data is 4 bytes, but shape (2,) of float32 needs 8");
  parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 4, LOOM_E_FORMAT,
             "shape (2, 3) of float32 needs 24");
}

static void test_prefix(void **state) {
  struct loom_npy a;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_npy_parse("\x93NUMPX\x01\x00\x00\x00", 10, "p.npy", &a, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, "p.npy: not a .npy file (bad magic)");
  assert_int_equal(loom_npy_parse("\x93NUMPY\x04\x00\x00\x00", 10, "p.npy", &a, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, "p.npy: .npy version 4.0 is not supported (1.0, 2.0 and 3.0 only)");
  assert_int_equal(loom_npy_parse("\x93NUMPY\x01\x00\xff\x00{", 11, "p.npy", &a, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, "p.npy: file is 11 bytes, truncated in the 255-byte header");
  assert_int_equal(loom_npy_parse("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12, "p.npy", &a, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, "p.npy: header length 2147483647 exceeds the 1048576-byte limit");
}

static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717u;
}

/* Random byte damage to every fixture: refused or parsed, never a crash. */
static void test_random_damage(void **state) {
  uint64_t seed = 0x5eed0fa11ULL;
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    size_t n;
    uint8_t *p = slurp(fixtures[i].file, &n);
    for (int k = 0; k < 3000; k++) {
      uint8_t *q = malloc(n);
      memcpy(q, p, n);
      for (int j = (int)(rnd(&seed) % 4); j >= 0; j--) q[rnd(&seed) % n] = (uint8_t)rnd(&seed);
      struct loom_npy a;
      char msg[LOOM_MSG_MAX];
      if (loom_npy_parse(q, n, "r.npy", &a, msg) == LOOM_OK) assert_true(a.bytes <= n);
      loom_npy_free(&a);
      free(q);
    }
    free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_each_dtype),
      cmocka_unit_test(test_write_read_file),
      cmocka_unit_test(test_fixtures_accepted),
      cmocka_unit_test(test_writer_matches_numpy),
      cmocka_unit_test(test_fixtures_rejected),
      cmocka_unit_test(test_truncated_every_length),
      cmocka_unit_test(test_header_variants_accepted),
      cmocka_unit_test(test_header_malformed),
      cmocka_unit_test(test_prefix),
      cmocka_unit_test(test_random_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
