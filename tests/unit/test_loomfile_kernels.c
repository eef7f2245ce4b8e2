/*
 * test_loomfile_kernels.c - format 1.3: KERNELS records and kernel steps,
 * the host-side dtypes and empty tensors, in the reader, the writer, the
 * assembler / disassembler and the runtime's loader.
 *
 * A sample file with two kernel steps (one with an attribute of every
 * kind, one dynamic) must parse back field for field, disassemble and
 * re-assemble to the same bytes, and be refused by a runtime that lacks a
 * kernel with a message naming the step and the op.  Then every rule of
 * docs/format.md's KERNELS section is broken on purpose (crc fixed up) and
 * the message must name the record and what is wrong; 1.3 features in a
 * file that says 1.2 are refused as such.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "filebytes.h"
#include "driver/core/asm.h"
#include "driver/core/kernel.h"
#include "driver/core/loomfile.h"
#include "loom/loom.h"

#define NB LOOM_FILE_NO_BUFFER


/* ---- the sample ---- */

/* x [2,3] f32 in, y [2,3] f32 out (Elu with alpha), nz [2,6] i64 out of a
 * dynamic NonZero, an empty [0,3] f32 tensor, a bool and a bf16 tensor. */
static uint8_t *sample(size_t *n) {
  struct loom_file_builder *b = loom_file_builder_new(0x1234);
  struct loom_file_buffer work = {.name = loom_fb_string(b, "work"), .kind = LOOM_BUFKIND_WORK, .size = 256, .align = 64};
  loom_fb_buffer(b, &work);
  struct loom_file_tensor t[5] = {
      {.name = loom_fb_string(b, "x"), .role = LOOM_ROLE_INPUT, .dtype = LOOM_DT_F32, .user_dtype = LOOM_DT_F32, .rank = 2, .dims = {2, 3}},
      {.name = loom_fb_string(b, "y"), .role = LOOM_ROLE_OUTPUT, .dtype = LOOM_DT_F32, .user_dtype = LOOM_DT_F32, .rank = 2, .dims = {2, 3}, .offset = 32},
      {.name = loom_fb_string(b, "nz"), .role = LOOM_ROLE_OUTPUT, .dtype = LOOM_DT_I64, .user_dtype = LOOM_DT_I64, .rank = 2, .dims = {2, 6}, .offset = 64},
      {.name = loom_fb_string(b, "empty"), .dtype = LOOM_DT_F32, .user_dtype = LOOM_DT_F32, .rank = 2, .dims = {0, 3}, .offset = 160},
      {.name = loom_fb_string(b, "flags"), .dtype = LOOM_DT_BOOL, .user_dtype = LOOM_DT_BOOL, .rank = 1, .dims = {4}, .offset = 168},
  };
  for (int i = 0; i < 5; i++) loom_fb_tensor(b, &t[i]);
  uint32_t io0[2] = {0, 1}, io1[2] = {0, 2};
  int64_t ints[3] = {1, -2, 3};
  float floats[2] = {0.5f, -1.0f};
  uint32_t strs[2] = {loom_fb_string(b, "a"), 0};
  float alpha = 0.25f;
  uint32_t abits;
  memcpy(&abits, &alpha, 4);
  struct loom_file_kattr a[7] = {
      {.name = loom_fb_string(b, "alpha"), .kind = LOOM_KATTR_FLOAT, .count = 1, .value = abits},
      {.name = loom_fb_string(b, "i"), .kind = LOOM_KATTR_INT, .count = 1, .value = (uint64_t)-7},
      {.name = loom_fb_string(b, "s"), .kind = LOOM_KATTR_STRING, .count = 1, .value = loom_fb_string(b, "linear")},
      {.name = loom_fb_string(b, "is"), .kind = LOOM_KATTR_INTS, .count = 3, .value = loom_fb_data(b, ints, sizeof ints, 8)},
      {.name = loom_fb_string(b, "fs"), .kind = LOOM_KATTR_FLOATS, .count = 2, .value = loom_fb_data(b, floats, sizeof floats, 8)},
      {.name = loom_fb_string(b, "ss"), .kind = LOOM_KATTR_STRINGS, .count = 2, .value = loom_fb_data(b, strs, sizeof strs, 8)},
      {.name = loom_fb_string(b, "t"), .kind = LOOM_KATTR_TENSOR, .count = 1, .value = 4},
  };
  struct loom_file_kernel k0 = {.op = loom_fb_string(b, "Elu"), .opset = 6, .n_in = 1, .n_out = 1, .n_attrs = 7};
  k0.io_offset = loom_fb_data(b, io0, sizeof io0, 8);
  k0.attr_offset = loom_fb_data(b, a, sizeof a, 8);
  struct loom_file_kernel k1 = {.op = loom_fb_string(b, "NonZero"), .opset = 13, .n_in = 1, .n_out = 1,
                                .flags = LOOM_FILE_KERNEL_DYNAMIC};
  k1.io_offset = loom_fb_data(b, io1, sizeof io1, 8);
  assert_int_equal(loom_fb_kernel(b, &k0), 0);
  assert_int_equal(loom_fb_kernel(b, &k1), 1);
  for (uint32_t i = 0; i < 2; i++) {
    struct loom_file_step s = {.kind = LOOM_STEP_KERNEL, .index = i};
    memset(s.inputs, 0xff, sizeof s.inputs);
    memset(s.outputs, 0xff, sizeof s.outputs);
    loom_fb_step(b, &s);
  }
  uint8_t *p = loom_file_builder_finish(b, n);
  loom_file_builder_free(b);
  assert_non_null(p);
  return p;
}

static void expect_reject(const uint8_t *p, size_t n, const char *needle) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX] = "";
  loom_status st = loom_file_parse(p, n, "m.loom", &f, msg);
  if (st == LOOM_OK) {
    loom_file_free(&f);
    fail_msg("accepted; expected: %s", needle);
  }
  assert_int_equal(st, LOOM_E_FORMAT);
  if (!strstr(msg, needle)) fail_msg("message '%s' lacks '%s'", msg, needle);
}

/* ---- tests ---- */

static void test_roundtrip(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_minor, 3);
  assert_int_equal(f.kernel_count, 2);
  const struct loom_file_kernel *k = &f.kernels[0];
  assert_string_equal(loom_file_string(&f, k->op), "Elu");
  assert_int_equal(k->opset, 6);
  assert_int_equal(loom_file_kernel_io(&f, k)[1], 1);
  const struct loom_file_kattr *a = loom_file_kernel_attrs(&f, k);
  assert_string_equal(loom_file_string(&f, a[2].name), "s");
  assert_string_equal(loom_file_string(&f, (uint32_t)a[2].value), "linear");
  assert_int_equal(((const int64_t *)(f.data + a[3].value))[1], -2);
  assert_int_equal(f.kernels[1].flags, LOOM_FILE_KERNEL_DYNAMIC);
  assert_true(loom_file_tensor_empty(&f.tensors[3]));
  assert_int_equal(f.tensors[3].bytes, 0);
  loom_file_free(&f);
  free(p);
}

/* disasm -> asm gives the same bytes (the assembler's own layout). */
static void test_asm_roundtrip(void **state) {
  static const char src[] =
      ".config tiny\n.buffer a work 64\n.buffer c const 8\n  .byte 0, 0, 128, 63, 0, 0, 0, 64\n"
      ".tensor X input a 0 f32 [1,2,2]\n.tensor S internal c 0 f32 [2]\n.tensor Y output a 16 f32 [1,2,2]\n"
      ".tensor N internal a 32 i64 [3,1]\n.tensor E internal a 56 bf16 [0,4]\n.steps\n"
      ".step kernel Resize opset=11 in=X,-,S out=Y\n  .attr mode string \"linear\"\n  .attr axes ints 0, -1\n"
      "  .attr alpha float 0.2\n  .attr names strings \"a\", \"\", \"b c\"\n  .attr none floats\n"
      "  .attr value tensor S\n.step kernel NonZero in=X out=N dynamic\n";
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_asm_string(src, sizeof src - 1, "k.s", NULL, &b, msg), LOOM_OK);
  size_t n, m;
  uint8_t *p = loom_file_builder_finish(b, &n);
  loom_file_builder_free(b);
  struct loom_file f;
  assert_int_equal(loom_file_parse(p, n, "k.loom", &f, msg), LOOM_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(loom_disasm(&f, out, msg), LOOM_OK);
  fclose(out);
  assert_non_null(strstr(text, ".step kernel Resize opset=11 in=X,-,S out=Y\n  .attr mode string \"linear\"\n"));
  assert_non_null(strstr(text, ".step kernel NonZero opset=17 in=X out=N dynamic\n"));
  assert_int_equal(loom_asm_string(text, len, "k2.s", NULL, &b, msg), LOOM_OK);
  uint8_t *q = loom_file_builder_finish(b, &m);
  loom_file_builder_free(b);
  assert_int_equal(m, n);
  assert_memory_equal(p, q, n);
  free(text), free(p), free(q);
  loom_file_free(&f);
}

static void test_asm_errors(void **state) {
  static const struct {
    const char *src, *msg;
  } cases[] = {
      {".config tiny\n.attr a int 1\n", "e.s:2:1: .attr outside a kernel step"},
      {".config tiny\n.buffer a work 64\n.tensor X input a 0 f32 [2]\n.steps\n.step kernel Abs in=X\n",
       "kernel step Abs has no results (out=)"},
      {".config tiny\n.buffer a work 64\n.tensor X input a 0 f32 [2]\n.steps\n.step kernel Abs out=X in=X\n",
       "in= must come before out="},
      {".config tiny\n.buffer a work 64\n.tensor X input a 0 f32 [2]\n.steps\n.step kernel Abs in=X out=X\n"
       "  .attr k complex 1\n", "expected an attribute kind (int, float, string, ints, floats, strings, tensor)"},
      {".config tiny\n.buffer a work 64\n.tensor X input a 0 f32 [2]\n.steps\n.step kernel Abs in=X out=X\n"
       "  .attr k string 3\n", "expected a \"string\""},
      {".config tiny\n.buffer a work 64\n.tensor X input a 0 f32 [2]\n.steps\n.step kernel Abs in=X out=-\n",
       "tensor '-' is not declared"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct loom_file_builder *b = NULL;
    char msg[LOOM_MSG_MAX] = "";
    assert_int_not_equal(loom_asm_string(cases[i].src, strlen(cases[i].src), "e.s", NULL, &b, msg), LOOM_OK);
    if (!strstr(msg, cases[i].msg)) fail_msg("case %zu: '%s' lacks '%s'", i, msg, cases[i].msg);
    loom_file_builder_free(b);
  }
}

static void test_refusals(void **state) {
  size_t n;
  uint8_t *p = sample(&n);
  size_t k = section_offset(p, LOOM_SEC_KERNELS), data = section_offset(p, LOOM_SEC_DATA);
  uint64_t io = rd64(p + k + 16), at = rd64(p + k + 24);
#define POKE32(off, v, needle)        \
  do {                                \
    uint32_t old = rd32(p + (off));   \
    wr32(p + (off), (v));             \
    fix_crc(p, n);                    \
    expect_reject(p, n, (needle));    \
    wr32(p + (off), old);             \
  } while (0)
#define POKE64(off, v, needle)        \
  do {                                \
    uint64_t old = rd64(p + (off));   \
    wr64(p + (off), (v));             \
    fix_crc(p, n);                    \
    expect_reject(p, n, (needle));    \
    wr64(p + (off), old);             \
  } while (0)
  POKE32(k, 0, "KERNELS 0: op 0 is not the start of a non-empty string in STRTAB");
  POKE32(k + 4, 0, "KERNELS 0: opset is 0");
  POKE32(k + 12, 0, "KERNELS 0: 1 operands and 0 results");
  POKE32(k + 8, 5000, "KERNELS 0: 5000 operands and 1 results");
  POKE64(k + 16, io + 2, "KERNELS 0: the tensor list at DATA offset");
  POKE64(k + 16, 1u << 30, "outside DATA or not 4-byte aligned");
  POKE32(data + io, 9, "KERNELS 0: operand 0 names tensor 9 (the file has 5)");
  POKE32(data + io + 4, NB, "KERNELS 0: result 0 names tensor 4294967295");
  POKE64(k + 24, at + 4, "KERNELS 0: 7 attributes at DATA offset");
  POKE32(k + 32, 2000, "KERNELS 0: 2000 attributes");
  POKE32(k + 36, 2, "KERNELS 0: flags 0x2: only bit 0 (dynamic) is defined");
  POKE64(k + 40, 1, "KERNELS 0: reserved field is not 0");
  size_t a = data + at;
  POKE32(a, 0, "KERNELS 0: attribute 0: name 0 is not the start");
  POKE32(a + 4, 7, "KERNELS 0: attribute 0: kind 7 is not defined");
  POKE64(a + 8, 2, "KERNELS 0: attribute 0: count of a single value is not 1");
  POKE64(a + 16, UINT64_C(1) << 32, "KERNELS 0: attribute 0: float bits above 32");
  POKE64(a + 24, 1, "KERNELS 0: attribute 0: reserved field is not 0");
  POKE64(a + 64 + 16, 3, "KERNELS 0: attribute 2: value 3 is not a STRTAB string");
  POKE64(a + 96 + 8, UINT64_C(1) << 21, "KERNELS 0: attribute 3 has 2097152 values");
  POKE64(a + 96 + 16, 4, "KERNELS 0: attribute 3: values at DATA offset 4 are outside DATA or not 8-byte aligned");
  POKE64(a + 192 + 16, 99, "KERNELS 0: attribute 6: tensor 99 does not exist (the file has 5)");
  /* a kernel step's index and slots */
  size_t s = section_offset(p, LOOM_SEC_STEPS);
  POKE32(s + 4, 2, "step 0: kernel 2 does not exist (the file has 2 KERNELS records)");
  POKE32(s + 8, 0, "step 0: a kernel step has inputs[0] = 0 (must be 0xffffffff, unused)");
  POKE64(s + 40, 8, "step 0: a kernel step has parameters (must be 0)");
  /* the same file said to be 1.2 */
  p[10] = 2;
  fix_crc(p, n);
  expect_reject(p, n, "type 10 (KERNELS) needs format version 1.3, the file is 1.2");
  p[10] = 3;
#undef POKE32
#undef POKE64
  free(p);
}

/* 1.3's dtypes and empty tensors are 1.3's: a 1.2 file with them is refused. */
static void test_version_rules(void **state) {
  struct loom_file_tensor t = {.name = 1, .dtype = LOOM_DT_I64, .user_dtype = LOOM_DT_I64, .rank = 1, .dims = {2}, .bytes = 16};
  char why[128];
  uint32_t field;
  assert_null(loom_file_tensor_problem_v(&t, 64, 3, &field, why));
  assert_non_null(loom_file_tensor_problem_v(&t, 64, 2, &field, why));
  assert_string_equal(why, "dtype i64 needs format version 1.3, the file is 1.2");
  t.dtype = t.user_dtype = LOOM_DT_F32, t.dims[0] = 0, t.bytes = 0;
  assert_null(loom_file_tensor_problem_v(&t, 64, 3, &field, why));
  assert_non_null(loom_file_tensor_problem_v(&t, 64, 2, &field, why));
  assert_string_equal(why, "dims[0] = 0 is not positive");
  t.dims[0] = -1;
  assert_non_null(loom_file_tensor_problem_v(&t, 64, 3, &field, why));
  assert_string_equal(why, "dims[0] = -1 is negative");
  t.dims[0] = 0, t.layout = LOOM_LAYOUT_NC, t.rank = 2, t.dims[1] = 16, t.layout_block = 16;
  assert_non_null(loom_file_tensor_problem_v(&t, 64, 3, &field, why)); /* blocked: never empty */
  t = (struct loom_file_tensor){.name = 1, .dtype = LOOM_DT_I64, .user_dtype = LOOM_DT_I64, .rank = 1, .dims = {2},
                                .bytes = 16, .scale = 0.5f};
  assert_non_null(loom_file_tensor_problem_v(&t, 64, 3, &field, why));
  assert_string_equal(why, "scale 0.5 on a i64 tensor (only i8, u8 and i32 are quantized)");
}

/* A runtime without the op's kernel refuses the model at load, naming the
 * step and the op; with it, the steps run and a dynamic result reports its
 * real dims. */
static void test_runtime_load(void **state) {
  static const char src[] = ".config tiny\n.buffer a work 256\n.tensor x input a 0 f32 [2,3]\n"
                            ".tensor y output a 32 f32 [2,3]\n.tensor nz output a 64 i64 [2,6]\n.steps\n"
                            ".step kernel Elu opset=6 in=x out=y\n  .attr alpha float 0.25\n"
                            ".step kernel NonZero opset=13 in=x out=nz dynamic\n";
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  size_t n;
  assert_int_equal(loom_asm_string(src, sizeof src - 1, "k.s", NULL, &b, msg), LOOM_OK);
  uint8_t *p = loom_file_builder_finish(b, &n);
  loom_file_builder_free(b);
  loom_device *dev;
  loom_model *m = NULL;
  assert_int_equal(loom_device_open("fsim", "config=tiny", &dev, msg), LOOM_OK);
  loom_status st = loom_model_load_memory(dev, p, n, "k.loom", &m, msg);
  if (!loom_kernel_find("Elu")) {
    assert_int_equal(st, LOOM_E_UNSUPPORTED);
    assert_string_equal(msg, "k.loom: step 0: no kernel for op Elu in this runtime");
  } else {
    assert_int_equal(st, LOOM_OK);
    float x[6] = {1, 0, -2, 0, 3, 0}, y[6];
    int64_t dims[2] = {2, 3};
    assert_int_equal(loom_model_set_input(m, "x", LOOM_DT_F32, 2, dims, x), LOOM_OK);
    assert_int_equal(loom_model_run(m, 0), LOOM_OK);
    assert_int_equal(loom_model_get_output(m, "y", y, sizeof y), LOOM_OK);
    assert_true(y[2] < -0.2f && y[2] > -0.25f && y[0] == 1.0f); /* 0.25 * (e^-2 - 1) */
    const struct loom_tensor_info *nz = loom_model_output(m, 1);
    assert_int_equal(nz->dims[1], 3); /* three non-zeros of six: the real dims */
    int64_t got[6];
    assert_int_equal(loom_model_get_output(m, "nz", got, sizeof got), LOOM_OK);
    int64_t want[6] = {0, 0, 1, 0, 2, 1}; /* rows, then columns of (0,0) (0,2) (1,1) */
    assert_memory_equal(got, want, sizeof want);
  }
  loom_model_free(m);
  loom_device_close(dev);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_asm_roundtrip),  cmocka_unit_test(test_asm_errors),
      cmocka_unit_test(test_refusals),      cmocka_unit_test(test_version_rules), cmocka_unit_test(test_runtime_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
