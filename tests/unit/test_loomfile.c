/*
 * test_loomfile.c - the .loom reader and builder: round trips.
 *
 * One sample file built with the builder (tests/support/loomsample.c)
 * exercises every record type and layout; it must parse back field for
 * field, be written and read back through a file, and be rebuilt byte for
 * byte from its parsed form.  The same for format 1.1's HOSTCODE section,
 * whose own validation rules are broken one at a time at the end.  The
 * rules of the other sections: test_loomfile_refusals.c.
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

#include "filebytes.h"
#include "loomsample.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"

#define NB LOOM_FILE_NO_BUFFER

/* ---- round trip ---- */

static void test_roundtrip(void **state) {
  size_t n;
  uint8_t *p = loomsample(&n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.version_major, 1);
  assert_int_equal(f.version_minor, 0);
  assert_int_equal(f.config_hash, LOOM_CONFIG_TINY_HASH);
  assert_int_equal(f.isa_version, LOOM_ISA_VERSION);
  assert_int_equal(f.file_size, n);
  assert_int_equal(f.insn_count, 3);
  assert_int_equal(f.buffer_count, 3);
  assert_int_equal(f.tensor_count, 5);
  assert_int_equal(f.job_count, 1);
  assert_int_equal(f.step_count, 2);
  assert_string_equal(loom_file_string(&f, f.buffers[0].name), "weights");
  assert_string_equal(loom_file_string(&f, f.buffers[1].name), "act");
  assert_int_equal(f.buffers[1].kind, LOOM_BUFKIND_WORK);
  assert_int_equal(f.buffers[1].size, 4096);
  assert_int_equal(f.buffers[1].align, 4096);
  for (int i = 0; i < 64; i++) assert_int_equal(f.data[f.buffers[0].data_offset + i], (uint8_t)(i * 7));
  assert_int_equal(f.data[f.buffers[2].data_offset + 4], 2);
  const struct loom_file_tensor *y = &f.tensors[1];
  assert_string_equal(loom_file_string(&f, y->name), "y");
  assert_int_equal(y->role, LOOM_ROLE_OUTPUT);
  assert_int_equal(y->user_dtype, LOOM_DT_F32);
  assert_true(y->scale == 0.5f);
  assert_int_equal(y->zero_point, -3);
  assert_int_equal(y->offset, 64);
  assert_int_equal(y->bytes, 8);
  assert_int_equal(f.tensors[2].bytes, 1 * 3 * 3 * 3 * 8);
  assert_int_equal(f.tensors[3].bytes, 2 * 2 * 16 * 4);
  assert_int_equal(f.tensors[2].dims[1], 20);
  assert_int_equal(f.tensors[2].dims[4], 0);
  assert_int_equal(f.jobs[0].insn_count, 3);
  assert_int_equal(f.jobs[0].segments[3], 2);
  assert_int_equal(f.jobs[0].segments[2], NB);
  assert_int_equal(f.steps[1].kind, LOOM_STEP_HOST);
  assert_int_equal(f.steps[1].index, 7);
  assert_int_equal(f.steps[1].inputs[2], 3);
  assert_int_equal(f.steps[1].param_size, 16);
  assert_int_equal(f.data[f.steps[1].param_offset], 9);
  struct loom_insn d;
  assert_int_equal(loom_insn_decode(f.insns + 16, &d, NULL), LOOM_ERR_NONE);
  assert_int_equal(d.opcode, LOOM_OP_GEMM);
  assert_int_equal(d.gemm.iter_out, 4);
  assert_int_equal(loom_file_check_insns(&f, "m.loom", msg), LOOM_OK);
  loom_file_free(&f);
  free(p);
}

static void test_builder_write_and_read(void **state) {
  char path[] = "/tmp/test_loomfile_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  struct loom_file_builder *b = loomsample_builder();
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_builder_write(b, path, msg), LOOM_OK);
  struct loom_file f;
  assert_int_equal(loom_file_read(path, &f, msg), LOOM_OK);
  assert_int_equal(f.tensor_count, 5);
  loom_file_free(&f);
  /* an invalid record is refused before anything is written */
  struct loom_file_tensor bad = {.name = loom_fb_string(b, "bad"), .dtype = LOOM_DT_I8, .user_dtype = LOOM_DT_I8,
                                 .rank = 1, .buffer = 9, .dims = {4}};
  loom_fb_tensor(b, &bad);
  assert_int_equal(loom_file_builder_write(b, path, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "refusing to write an invalid file"));
  assert_non_null(strstr(msg, "tensor 5 'bad': buffer 9 is not a buffer index"));
  loom_file_builder_free(b);
  unlink(path);
  assert_int_equal(loom_file_read(path, &f, msg), LOOM_E_NOTFOUND);
}

static void test_strings_interned(void **state) {
  struct loom_file_builder *b = loom_file_builder_new(0);
  uint32_t a = loom_fb_string(b, "alpha"), c = loom_fb_string(b, "beta");
  assert_int_equal(loom_fb_string(b, ""), 0);
  assert_int_equal(a, 1);
  assert_int_equal(loom_fb_string(b, "alpha"), a);
  char name[32];
  for (int i = 0; i < 1000; i++) snprintf(name, sizeof name, "n%d", i), loom_fb_string(b, name);
  assert_int_equal(loom_fb_string(b, "beta"), c);
  assert_int_equal(loom_fb_string(b, "n500"), loom_fb_string(b, "n500"));
  loom_file_builder_free(b);
}

static void test_tensor_bytes(void **state) {
  struct loom_file_tensor t = {.dtype = LOOM_DT_F32, .rank = 3, .dims = {2, 3, 4}};
  assert_int_equal(loom_file_tensor_bytes(&t), 96);
  t.rank = 0;
  assert_int_equal(loom_file_tensor_bytes(&t), 4);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I8, .layout = LOOM_LAYOUT_NCHWC, .layout_block = 16, .rank = 4,
                                .dims = {2, 17, 5, 7}};
  assert_int_equal(loom_file_tensor_bytes(&t), 2 * 2 * 5 * 7 * 16);
  t.rank = 3;
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I32, .layout = LOOM_LAYOUT_NC, .layout_block = 8, .rank = 2,
                                .dims = {3, 8}};
  assert_int_equal(loom_file_tensor_bytes(&t), 3 * 8 * 4);
  t = (struct loom_file_tensor){.dtype = LOOM_DT_I8, .rank = 3, .dims = {INT64_C(1) << 40, 1 << 20, 1 << 10}};
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
  t.dims[1] = -1;
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
}

/* ---- HOSTCODE (format 1.1) ---- */

/* The sample plus native code for its host step (step 1): a fake image
 * (an ELF magic and zeros; the parser checks no more of it). */
static uint8_t *sample_hostcode(size_t *n) {
  struct loom_file_builder *b = loomsample_builder();
  uint8_t image[80] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  for (int i = 8; i < 80; i++) image[i] = (uint8_t)i;
  struct loom_file_hostcode_entry e = {.step = 1, .symbol = loom_fb_string(b, "loom_step_1"), .signature = 0x1234};
  assert_int_equal(loom_fb_hostcode(b, loom_fb_string(b, "aarch64-unknown-linux-gnu"), loom_fb_string(b, "generic"),
                                    &e, 1, image, sizeof image), 0);
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

static void test_hostcode_roundtrip(void **state) {
  size_t n;
  uint8_t *p = sample_hostcode(&n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(p, n, "m.loom", &f, msg)) fail_msg("%s", msg);
  assert_int_equal(f.version_minor, 1);
  assert_int_equal(rd32(p + 36), 8); /* eight sections */
  assert_non_null(f.hostcode);
  assert_string_equal(loom_file_string(&f, f.hostcode->triple), "aarch64-unknown-linux-gnu");
  assert_string_equal(loom_file_string(&f, f.hostcode->cpu), "generic");
  assert_int_equal(f.hostcode->abi, LOOM_HOSTCODE_ABI);
  assert_int_equal(f.hostcode->entry_count, 1);
  assert_int_equal(f.hostcode->image_offset, 56);
  assert_int_equal(f.hostcode->image_size, 80);
  assert_int_equal(f.hostcode_entries[0].step, 1);
  assert_string_equal(loom_file_string(&f, f.hostcode_entries[0].symbol), "loom_step_1");
  assert_true(f.hostcode_entries[0].signature == 0x1234);
  assert_int_equal(f.hostcode_image[8], 8);
  assert_int_equal(f.hostcode_image[79], 79);
  assert_int_equal(f.step_count, 2); /* everything else as before */
  loom_file_free(&f);
  free(p);
  /* the sample without HOSTCODE stays a 1.0 file */
  p = loomsample(&n);
  assert_int_equal(p[10], 0);
  assert_int_equal(rd32(p + 36), 7);
  free(p);
}

/* A builder made from a parsed file writes the same bytes; HOSTCODE is
 * dropped and can be added again. */
static void test_builder_from(void **state) {
  size_t n, m, k;
  uint8_t *p = loomsample(&n), *h = sample_hostcode(&k);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "m.loom", &f, msg), LOOM_OK);
  struct loom_file_builder *b = loom_file_builder_from(&f);
  assert_non_null(b);
  uint8_t *q = loom_file_builder_finish(b, &m);
  assert_int_equal(m, n);
  assert_memory_equal(p, q, n);
  free(q);
  assert_int_equal(loom_fb_string(b, "weights"), f.buffers[0].name); /* interned again */
  loom_file_builder_free(b);
  loom_file_free(&f);
  assert_int_equal(loom_file_parse(h, k, "m.loom", &f, msg), LOOM_OK);
  b = loom_file_builder_from(&f);
  q = loom_file_builder_finish(b, &m);
  assert_int_equal(q[10], 0); /* back to 1.0 */
  loom_file_free(&f);
  assert_int_equal(loom_file_parse(q, m, "m.loom", &f, msg), LOOM_OK);
  assert_null(f.hostcode);
  loom_file_free(&f);
  loom_file_builder_free(b);
  free(p), free(q), free(h);
}

static void test_hostcode_refusals(void **state) {
  size_t n;
  uint8_t *p = sample_hostcode(&n);
  size_t hc = section_offset(p, LOOM_SEC_HOSTCODE), e = hc + 32;
  p[10] = 0;
  expect_reject(p, n, "section 7: type 8 (HOSTCODE) needs format version 1.1, the file is 1.0");
  p[10] = 1;
#define POKE32(off, v, ...)          \
  do {                               \
    uint32_t old = rd32(p + (off));  \
    wr32(p + (off), (v));            \
    fix_crc(p, n);                   \
    expect_reject(p, n, __VA_ARGS__); \
    wr32(p + (off), old);            \
  } while (0)
  POKE32(hc, 3, "HOSTCODE: triple 3 is not the start of a non-empty string");
  POKE32(hc + 8, 2, "HOSTCODE: entry-point ABI 2 is not supported (this reader implements 1)");
  POKE32(hc + 12, 1000, "HOSTCODE: 1000 entries do not fit the section");
  POKE32(hc + 12, 2, "HOSTCODE: image_offset 56 is not 80");
  POKE32(hc + 16, 64, "HOSTCODE: image_offset 64 is not 56");
  POKE32(hc + 24, 72, "HOSTCODE: image_size 72 does not reach the end of the section");
  POKE32(hc + 56, 0x464c457e, "HOSTCODE: the image is not an ELF file");
  POKE32(e, 0, "HOSTCODE entry 0: step 0 is not a host step");
  POKE32(e, 2, "HOSTCODE entry 0: step 2 is not a host step");
  POKE32(e + 4, 2, "HOSTCODE entry 0: symbol 2 is not the start of a non-empty string");
  POKE32(e + 16, 1, "HOSTCODE entry 0: flags are not 0");
  POKE32(e + 20, 1, "HOSTCODE entry 0: reserved field is not 0");
  size_t t = section_entry(p, LOOM_SEC_HOSTCODE);
  uint64_t size = rd64(p + t + 16);
  wr64(p + t + 16, 16);
  fix_crc(p, n);
  expect_reject(p, n, "HOSTCODE: 16 bytes is shorter than its 32-byte header");
  wr64(p + t + 16, size);
#undef POKE32
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_builder_write_and_read),
      cmocka_unit_test(test_strings_interned),
      cmocka_unit_test(test_tensor_bytes),
      cmocka_unit_test(test_hostcode_roundtrip),
      cmocka_unit_test(test_builder_from),
      cmocka_unit_test(test_hostcode_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
